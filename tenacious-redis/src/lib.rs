//! Provider guards shared across processes through Redis (feature `redis`).
//!
//! A [`RetryBudget`](tenacious_runtime::RetryBudget), [`Cooldown`](tenacious_runtime::Cooldown),
//! [`Throttle`](tenacious_runtime::Throttle) or [`Breaker`](tenacious_runtime::Breaker) declared as
//! a `static` keeps its state in process. Bound at start-up to a name in a
//! [`Store`], it shares that state with every process bound to the same
//! name of the same Redis: one budget, one cooldown, one throttle rate,
//! one breaker state for the fleet.
//!
//! ```no_run
//! use tenacious::redis::Store;
//! use tenacious::{Breaker, Cooldown, Policy, RetryBudget, Throttle};
//!
//! static BUDGET: RetryBudget = RetryBudget::new();
//! static COOLDOWN: Cooldown = Cooldown::new();
//! static THROTTLE: Throttle = Throttle::new();
//! static BREAKER: Breaker = Breaker::new();
//! const POLICY: Policy = Policy::new()
//!     .budget(&BUDGET)
//!     .cooldown(&COOLDOWN)
//!     .throttle(&THROTTLE)
//!     .breaker(&BREAKER);
//!
//! # async fn start() -> Result<(), Box<dyn std::error::Error>> {
//! // Never fails for a server that is down: the guards keep to their
//! // local state until it answers.
//! let store = Store::connect("redis://127.0.0.1:6379").await?;
//! store.bind(&BUDGET, "openai")?;
//! store.bind(&COOLDOWN, "openai")?;
//! store.bind(&THROTTLE, "openai")?;
//! store.bind(&BREAKER, "openai")?;
//! # Ok(()) }
//! ```
//!
//! # How it is shared
//!
//! Every decision that needs the fleet's state is one Lua script, run with
//! `EVALSHA` (loaded again after a `NOSCRIPT`, as after a restart), that
//! reads the server's `TIME`: the clocks of the clients never enter a
//! shared time, so a client whose clock is behind cannot shorten a
//! cooldown. Scripts answer in durations from the server's now, which a
//! client adds to its own.
//!
//! What stays in process, so an attempt does not pay a round trip:
//!
//! | guard | in process | a round trip |
//! |---|---|---|
//! | `RetryBudget` | a first attempt; refunds, sent in one batch per [`refresh`](StoreConfig::refresh) | each retry takes its tokens |
//! | `Cooldown` | open: a mirror of the shared reopening time, read every `refresh` and pushed with every closing | closed: a waiter's turn |
//! | `Throttle` | off; a lease of tokens taken in a batch (50 ms of the rate) | when the lease is spent; with `probe_first`, before the fleet's first answer |
//! | `Breaker` | closed or open: a mirror of the shared state; outcomes sent in one batch per `refresh` | half-open: a probe's slot |
//!
//! # Keys
//!
//! One key per guard, `{prefix}:{name}:{kind}`, the name in braces as a
//! hash tag, so the keys of one provider's guards share a slot on Redis
//! Cluster ([`Store::connect_cluster`]): `tenacious:{openai}:budget` (a
//! string, the tokens left), `…:cooldown`, `…:throttle`, `…:breaker`
//! (hashes); beside each, `…:budget:settings` and so on, the settings
//! its scripts take (see [Settings](#settings)). Each expires when
//! idle: a budget after [`BUDGET_IDLE`] without a retry or refund (a
//! missing budget starts full), a cooldown [`COOLDOWN_IDLE`] after it
//! reopens, a throttle after [`THROTTLE_IDLE`], a breaker after
//! [`BREAKER_IDLE`] beyond its window and open period, settings after
//! [`SETTINGS_IDLE`] that no process bound with them keeps them alive.
//!
//! # Settings
//!
//! The guards bound to one name and kind share one state, so they take
//! one set of settings: a budget's capacity; a cooldown's spacing; a
//! throttle's `min_rate` and `max_rate`; a breaker's ratio, window,
//! minimum throughput, break and probes. (A throttle's `probe_first` wait
//! is each process's own: the fleet sends one probe, and each process
//! holds its calls for that probe's answer up to its own wait.) Two guards of one
//! [`Store`] bound to one name with other settings are a mistake in one
//! program: the second [`bind`](Store::bind) is refused,
//! [`BindError::OtherSettings`].
//!
//! Across processes, **the settings written first hold**. A store checks
//! each name it binds at its first refresh (or [`Store::sync`]), when it
//! comes back up, and every 10 s: it writes its guard's settings to the
//! name's settings key if there are none, and keeps them alive
//! ([`SETTINGS_IDLE`]) if they are its own. A store that finds others
//! there decides in Redis with the fleet's settings from then on (its
//! own still hold while Redis is down), logs it once (WARN, target
//! `tenacious::redis`) and counts it in
//! [`StoreStats::settings_mismatches`]; once and again if they agreed
//! meanwhile. So two processes bound to one budget with capacities 1 000
//! and 10 share the 1 000 tokens of the first to check, not the smaller
//! bucket both would clamp it to. A change of settings rolled out takes
//! hold once no process of the old ones has run for [`SETTINGS_IDLE`]:
//! the next check then writes the new ones. Until a store's first check,
//! its decisions take its own settings.
//!
//! # When Redis fails
//!
//! No decision waits longer than [`timeout`](StoreConfig::timeout)
//! (default 50 ms) for Redis, on any runtime or none: the bound is kept by
//! a thread of the store's own (`tenacious-store-timer`), so a blocking
//! call on the only worker of a busy runtime, or an async call while
//! every worker of the store's runtime is blocked, still decides within
//! it. A decision that fails or times out is taken
//! by the guard's local state, and the store counts as down: until a
//! `PING` every `refresh` answers again, every guard decides in process,
//! without trying Redis. The change is logged once per transition
//! (`tracing`, target `tenacious::redis`: WARN when down, INFO when up),
//! counted in [`Store::stats`] and, with feature `metrics`, in
//! `tenacious_store_{down,up}_total` and `tenacious_store_local_decisions_total`.
//! A script Redis answers with an error about its key (a key of the wrong
//! type, data no script wrote) is no outage: that decision is taken in
//! process and counted as a failure, the store stays up, and the first
//! such error is logged (WARN).
//! Back up, each guard pushes what it learned meanwhile (a cooldown's
//! reopening time, a breaker's counts) and reads the shared state again
//! before the store counts as up, so no decision reaches Redis before it;
//! a Redis restarted empty starts each guard afresh (a budget full). A
//! decision that timed out may still be applied when a slow Redis gets to
//! it: a budget's retry is then paid twice, in Redis and in process, which
//! errs on the side of fewer retries.
//!
//! While down, each process keeps to its own limits: the fleet's are at
//! most the number of processes times one guard's (a budget of 500
//! tokens over 4 processes allows up to 4 × 100 retries; a throttle's rate
//! is each process's own).
//!
//! This crate is the store; the guards reach it only through the core's
//! store hook (`tenacious_runtime::store`), so the core runtime carries
//! no Redis code. Users name it `tenacious::redis`, with the facade's
//! feature `redis`.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ::redis as rs;

