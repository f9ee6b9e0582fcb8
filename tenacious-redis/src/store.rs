//! The store: a connection to a fleet's Redis, and the guards bound to it.
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::redis as rs;

use crate::conn::Conn;
use crate::link::refresh_loop;
use crate::stats::Counts;
use crate::{Agreed, BindError, Link, Settings, StoreConfig, StoreError, StoreStats};

/// A connection to the Redis that a fleet's guards share, and the guards
/// bound to it. See the [module's docs](crate).
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

/// A guard a [`Store`] can share: [`RetryBudget`](tenacious_runtime::RetryBudget),
/// [`Cooldown`](tenacious_runtime::Cooldown), [`Throttle`](tenacious_runtime::Throttle),
/// [`Breaker`](tenacious_runtime::Breaker),
/// [`Concurrency`](tenacious_runtime::Concurrency). Sealed.
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
    /// What the key names: `budget`, `cooldown`, `throttle`, `breaker`,
    /// `concurrency`.
    #[doc(hidden)]
    fn kind(&self) -> &'static str;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for tenacious_runtime::RetryBudget {}
    impl Sealed for tenacious_runtime::Cooldown {}
    impl Sealed for tenacious_runtime::Throttle {}
    impl Sealed for tenacious_runtime::Breaker {}
    impl Sealed for tenacious_runtime::Concurrency {}
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
    /// (across processes, see [Settings](crate#settings)).
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
