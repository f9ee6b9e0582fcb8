//! Where the engine reports what became of each attempt of a call that
//! has a statistics record: the record's counters, and with the features
//! of those names, `tracing` events and `metrics`.
//!
//! Only the engine calls in here, after it decided, so `#[retry]` fns and
//! the `Policy` loops are observed alike.
use std::time::Duration;

use crate::stats::CallStats;
use crate::{ErrorClass, Limit, Policy, StopReason};

#[cfg(feature = "tracing")]
mod events;
#[cfg(feature = "tracing")]
pub(crate) mod levels;
#[cfg(feature = "tracing")]
mod spans;

#[cfg(feature = "tracing")]
pub(crate) use spans::{FROM_GUARD, Spans};
#[cfg(feature = "metrics")]
mod metrics;

/// A failed attempt, as the engine saw it.
pub(crate) struct FailedAttempt {
    /// Its number, 1 for the first.
    pub(crate) attempt: u32,
    /// The most attempts the call makes.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    pub(crate) max: u32,
    pub(crate) class: ErrorClass,
    pub(crate) variant: &'static str,
    /// How long the call had run, if its clock was started.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    pub(crate) elapsed: Option<Duration>,
}

/// A call succeeded at its first attempt: the happy path, inlined into
/// every retried call.
#[inline]
pub(crate) fn clean_success(stats: &'static CallStats) {
    stats.count_clean();
    #[cfg(feature = "metrics")]
    metrics::success(stats, 1);
}

/// A call succeeded at attempt `attempts`.
pub(crate) fn success(stats: &'static CallStats, attempts: u32) {
    stats.count_success(attempts);
    #[cfg(feature = "metrics")]
    metrics::success(stats, attempts);
}

/// An attempt failed and the call will retry after `delay`.
pub(crate) fn retry(stats: &'static CallStats, failed: &FailedAttempt, delay: Duration) {
    let slot = stats.count_error(failed.class, failed.variant);
    #[cfg(feature = "tracing")]
    events::retry(stats.name(), failed, delay);
    #[cfg(not(feature = "tracing"))]
    let _ = delay;
    #[cfg(feature = "metrics")]
    metrics::retry(stats, slot, failed);
    #[cfg(not(feature = "metrics"))]
    let _ = slot;
}

/// An attempt failed and the call returns its error, stopped by `reason`.
pub(crate) fn give_up(stats: &'static CallStats, failed: &FailedAttempt, reason: StopReason) {
    let slot = stats.count_error(failed.class, failed.variant);
    stats.count_give_up(failed.attempt, reason);
    #[cfg(feature = "tracing")]
    events::give_up(stats.name(), failed, reason);
    #[cfg(feature = "metrics")]
    metrics::give_up(stats, slot, failed, reason);
    #[cfg(not(feature = "metrics"))]
    let _ = slot;
}

/// A call that decided to retry woke too late for another attempt (see
/// `Engine::late`) and gives up after `attempts`: its last error was
/// counted with the retry, so only the give-up is counted now.
#[cold]
pub(crate) fn late_give_up(
    stats: &'static CallStats,
    attempts: u32,
    max: u32,
    elapsed: Option<Duration>,
    reason: StopReason,
) {
    stats.count_give_up(attempts, reason);
    #[cfg(feature = "tracing")]
    events::late_give_up(stats.name(), attempts, max, elapsed, reason);
    #[cfg(feature = "metrics")]
    metrics::late_give_up(stats, attempts, reason);
    #[cfg(not(feature = "tracing"))]
    let _ = (max, elapsed);
}

/// A guard refused a call before its first attempt, for `reason`: a call
/// that made no attempt and gave up.
#[cold]
pub(crate) fn refused(
    stats: &'static CallStats,
    max: u32,
    elapsed: Option<Duration>,
    reason: StopReason,
) {
    stats.count_refused(reason);
    #[cfg(feature = "tracing")]
    events::refused(stats.name(), max, elapsed, reason);
    #[cfg(feature = "metrics")]
    metrics::refused(stats, reason);
    #[cfg(not(feature = "tracing"))]
    let _ = (max, elapsed);
}

/// A retried stream committed: its first content item came `after` the
/// start of the attempt that delivered it.
#[cold]
pub(crate) fn stream_first_item(stats: &'static CallStats, after: Duration) {
    stats.count_stream(after);
    #[cfg(feature = "tracing")]
    events::stream_first_item(stats.name(), after);
    #[cfg(feature = "metrics")]
    metrics::stream_first_item(stats, after);
}

/// A retried stream's timer `limit` ran out (a stall): before its first
/// item ([`Limit::FirstItem`]), between items ([`Limit::Idle`]), or at the
/// call's deadline ([`Limit::Deadline`]).
#[cold]
pub(crate) fn stream_stall(stats: &'static CallStats, limit: Limit) {
    stats.count_stall(limit);
    #[cfg(feature = "tracing")]
    events::stream_stall(stats.name(), limit);
    #[cfg(feature = "metrics")]
    metrics::stream_stall(stats, limit);
}

/// A retried stream with `resume` reconnects after it had delivered
/// `delivered` items.
#[cold]
pub(crate) fn stream_resume(stats: &'static CallStats, delivered: u64) {
    stats.count_resume();
    #[cfg(feature = "tracing")]
    events::stream_resume(stats.name(), delivered);
    #[cfg(not(feature = "tracing"))]
    let _ = delivered;
    #[cfg(feature = "metrics")]
    metrics::stream_resume(stats);
}

/// A retried stream ended with an error after it had delivered
/// `delivered` items, stopped by `reason` (a partial failure; the give-up
/// itself is counted by `give_up` too).
#[cold]
pub(crate) fn stream_partial(stats: &'static CallStats, delivered: u64, reason: StopReason) {
    stats.count_partial(delivered);
    #[cfg(feature = "tracing")]
    events::stream_partial(stats.name(), delivered, reason);
    #[cfg(feature = "metrics")]
    metrics::stream_partial(stats, reason);
    #[cfg(not(any(feature = "tracing", feature = "metrics")))]
    let _ = reason;
}

/// A call gave up and its `fallback` answered.
#[cold]
pub(crate) fn fallback(stats: &'static CallStats) {
    stats.count_fallback();
    #[cfg(feature = "tracing")]
    events::fallback(stats.name());
    #[cfg(feature = "metrics")]
    metrics::fallback(stats);
}

/// Whether a call under `policy` should read the clock when it starts,
/// so its events' `elapsed_ms` counts from there: only when someone
/// listens to them.
#[inline]
pub(crate) fn wants_clock(policy: &Policy) -> bool {
    #[cfg(feature = "tracing")]
    {
        policy.get_stats().is_some() && events::enabled()
    }
    #[cfg(not(feature = "tracing"))]
    {
        let _ = policy;
        false
    }
}