use tenacious_runtime::store::StoreSlot;

mod breaker;
mod budget;
mod cooldown;
mod scripts;
mod settings;
mod throttle;
mod timer;

#[doc(hidden)]
pub use settings::{Agreed, Settings, Unit};

/// How long a budget's key lives without a retry or a refund: 1 hour.
pub const BUDGET_IDLE: Duration = Duration::from_secs(3600);
/// How long a cooldown's key lives after it reopens: 60 s.
pub const COOLDOWN_IDLE: Duration = Duration::from_secs(60);
/// How long a throttle's key lives without a call: 10 minutes.
pub const THROTTLE_IDLE: Duration = Duration::from_secs(600);
/// How long a breaker's key lives beyond its window and open period
/// without an outcome: 60 s.
pub const BREAKER_IDLE: Duration = Duration::from_secs(60);
/// How long a name's settings key lives once no store bound with those
/// settings checks it (each does every 10 s): 60 s, or three of the
/// checking store's [`refresh`](StoreConfig::refresh) periods if longer.
/// See [Settings](self#settings).
///
/// ```
/// use std::time::Duration;
/// use tenacious::redis::SETTINGS_IDLE;
///
/// assert_eq!(SETTINGS_IDLE, Duration::from_secs(60));
/// ```
pub const SETTINGS_IDLE: Duration = Duration::from_secs(60);
/// How often a store checks each name's settings while up.
const CHECK_EVERY: Duration = Duration::from_secs(10);

/// A connection to the Redis that a fleet's guards share, and the guards
/// bound to it. See the [module's docs](self).
///
/// Cloning it is cheap: the clones share the connection. The connection
/// and a task that keeps the guards' mirrors fresh run on the tokio
/// runtime [`connect`](Store::connect) was called on; a blocking call
/// (`retry_blocking`, a sync `#[retry]` fn) on any thread uses them too,
/// except on the thread of a current-thread runtime, where it decides in
/// process (blocking that thread would stop the runtime that answers).
///
/// ```no_run
/// use std::time::Duration;
/// use tenacious::redis::{Store, StoreConfig};
/// use tenacious::Cooldown;
///
/// static OPENAI: Cooldown = Cooldown::new();
///
/// # async fn start() -> Result<(), Box<dyn std::error::Error>> {
/// let config = StoreConfig::new().timeout(Duration::from_millis(20));
/// let store = Store::connect_with("redis://10.0.0.5:6379", config).await?;
/// store.bind(&OPENAI, "openai")?;
/// if !store.is_up() {
///     eprintln!("Redis is down: each process keeps to its own cooldown for now");
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Store {
    link: Arc<Link>,
}

/// The settings of a [`Store`].
///
/// ```
/// use std::time::Duration;
/// use tenacious::redis::StoreConfig;
///
/// let config = StoreConfig::new()
///     .prefix("agents")
///     .timeout(Duration::from_millis(20))
///     .refresh(Duration::from_millis(50));
/// assert_eq!(config.get_timeout(), Duration::from_millis(20));
/// assert_eq!(StoreConfig::new().get_prefix(), "tenacious");
/// ```
#[derive(Debug, Clone)]
pub struct StoreConfig {
    prefix: String,
    timeout: Duration,
    refresh: Duration,
}

