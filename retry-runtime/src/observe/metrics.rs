//! The metrics (feature `metrics`), through the `metrics` facade to
//! whatever recorder the application installed:
//!
//! | metric | kind | labels | per |
//! |---|---|---|---|
//! | `tenacious_attempts_total` | counter | `fn` | attempt |
//! | `tenacious_errors_total` | counter | `fn`, `class`, `variant` | failed attempt |
//! | `tenacious_retries_total` | counter | `fn`, `class`, `variant` (of the error retried) | retry |
//! | `tenacious_gave_up_total` | counter | `fn`, `reason` | call that returned an error |
//! | `tenacious_attempts_per_call` | histogram | `fn` | call that returned |
//!
//! Every label set is built once, with the record or with a variant's
//! slot in it, so an event builds its key without allocating.
use ::metrics::{Key, Label, Level, Metadata, with_recorder};

use super::FailedAttempt;
use crate::stats::{CallStats, SlotKey, class_index};
use crate::{ErrorClass, StopReason};

const ATTEMPTS_TOTAL: &str = "tenacious_attempts_total";
const ERRORS_TOTAL: &str = "tenacious_errors_total";
const RETRIES_TOTAL: &str = "tenacious_retries_total";
const GAVE_UP_TOTAL: &str = "tenacious_gave_up_total";
const ATTEMPTS_PER_CALL: &str = "tenacious_attempts_per_call";

static METADATA: Metadata<'static> = Metadata::new("tenacious", Level::INFO, Some(module_path!()));

/// The label sets of one record's metrics.
pub(crate) struct Labels {
    by_fn: [Label; 1],
    /// By [`StopReason::index`].
    by_reason: [[Label; 2]; StopReason::ALL.len()],
    /// The errors that found no slot, by class.
    other_by_class: [[Label; 3]; 4],
}

impl Labels {
    pub(crate) const fn new(name: &'static str) -> Self {
        Self {
            by_fn: [Label::from_static_parts("fn", name)],
            by_reason: [
                by_reason(name, StopReason::Exhausted),
                by_reason(name, StopReason::NotRetryable),
                by_reason(name, StopReason::HintTooLong),
                by_reason(name, StopReason::Deadline),
                by_reason(name, StopReason::Budget),
                by_reason(name, StopReason::Nested),
            ],
            other_by_class: [
                error_labels(name, ErrorClass::Transient, crate::stats::OTHER_VARIANT),
                error_labels(name, ErrorClass::RateLimited, crate::stats::OTHER_VARIANT),
                error_labels(name, ErrorClass::Invalid, crate::stats::OTHER_VARIANT),
                error_labels(name, ErrorClass::Fatal, crate::stats::OTHER_VARIANT),
            ],
        }
    }
}

const fn by_reason(name: &'static str, reason: StopReason) -> [Label; 2] {
    [
        Label::from_static_parts("fn", name),
        Label::from_static_parts("reason", reason.label()),
    ]
}

/// The labels of an error's metrics.
pub(crate) const fn error_labels(
    name: &'static str,
    class: ErrorClass,
    variant: &'static str,
) -> [Label; 3] {
    [
        Label::from_static_parts("fn", name),
        Label::from_static_parts("class", class.as_str()),
        Label::from_static_parts("variant", variant),
    ]
}

pub(super) fn success(stats: &'static CallStats, attempts: u32) {
    with_recorder(|recorder| {
        let by_fn = &stats.labels.by_fn;
        recorder
            .register_counter(&Key::from_static_parts(ATTEMPTS_TOTAL, by_fn), &METADATA)
            .increment(1);
        recorder
            .register_histogram(&Key::from_static_parts(ATTEMPTS_PER_CALL, by_fn), &METADATA)
            .record(f64::from(attempts));
    });
}

pub(super) fn retry(stats: &'static CallStats, slot: Option<&'static SlotKey>, class: ErrorClass) {
    let by_error = error_labels_of(stats, slot, class);
    with_recorder(|recorder| {
        let by_fn = &stats.labels.by_fn;
        recorder
            .register_counter(&Key::from_static_parts(ATTEMPTS_TOTAL, by_fn), &METADATA)
            .increment(1);
        recorder
            .register_counter(&Key::from_static_parts(ERRORS_TOTAL, by_error), &METADATA)
            .increment(1);
        recorder
            .register_counter(&Key::from_static_parts(RETRIES_TOTAL, by_error), &METADATA)
            .increment(1);
    });
}

pub(super) fn give_up(
    stats: &'static CallStats,
    slot: Option<&'static SlotKey>,
    failed: &FailedAttempt,
    reason: StopReason,
) {
    let by_error = error_labels_of(stats, slot, failed.class);
    with_recorder(|recorder| {
        let labels = &stats.labels;
        recorder
            .register_counter(
                &Key::from_static_parts(ATTEMPTS_TOTAL, &labels.by_fn),
                &METADATA,
            )
            .increment(1);
        recorder
            .register_counter(&Key::from_static_parts(ERRORS_TOTAL, by_error), &METADATA)
            .increment(1);
        recorder
            .register_counter(
                &Key::from_static_parts(GAVE_UP_TOTAL, &labels.by_reason[reason.index()]),
                &METADATA,
            )
            .increment(1);
        recorder
            .register_histogram(
                &Key::from_static_parts(ATTEMPTS_PER_CALL, &labels.by_fn),
                &METADATA,
            )
            .record(f64::from(failed.attempt));
    });
}

/// The labels of an error counted in `slot`, or in the record's overflow.
fn error_labels_of(
    stats: &'static CallStats,
    slot: Option<&'static SlotKey>,
    class: ErrorClass,
) -> &'static [Label] {
    match slot {
        Some(slot) => &slot.labels,
        None => &stats.labels.other_by_class[class_index(class)],
    }
}
