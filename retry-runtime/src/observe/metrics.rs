//! The metrics (feature `metrics`), through the `metrics` facade to
//! whatever recorder the application installed:
//!
//! | metric | kind | labels | per |
//! |---|---|---|---|
//! | `tenacious_attempts_total` | counter | `fn` | attempt |
//! | `tenacious_errors_total` | counter | `fn`, `class`, `variant` | failed attempt |
//! | `tenacious_retries_total` | counter | `fn`, `class`, `variant` (of the error retried) | retry |
//! | `tenacious_gave_up_total` | counter | `fn`, `reason` | call that returned an error |
//! | `tenacious_refused_total` | counter | `fn`, `reason` | call a guard refused before its first attempt (also in `tenacious_gave_up_total`) |
//! | `tenacious_attempts_per_call` | histogram | `fn` | call that returned |
//! | `tenacious_fallbacks_total` | counter | `fn` | give-up a `fallback` answered |
//! | `tenacious_stream_first_item_seconds` | histogram | `fn` | stream that committed (its time to first item) |
//! | `tenacious_stream_stalls_total` | counter | `fn`, `timer` (`first_item`, `idle`, `deadline`) | stream timer that ran out |
//! | `tenacious_stream_resumes_total` | counter | `fn` | stream that reconnected to resume |
//! | `tenacious_stream_partial_total` | counter | `fn`, `reason` | stream that failed after delivering items |
//!
//! Each record builds its keys once, on first use, and each variant slot
//! its own when it is first reported (`stats/metric_keys.rs`): an event
//! then only hands a ready key to the recorder, allocating and hashing
//! nothing.
use std::time::Duration;

use ::metrics::{Level, Metadata, with_recorder};

use super::FailedAttempt;
use crate::stats::{CallStats, ErrorKeys, VariantSlot, limit_index};
use crate::{Limit, StopReason};

static METADATA: Metadata<'static> = Metadata::new("tenacious", Level::INFO, Some(module_path!()));

/// The keys of an error counted in `slot`, or in the record's overflow.
fn error_keys(
    stats: &'static CallStats,
    slot: Option<&'static VariantSlot>,
    failed: &FailedAttempt,
) -> &'static ErrorKeys {
    match slot {
        Some(slot) => slot
            .metrics
            .keys(stats.name(), failed.class, failed.variant),
        None => &stats.metrics.keys().other[failed.class.index()],
    }
}

pub(super) fn success(stats: &'static CallStats, attempts: u32) {
    let keys = stats.metrics.keys();
    with_recorder(|recorder| {
        recorder
            .register_counter(&keys.attempts, &METADATA)
            .increment(1);
        recorder
            .register_histogram(&keys.per_call, &METADATA)
            .record(f64::from(attempts));
    });
}

pub(super) fn retry(
    stats: &'static CallStats,
    slot: Option<&'static VariantSlot>,
    failed: &FailedAttempt,
) {
    let keys = stats.metrics.keys();
    let error = error_keys(stats, slot, failed);
    with_recorder(|recorder| {
        recorder
            .register_counter(&keys.attempts, &METADATA)
            .increment(1);
        recorder
            .register_counter(&error.errors, &METADATA)
            .increment(1);
        recorder
            .register_counter(&error.retries, &METADATA)
            .increment(1);
    });
}

pub(super) fn give_up(
    stats: &'static CallStats,
    slot: Option<&'static VariantSlot>,
    failed: &FailedAttempt,
    reason: StopReason,
) {
    let keys = stats.metrics.keys();
    let error = error_keys(stats, slot, failed);
    with_recorder(|recorder| {
        recorder
            .register_counter(&keys.attempts, &METADATA)
            .increment(1);
        recorder
            .register_counter(&error.errors, &METADATA)
            .increment(1);
        recorder
            .register_counter(&keys.gave_up[reason.index()], &METADATA)
            .increment(1);
        recorder
            .register_histogram(&keys.per_call, &METADATA)
            .record(f64::from(failed.attempt));
    });
}

pub(super) fn late_give_up(stats: &'static CallStats, attempts: u32, reason: StopReason) {
    let keys = stats.metrics.keys();
    with_recorder(|recorder| {
        recorder
            .register_counter(&keys.gave_up[reason.index()], &METADATA)
            .increment(1);
        recorder
            .register_histogram(&keys.per_call, &METADATA)
            .record(f64::from(attempts));
    });
}

pub(super) fn refused(stats: &'static CallStats, reason: StopReason) {
    let keys = stats.metrics.keys();
    with_recorder(|recorder| {
        recorder
            .register_counter(&keys.gave_up[reason.index()], &METADATA)
            .increment(1);
        recorder
            .register_counter(&keys.refused[reason.index()], &METADATA)
            .increment(1);
    });
}

pub(super) fn stream_first_item(stats: &'static CallStats, after: Duration) {
    let keys = stats.metrics.keys();
    with_recorder(|recorder| {
        recorder
            .register_histogram(&keys.first_item, &METADATA)
            .record(after.as_secs_f64());
    });
}

pub(super) fn stream_stall(stats: &'static CallStats, limit: Limit) {
    let Some(index) = limit_index(limit) else {
        return;
    };
    let keys = stats.metrics.keys();
    with_recorder(|recorder| {
        recorder
            .register_counter(&keys.stalls[index], &METADATA)
            .increment(1);
    });
}

pub(super) fn fallback(stats: &'static CallStats) {
    let keys = stats.metrics.keys();
    with_recorder(|recorder| {
        recorder
            .register_counter(&keys.fallbacks, &METADATA)
            .increment(1);
    });
}

pub(super) fn stream_resume(stats: &'static CallStats) {
    let keys = stats.metrics.keys();
    with_recorder(|recorder| {
        recorder
            .register_counter(&keys.resumes, &METADATA)
            .increment(1);
    });
}

pub(super) fn stream_partial(stats: &'static CallStats, reason: StopReason) {
    let keys = stats.metrics.keys();
    with_recorder(|recorder| {
        recorder
            .register_counter(&keys.partial[reason.index()], &METADATA)
            .increment(1);
    });
}