impl StoreConfig {
    /// The defaults: prefix `tenacious`, [`TIMEOUT`](StoreConfig::TIMEOUT),
    /// [`REFRESH`](StoreConfig::REFRESH).
    #[must_use]
    pub fn new() -> Self {
        Self {
            prefix: "tenacious".to_owned(),
            timeout: Self::TIMEOUT,
            refresh: Self::REFRESH,
        }
    }

    /// The longest a decision waits for Redis: 50 ms.
    pub const TIMEOUT: Duration = Duration::from_millis(50);
    /// How often the mirrors are read and batches sent: 100 ms.
    pub const REFRESH: Duration = Duration::from_millis(100);

    /// The first part of every key. Default `tenacious`.
    #[must_use]
    pub fn prefix(self, prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
            ..self
        }
    }

    /// The longest a decision (or a connection attempt) waits for Redis
    /// before the guard decides in process. Default
    /// [`TIMEOUT`](StoreConfig::TIMEOUT); at least 1 ms.
    #[must_use]
    pub fn timeout(self, timeout: Duration) -> Self {
        Self {
            timeout: timeout.max(Duration::from_millis(1)),
            ..self
        }
    }

    /// How often each guard's mirror is read from Redis and its batch sent
    /// (a budget's refunds, a breaker's outcomes), and how often a store
    /// that is down tries Redis again. Default
    /// [`REFRESH`](StoreConfig::REFRESH); at least 1 ms.
    #[must_use]
    pub fn refresh(self, refresh: Duration) -> Self {
        Self {
            refresh: refresh.max(Duration::from_millis(1)),
            ..self
        }
    }

    /// The prefix set by [`prefix`](StoreConfig::prefix).
    #[must_use]
    pub fn get_prefix(&self) -> &str {
        &self.prefix
    }

    /// The timeout set by [`timeout`](StoreConfig::timeout).
    #[must_use]
    pub const fn get_timeout(&self) -> Duration {
        self.timeout
    }

    /// The period set by [`refresh`](StoreConfig::refresh).
    #[must_use]
    pub const fn get_refresh(&self) -> Duration {
        self.refresh
    }
}

impl Default for StoreConfig {
    /// [`StoreConfig::new`].
    fn default() -> Self {
        Self::new()
    }
}

/// What a [`Store`] counted since it connected.
///
/// ```no_run
/// use tenacious::redis::{Store, StoreStats};
///
/// # async fn report(store: &Store) {
/// let stats: StoreStats = store.stats();
/// println!(
///     "up {}, {} round trips, {} decided in process, down {} times",
///     stats.up, stats.round_trips, stats.local_decisions, stats.downs
/// );
/// if stats.settings_mismatches > 0 {
///     eprintln!("a guard is bound with other settings than the fleet's: see the WARN log");
/// }
/// assert_eq!(StoreStats::default().settings_mismatches, 0);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StoreStats {
    /// Whether Redis answers now.
    pub up: bool,
    /// Script calls Redis answered.
    pub round_trips: u64,
    /// Script calls that failed or ran out of the timeout.
    pub failures: u64,
    /// Of those, the ones that ran out of the timeout.
    pub timeouts: u64,
    /// Decisions a bound guard took in process because Redis was down.
    pub local_decisions: u64,
    /// Times the store went down.
    pub downs: u64,
    /// Times it came back up.
    pub ups: u64,
    /// Times a bound name's settings in Redis were found to differ from
    /// its guard's own: counted (and logged) once per name, and again if
    /// they agreed meanwhile; the guard then decides in Redis with the
    /// fleet's. 0 at first, and in a fleet that agrees. See
    /// [Settings](self#settings).
    pub settings_mismatches: u64,
}

/// Why [`Store::connect`] failed: the URL is not one redis-rs can use.
/// (An unreachable server is no error: the guards decide in process until
/// it answers.)
///
/// ```
/// use tenacious::redis::Store;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let error = Store::connect("not a url").await.unwrap_err();
/// assert!(error.to_string().starts_with("cannot use this Redis URL"));
/// # }
/// ```
#[derive(Debug)]
pub struct StoreError(rs::RedisError);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot use this Redis URL: {}", self.0)
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Why [`Store::bind`] refused a guard.
///
/// ```no_run
/// use tenacious::redis::{BindError, Store};
/// use tenacious::RetryBudget;
///
/// static BUDGET: RetryBudget = RetryBudget::new();
///
/// # async fn start(store: &Store) {
/// assert!(matches!(store.bind(&BUDGET, "a{b}"), Err(BindError::BadName(_))));
/// store.bind(&BUDGET, "search").unwrap();
/// assert_eq!(store.bind(&BUDGET, "search"), Err(BindError::AlreadyBound));
///
/// // One name, one set of settings: 10 tokens where 500 are bound.
/// static SMALL: RetryBudget = RetryBudget::with_capacity(10);
/// assert!(matches!(
///     store.bind(&SMALL, "search"),
///     Err(BindError::OtherSettings { kind: "budget", .. })
/// ));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BindError {
    /// The guard is bound already (to this store or another): a guard is
    /// bound once, at start-up, for the life of the process.
    AlreadyBound,
    /// The name is empty, longer than 200 bytes, or holds a brace (it is
    /// the key's hash tag). A config's guard names are held to the same
    /// rule (`tenacious::config`, feature `config`).
    BadName(String),
    /// A guard of the same kind is bound to this name in this store with
    /// other settings: the guards bound to one name share one state, so
    /// they take one set of settings (see [Settings](self#settings)).
    /// Bind guards with the same settings, or give them other names.
    OtherSettings {
        /// The name both were bound to.
        name: String,
        /// `budget`, `cooldown`, `throttle` or `breaker`.
        kind: &'static str,
        /// The settings bound to it first, as `capacity 1000`.
        bound: String,
        /// This guard's.
        given: String,
    },
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyBound => f.write_str("this guard is bound to a store already"),
            Self::BadName(name) => {
                write!(f, "{name:?} {}", tenacious_runtime::store::hooks::REFUSED)
            }
            Self::OtherSettings {
                name,
                kind,
                bound,
                given,
            } => write!(
                f,
                "a {kind} bound to {name:?} in this store has other settings ({bound}) than \
                 this one ({given}): the guards bound to one name share one state, so give \
                 them the same settings or other names"
            ),
        }
    }
}

