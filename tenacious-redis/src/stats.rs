//! What a store counts.
use std::sync::atomic::AtomicU64;

#[cfg(doc)]
use crate::Store;

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
    /// [Settings](crate#settings).
    pub settings_mismatches: u64,
}

#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) round_trips: AtomicU64,
    pub(crate) failures: AtomicU64,
    pub(crate) timeouts: AtomicU64,
    pub(crate) local: AtomicU64,
    pub(crate) downs: AtomicU64,
    pub(crate) ups: AtomicU64,
    pub(crate) settings_mismatches: AtomicU64,
    /// Round trips Redis failed to answer (a timeout, a lost connection),
    /// whether the store was up or not: a rebuild that saw one is not
    /// done.
    pub(crate) unanswered: AtomicU64,
}
