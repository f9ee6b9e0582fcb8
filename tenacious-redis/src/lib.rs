//! Provider guards shared across processes through Redis (feature `redis`).
//!
//! A [`RetryBudget`](tenacious_runtime::RetryBudget), [`Cooldown`](tenacious_runtime::Cooldown),
//! [`Throttle`](tenacious_runtime::Throttle), [`Breaker`](tenacious_runtime::Breaker) or
//! [`Concurrency`](tenacious_runtime::Concurrency) declared as
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
//! | `Concurrency` | a lease let go by an attempt, handed to a waiter of the same process while it holds no more than its share or no other process waits; renewals, every quarter of [`CONCURRENCY_LEASE`] | a lease from the fleet; a release |
//!
//! # A concurrency limit across processes
//!
//! A [`Concurrency`](tenacious_runtime::Concurrency) bound to a name holds
//! every process bound to it to its limit of attempts in flight (the limit
//! is a setting: the first written holds). Each permit is a lease, a member
//! of `…:concurrency` (a sorted set) scored by when it expires on the
//! server's clock, taken by one script that drops the expired ones first
//! and refuses when the limit is out. The process renews the leases its
//! attempts hold every quarter of [`CONCURRENCY_LEASE`] (2 s), so a process
//! killed with `kill -9` gives its leases back to the fleet within the
//! lease. A waiting call does not poll the fleet itself: one waiter of a
//! process at a time asks (every 1 ms, then every 4 ms), the others wait
//! for a lease let go in their own process. A lease let go goes to a
//! waiter of its process while the process holds no more than its share
//! (`⌈limit / processes alive⌉`) or no other process waited lately, else
//! back to the fleet: a busy fleet settles at each process's share, and
//! a lone process can use the whole limit.
//!
//! While Redis does not answer, a process that holds leases keeps to
//! them (it goes on handing them to its own calls), and one that holds
//! none takes permits of its own up to its share, `⌈limit / processes⌉`,
//! as of the last count of processes alive it read (every quarter of a
//! lease): the fleet stays within the limit but for the processes that
//! held no lease taking their share (a process that joined since the
//! others' last count counts too). The leases held through an outage
//! longer than the lease expire in Redis while their attempts run on:
//! back up, each process counts them again before it takes any, even past
//! the limit, so the fleet takes no new one until enough end.
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

use std::sync::Arc;
use std::time::Duration;

use tenacious_runtime::store::StoreSlot;

mod breaker;
mod budget;
mod concurrency;
mod config;
mod conn;
mod cooldown;
mod error;
mod link;
mod scripts;
mod settings;
mod stats;
mod store;
mod throttle;
mod timer;

pub use concurrency::CONCURRENCY_LEASE;
pub use config::StoreConfig;
pub use error::{BindError, StoreError};
#[doc(hidden)]
pub use link::Link;
pub(crate) use link::{BoxedSync, Member};
pub use stats::StoreStats;
pub use store::{Shareable, Store};

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