impl std::error::Error for BindError {}

/// A guard a [`Store`] can share: [`RetryBudget`](tenacious_runtime::RetryBudget),
/// [`Cooldown`](tenacious_runtime::Cooldown), [`Throttle`](tenacious_runtime::Throttle),
/// [`Breaker`](tenacious_runtime::Breaker). Sealed.
pub trait Shareable: sealed::Sealed + Sync + 'static {
    /// Binds `self` to `key` of `link`'s Redis, its scripts taking the
    /// settings `agreed` on.
    #[doc(hidden)]
    fn bind_to(
        &'static self,
        link: &Arc<Link>,
        key: String,
        agreed: Arc<Agreed>,
    ) -> Result<(), BindError>;
    /// The settings its scripts take.
    #[doc(hidden)]
    fn settings(&self) -> Settings;
    /// What the key names: `budget`, `cooldown`, `throttle`, `breaker`.
    #[doc(hidden)]
    fn kind(&self) -> &'static str;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for tenacious_runtime::RetryBudget {}
    impl Sealed for tenacious_runtime::Cooldown {}
    impl Sealed for tenacious_runtime::Throttle {}
    impl Sealed for tenacious_runtime::Breaker {}
}

impl Store {
    /// Connects to the Redis at `url` (`redis://host:port/db`) with
    /// [`StoreConfig::new`]. See [`connect_with`](Store::connect_with).
    ///
    /// # Errors
    ///
    /// Only for a URL redis-rs cannot use.
    ///
    /// ```no_run
    /// use tenacious::redis::Store;
    ///
    /// # async fn start() -> Result<(), tenacious::redis::StoreError> {
    /// let store = Store::connect("redis://127.0.0.1:6379").await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, StoreConfig::new()).await
    }

    /// Connects to the Redis at `url`, waiting at most the config's
    /// [`timeout`](StoreConfig::timeout) for a first `PING`. A server that
    /// does not answer is no error: the store starts down, its guards
    /// decide in process, and it tries again every
    /// [`refresh`](StoreConfig::refresh). Must be called on a tokio
    /// runtime, which then runs the connection.
    ///
    /// # Errors
    ///
    /// Only for a URL redis-rs cannot use.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::redis::{Store, StoreConfig};
    /// use tenacious::{Policy, RetryBudget};
    ///
    /// static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    /// const POLICY: Policy = Policy::new().max(10).base(Duration::ZERO).budget(&BUDGET);
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // Nothing listens on port 1: the store starts down, no error.
    /// let config = StoreConfig::new().timeout(Duration::from_millis(20));
    /// let store = Store::connect_with("redis://127.0.0.1:1", config).await.unwrap();
    /// assert!(!store.is_up());
    /// store.bind(&BUDGET, "search").unwrap();
    ///
    /// // The budget keeps to its own 10 tokens meanwhile: 2 retries.
    /// let mut attempts = 0;
    /// let result = POLICY
    ///     .retry(|| {
    ///         attempts += 1;
    ///         async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionReset)) }
    ///     })
    ///     .await;
    /// assert!(result.is_err());
    /// assert_eq!(attempts, 3);
    /// assert_eq!(store.stats().local_decisions, 3);
    /// # }
    /// ```
    pub async fn connect_with(url: &str, config: StoreConfig) -> Result<Self, StoreError> {
        let client = rs::Client::open(url).map_err(StoreError)?;
        let manager = rs::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(config.timeout))
            .set_response_timeout(Some(config.timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(10))
            .set_max_delay(config.refresh);
        let conn = rs::aio::ConnectionManager::new_lazy_with_config(client, manager)
            .map_err(StoreError)?;
        Ok(Self::start(Conn::Single(conn), config).await)
    }

    /// Connects to a Redis Cluster through any of its `nodes`
    /// (`redis://host:port` each) with [`StoreConfig::new`]. See
    /// [`connect_cluster_with`](Store::connect_cluster_with).
    ///
    /// # Errors
    ///
    /// Only for URLs redis-rs cannot use.
    ///
    /// ```no_run
    /// use tenacious::redis::Store;
    ///
    /// # async fn start() -> Result<(), tenacious::redis::StoreError> {
    /// let store = Store::connect_cluster(&["redis://10.0.0.5:7000", "redis://10.0.0.6:7000"]).await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect_cluster(nodes: &[&str]) -> Result<Self, StoreError> {
        Self::connect_cluster_with(nodes, StoreConfig::new()).await
    }

    /// Connects to a Redis Cluster through any of its `nodes`, as
    /// [`connect_with`](Store::connect_with) does to one server: a cluster
    /// that does not answer is no error. Each guard's key is hash-tagged
    /// by its name, so each script runs on the one node that holds the
    /// slot of its key, and the keys of one provider's guards share it.
    ///
    /// # Errors
    ///
    /// Only for URLs redis-rs cannot use.
    pub async fn connect_cluster_with(
        nodes: &[&str],
        config: StoreConfig,
    ) -> Result<Self, StoreError> {
        let client = rs::cluster::ClusterClient::builder(nodes.iter().copied())
            .connection_timeout(config.timeout)
            .response_timeout(config.timeout)
            .retries(1)
            .build()
            .map_err(StoreError)?;
        let cluster = rs::cluster::ClusterConfig::new()
            .set_connection_timeout(config.timeout)
            .set_response_timeout(config.timeout);
        let conn = client.get_pending_async_connection_with_config(cluster);
        Ok(Self::start(Conn::Cluster(conn), config).await)
    }

    /// The store on `conn`: up if a first `PING` answers within the
    /// timeout, and its refresh loop spawned.
    async fn start(conn: Conn, config: StoreConfig) -> Self {
        let link = Arc::new(Link {
            conn,
            handle: tokio::runtime::Handle::current(),
            timeout: config.timeout,
            refresh: config.refresh,
            prefix: config.prefix,
            up: AtomicBool::new(false),
            bad_key_logged: AtomicBool::new(false),
            members: Mutex::new(Vec::new()),
            agreed: Mutex::new(Vec::new()),
            counts: Counts::default(),
        });
        if link.ping().await {
            link.up.store(true, Ordering::Release);
        } else {
            link.counts.downs.fetch_add(1, Ordering::Relaxed);
            #[cfg(feature = "metrics")]
            metrics::counter!("tenacious_store_down_total").increment(1);
            tracing::warn!(
                target: "tenacious::redis",
                "redis store unreachable at start-up; the guards decide in process until it answers"
            );
        }
        tokio::spawn(refresh_loop(Arc::downgrade(&link)));
        Self { link }
    }

    /// Binds `guard` to `name`: from now on it shares its state with every
    /// process bound to the same name and kind in the same Redis, under
    /// the key `{prefix}:{name}:{kind}`.
    ///
    /// # Errors
    ///
    /// [`BindError::AlreadyBound`] for a guard bound before,
    /// [`BindError::BadName`] for an empty name, one over 200 bytes or one
    /// with a brace, [`BindError::OtherSettings`] for a guard of a kind
    /// bound to this name in this store before with other settings
    /// (across processes, see [Settings](self#settings)).
    ///
    /// ```no_run
    /// use tenacious::redis::Store;
    /// use tenacious::{Breaker, Throttle};
    ///
    /// static RATE: Throttle = Throttle::new();
    /// static HEALTH: Breaker = Breaker::new();
    ///
    /// # async fn start(store: &Store) -> Result<(), tenacious::redis::BindError> {
    /// store.bind(&RATE, "anthropic")?; // tenacious:{anthropic}:throttle
    /// store.bind(&HEALTH, "anthropic")?; // tenacious:{anthropic}:breaker
    /// # Ok(()) }
    /// ```
    pub fn bind<G: Shareable>(&self, guard: &'static G, name: &str) -> Result<(), BindError> {
        if tenacious_runtime::store::hooks::check_name(name).is_err() {
            return Err(BindError::BadName(name.to_owned()));
        }
        let key = format!("{}:{{{name}}}:{}", self.link.prefix, guard.kind());
        let mine = guard.settings();
        let mut bound = self
            .link
            .agreed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let agreed = match bound.iter().find(|agreed| agreed.guard_key == key) {
            Some(agreed) if agreed.mine != mine => {
                return Err(BindError::OtherSettings {
                    name: name.to_owned(),
                    kind: guard.kind(),
                    bound: agreed.mine.to_string(),
                    given: mine.to_string(),
                });
            }
            Some(agreed) => Arc::clone(agreed),
            None => {
                let agreed = Arc::new(Agreed::new(key.clone(), mine));
                guard.bind_to(&self.link, key, Arc::clone(&agreed))?;
                bound.push(agreed);
                return Ok(());
            }
        };
        guard.bind_to(&self.link, key, agreed)
    }

    /// Whether Redis answered the last decision (or the last `PING`).
    #[must_use]
    pub fn is_up(&self) -> bool {
        self.link.is_up()
    }

    /// What the store counted since it connected.
    #[must_use]
    pub fn stats(&self) -> StoreStats {
        let c = &self.link.counts;
        StoreStats {
            up: self.link.is_up(),
            round_trips: c.round_trips.load(Ordering::Relaxed),
            failures: c.failures.load(Ordering::Relaxed),
            timeouts: c.timeouts.load(Ordering::Relaxed),
            local_decisions: c.local.load(Ordering::Relaxed),
            downs: c.downs.load(Ordering::Relaxed),
            ups: c.ups.load(Ordering::Relaxed),
            settings_mismatches: c.settings_mismatches.load(Ordering::Relaxed),
        }
    }

    /// Sends what the bound guards batch (refunds, outcomes) and reads
    /// their mirrors now, rather than at the next refresh: for a process
    /// about to exit, and for tests.
    ///
    /// ```no_run
    /// # async fn stop(store: tenacious::redis::Store) {
    /// store.sync().await; // the budget's last refunds go out
    /// # }
    /// ```
    pub async fn sync(&self) {
        self.link.sync_all().await;
    }
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("prefix", &self.link.prefix)
            .field("up", &self.link.is_up())
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Counts {
    round_trips: AtomicU64,
    failures: AtomicU64,
    timeouts: AtomicU64,
    local: AtomicU64,
    downs: AtomicU64,
    ups: AtomicU64,
    settings_mismatches: AtomicU64,
    /// Round trips Redis failed to answer (a timeout, a lost connection),
    /// whether the store was up or not: a rebuild that saw one is not
    /// done.
    unanswered: AtomicU64,
}

/// The future of a [`Member`]'s work.
pub(crate) type BoxedSync = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// A bound guard's part the refresh loop keeps fresh.
pub(crate) trait Member: Send + Sync {
    /// Sends its batch and reads its mirror.
    fn sync(&'static self) -> BoxedSync;
    /// After Redis came back: pushes what it learned while it was down.
    fn rebuild(&'static self) -> BoxedSync {
        self.sync()
    }
}

/// A store's connection: to one server (redis-rs's connection manager,
/// which reconnects), or to a cluster.
#[derive(Clone)]
enum Conn {
    Single(rs::aio::ConnectionManager),
    Cluster(rs::cluster_async::ClusterConnection),
}

impl rs::aio::ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a rs::Cmd) -> rs::RedisFuture<'a, rs::Value> {
        match self {
            Self::Single(conn) => conn.req_packed_command(cmd),
            Self::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a rs::Pipeline,
        offset: usize,
        count: usize,
    ) -> rs::RedisFuture<'a, Vec<rs::Value>> {
        match self {
            Self::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            Self::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(conn) => conn.get_db(),
            Self::Cluster(conn) => conn.get_db(),
        }
    }
}

/// The connection a store's guards share.
#[doc(hidden)]
pub struct Link {
    conn: Conn,
    handle: tokio::runtime::Handle,
    timeout: Duration,
    refresh: Duration,
    prefix: String,
    up: AtomicBool,
    /// Whether a script's error about its key was logged.
    bad_key_logged: AtomicBool,
    members: Mutex<Vec<&'static dyn Member>>,
    /// The settings of each name bound, by guard key.
    agreed: Mutex<Vec<Arc<Agreed>>>,
    counts: Counts,
}

/// Whether Redis answered `error` about the script's key: one of the wrong
/// type (`WRONGTYPE`), or data the script cannot use (`ERR` raised in the
/// script, a reply of another shape). No outage: the other keys answer.
/// (An `ERR` outside a script, as on connecting to a full server, and
/// the server's own states, `BUSY`, `OOM`, `LOADING`, are.)
fn answered(error: &rs::RedisError) -> bool {
    let in_script = || {
        error
            .detail()
            .is_some_and(|detail| detail.contains("script"))
    };
    match error.kind() {
        rs::ErrorKind::Server(rs::ServerErrorKind::ResponseError) => in_script(),
        rs::ErrorKind::Extension => error.code() == Some("WRONGTYPE") && in_script(),
        rs::ErrorKind::UnexpectedReturnType => true,
        _ => false,
    }
}

impl Link {
    /// How long a decision waits for Redis.
    pub(crate) const fn timeout(&self) -> Duration {
        self.timeout
    }

    pub(crate) fn is_up(&self) -> bool {
        self.up.load(Ordering::Acquire)
    }

    /// Counts a decision a bound guard took in process, Redis being down.
    pub(crate) fn local_decision(&self) {
        self.counts.local.fetch_add(1, Ordering::Relaxed);
        #[cfg(feature = "metrics")]
        metrics::counter!("tenacious_store_local_decisions_total").increment(1);
    }

    pub(crate) fn join(&self, member: &'static dyn Member) {
        self.members
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(member);
    }

    fn members(&self) -> Vec<&'static dyn Member> {
        self.members
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    async fn ping(&self) -> bool {
        let mut conn = self.conn.clone();
        matches!(
            tokio::time::timeout(
                self.timeout,
                rs::cmd("PING").query_async::<String>(&mut conn)
            )
            .await,
            Ok(Ok(_))
        )
    }

    fn went_down(&self, why: &str) {
        self.counts.unanswered.fetch_add(1, Ordering::Relaxed);
        if self.up.swap(false, Ordering::AcqRel) {
            self.counts.downs.fetch_add(1, Ordering::Relaxed);
            #[cfg(feature = "metrics")]
            metrics::counter!("tenacious_store_down_total").increment(1);
            tracing::warn!(
                target: "tenacious::redis",
                error = why,
                "redis store down; the guards decide in process until it answers"
            );
        }
    }

    /// A script Redis answered with an error about its key: logged once
    /// per store, the store staying up.
    fn bad_key(&self, key: &str, error: &rs::RedisError) {
        if !self.bad_key_logged.swap(true, Ordering::AcqRel) {
            tracing::warn!(
                target: "tenacious::redis",
                key,
                error = %error,
                "a shared guard's key holds what its script cannot use; that guard decides in process"
            );
        }
    }

    /// A name's settings in Redis differ from its guard's: logged and
    /// counted, once per name until they agree again.
    fn settings_differ(&self, key: &str, fleet: &str, own: &str) {
        self.counts
            .settings_mismatches
            .fetch_add(1, Ordering::Relaxed);
        tracing::warn!(
            target: "tenacious::redis",
            key,
            fleet,
            own,
            "a shared guard has other settings than the fleet's under its name; it decides in \
             Redis with the fleet's (the first written hold)"
        );
    }

    fn agreed(&self) -> Vec<Arc<Agreed>> {
        self.agreed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Checks the settings of each name due: never checked, or
    /// [`CHECK_EVERY`] ago.
    async fn check_settings(&self) {
        let now = Instant::now();
        let every = CHECK_EVERY.max(self.refresh);
        for agreed in self.agreed() {
            if agreed.due(now, every) {
                agreed.check(self).await;
                if !self.is_up() {
                    return;
                }
            }
        }
    }

    fn came_up(&self) -> bool {
        if self.up.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.counts.ups.fetch_add(1, Ordering::Relaxed);
        #[cfg(feature = "metrics")]
        metrics::counter!("tenacious_store_up_total").increment(1);
        tracing::info!(
            target: "tenacious::redis",
            "redis store up again; the guards share their state again"
        );
        true
    }

    /// Runs `script` on `key` with `args`, at most the timeout: `None` when
    /// Redis failed to answer in time (and the store is then down).
    pub(crate) async fn run<T: rs::FromRedisValue>(
        &self,
        script: &'static rs::Script,
        key: &str,
        args: &[i64],
    ) -> Option<T> {
        let mut conn = self.conn.clone();
        let mut invocation = script.key(key);
        for arg in args {
            invocation.arg(*arg);
        }
        match tokio::time::timeout(self.timeout, invocation.invoke_async::<T>(&mut conn)).await {
            Ok(Ok(value)) => {
                self.counts.round_trips.fetch_add(1, Ordering::Relaxed);
                Some(value)
            }
            // The connection's own response timeout (set to the same
            // duration) fires in the same tick as ours and is polled
            // first: it is a timeout too.
            Ok(Err(error)) if error.is_timeout() => {
                self.counts.failures.fetch_add(1, Ordering::Relaxed);
                self.counts.timeouts.fetch_add(1, Ordering::Relaxed);
                self.went_down("timed out");
                None
            }
            Ok(Err(error)) if answered(&error) => {
                self.counts.failures.fetch_add(1, Ordering::Relaxed);
                self.bad_key(key, &error);
                None
            }
            Ok(Err(error)) => {
                self.counts.failures.fetch_add(1, Ordering::Relaxed);
                self.went_down(&error.to_string());
                None
            }
            Err(_) => {
                self.counts.failures.fetch_add(1, Ordering::Relaxed);
                self.counts.timeouts.fetch_add(1, Ordering::Relaxed);
                self.went_down("timed out");
                None
            }
        }
    }

    /// [`run`](Link::run) on the store's runtime, for a caller on any
    /// thread (a blocking call blocks on it): `None` too when that runtime
    /// is gone, and at once for a blocking call on the thread of a
    /// current-thread runtime, which would wait on itself.
    pub(crate) fn decide<T: rs::FromRedisValue + Send + 'static>(
        self: &Arc<Self>,
        script: &'static rs::Script,
        key: &Arc<str>,
        args: Vec<i64>,
    ) -> impl Future<Output = Option<T>> + Send + 'static {
        let link = Arc::clone(self);
        let key = Arc::clone(key);
        async move {
            // Asked when first polled: a blocking call polls it inside
            // `block_on`.
            let stuck = tenacious_runtime::store::hooks::blocked_on()
                && tokio::runtime::Handle::try_current().is_ok_and(|current| {
                    current.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread
                });
            if stuck {
                return None;
            }
            // Bounded on the store's own timer: the store's runtime may
            // have no free worker to run the script or its timeout, and
            // the caller's may drive no timer (a blocking call has none).
            let deadline = Instant::now() + link.timeout;
            let handle = link.handle.clone();
            let watched = Arc::clone(&link);
            let task = handle.spawn(async move { link.run::<T>(script, &key, &args).await });
            match (WithinDeadline {
                task,
                deadline,
                armed: None,
            })
            .await
            {
                Some(answer) => answer.ok().flatten(),
                None => {
                    watched.counts.failures.fetch_add(1, Ordering::Relaxed);
                    watched.counts.timeouts.fetch_add(1, Ordering::Relaxed);
                    watched.went_down(
                        "no answer within the timeout: the store's runtime has no free worker",
                    );
                    None
                }
            }
        }
    }

    /// [`run`](Link::run) in the background, its answer handed to `then`.
    pub(crate) fn push<T, F>(
        self: &Arc<Self>,
        script: &'static rs::Script,
        key: &Arc<str>,
        args: Vec<i64>,
        then: F,
    ) where
        T: rs::FromRedisValue + Send + 'static,
        F: FnOnce(T) + Send + 'static,
    {
        let link = Arc::clone(self);
        let key = Arc::clone(key);
        drop(self.handle.spawn(async move {
            if let Some(value) = link.run::<T>(script, &key, &args).await {
                then(value);
            }
        }));
    }

    async fn sync_all(&self) {
        if !self.is_up() {
            if !self.ping().await {
                return;
            }
            // Rebuilt first, then up: no decision reaches Redis before
            // each guard has pushed what it learned meanwhile.
            let unanswered = self.counts.unanswered.load(Ordering::Relaxed);
            for member in self.members() {
                member.rebuild().await;
                if self.counts.unanswered.load(Ordering::Relaxed) != unanswered {
                    // Down again: the next PING's rebuild starts over.
                    return;
                }
            }
            // A Redis restarted empty lost the settings too.
            for agreed in self.agreed() {
                agreed.recheck();
                agreed.check(self).await;
                if self.counts.unanswered.load(Ordering::Relaxed) != unanswered {
                    return;
                }
            }
            self.came_up();
            return;
        }
        for member in self.members() {
            member.sync().await;
            if !self.is_up() {
                // The others would wait out the timeout each, for an
                // answer that is not coming: they keep their batches.
                return;
            }
        }
        self.check_settings().await;
    }
}

/// A decision's task, awaited until `deadline` on the store's timer: `None`
/// past it, the task aborted (one not yet started never reaches Redis).
struct WithinDeadline<T> {
    task: tokio::task::JoinHandle<T>,
    deadline: Instant,
    /// The waker the timer holds, so a poll with the same one adds none.
    armed: Option<std::task::Waker>,
}

impl<T> Future for WithinDeadline<T> {
    type Output = Option<Result<T, tokio::task::JoinError>>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        if let std::task::Poll::Ready(answer) = std::pin::Pin::new(&mut self.task).poll(cx) {
            return std::task::Poll::Ready(Some(answer));
        }
        if Instant::now() >= self.deadline {
            self.task.abort();
            return std::task::Poll::Ready(None);
        }
        if !self
            .armed
            .as_ref()
            .is_some_and(|armed| armed.will_wake(cx.waker()))
        {
            // A timer that cannot run (no thread) must not leave us waiting.
            if !timer::wake_at(self.deadline, cx.waker()) {
                self.task.abort();
                return std::task::Poll::Ready(None);
            }
            self.armed = Some(cx.waker().clone());
        }
        std::task::Poll::Pending
    }
}

impl<T> Drop for WithinDeadline<T> {
    fn drop(&mut self) {
        // A decision dropped (its call cancelled) is not taken in Redis
        // if its script has not started.
        self.task.abort();
    }
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// Every `refresh`: a store that is up sends its guards' batches and reads
/// their mirrors; one that is down tries a `PING`, and once Redis answers,
/// its guards push what they learned meanwhile.
/// The first one period after connecting, which pinged already.
async fn refresh_loop(link: std::sync::Weak<Link>) {
    loop {
        let Some(period) = link.upgrade().map(|strong| strong.refresh) else {
            return;
        };
        tokio::time::sleep(period).await;
        let Some(strong) = link.upgrade() else { return };
        strong.sync_all().await;
    }
}

/// Binds a guard's slot to the shared part `make` builds, kept for the
/// process's life (`as_dyn`: it, as the slot's store interface).
pub(crate) fn bind<S: ?Sized, T: 'static>(
    slot: &StoreSlot<S>,
    make: impl FnOnce() -> T,
    as_dyn: fn(&'static T) -> &'static S,
) -> Result<&'static T, BindError> {
    let mut made = None;
    slot.bind(|| {
        let shared: &'static T = Box::leak(Box::new(make()));
        made = Some(shared);
        as_dyn(shared)
    });
    made.ok_or(BindError::AlreadyBound)
}

/// [`Store`] for a guard's shared part, by its `link`.
macro_rules! forward_store {
    ($shared:ty) => {
        impl tenacious_runtime::store::Store for $shared {
            fn is_up(&self) -> bool {
                self.link.is_up()
            }

            fn local_decision(&self) {
                self.link.local_decision();
            }
        }
    };
}
pub(crate) use forward_store;

/// Microseconds of `d`, held to [`LONGEST_HOLD`](tenacious_runtime::store::hooks::LONGEST_HOLD):
/// no script is asked to store a time further ahead (a server's `now`
/// plus `i64::MAX` overflowed into a negative time).
pub(crate) fn micros(d: Duration) -> i64 {
    i64::try_from(
        d.min(tenacious_runtime::store::hooks::LONGEST_HOLD)
            .as_micros(),
    )
    .unwrap_or(i64::MAX)
}

/// Deletes `key` in the background: its guard starts afresh fleet-wide.
pub(crate) fn forget(link: &Arc<Link>, key: &Arc<str>) {
    link.push::<i64, _>(&scripts::RESET_SCRIPT, key, Vec::new(), |_| {});
}

/// The duration of `us` microseconds from a script (0 for a negative one).
pub(crate) fn from_micros(us: i64) -> Duration {
    Duration::from_micros(u64::try_from(us).unwrap_or(0))
}
