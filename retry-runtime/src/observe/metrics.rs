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
//! Each record builds its keys once, on first use, and each variant slot
//! its own when it is first reported: an event then only hands a ready key
//! to the recorder, allocating and hashing nothing.
use std::sync::OnceLock;

use ::metrics::{Key, Label, Level, Metadata, with_recorder};

use super::FailedAttempt;
use crate::stats::{CallStats, OTHER_VARIANT, VariantSlot, class_index};
use crate::{ErrorClass, StopReason};

const ATTEMPTS_TOTAL: &str = "tenacious_attempts_total";
const ERRORS_TOTAL: &str = "tenacious_errors_total";
const RETRIES_TOTAL: &str = "tenacious_retries_total";
const GAVE_UP_TOTAL: &str = "tenacious_gave_up_total";
const ATTEMPTS_PER_CALL: &str = "tenacious_attempts_per_call";

static METADATA: Metadata<'static> = Metadata::new("tenacious", Level::INFO, Some(module_path!()));

/// A record's label sets (built with the record, in a `const`) and, from
/// its first use, its keys.
pub(crate) struct RecordMetrics {
    by_fn: [Label; 1],
    /// By [`StopReason::index`].
    by_reason: [[Label; 2]; StopReason::ALL.len()],
    /// The errors that found no slot, by class.
    other_by_class: [[Label; 3]; 4],
    keys: OnceLock<RecordKeys>,
}

struct RecordKeys {
    attempts: Key,
    per_call: Key,
    /// By [`StopReason::index`].
    gave_up: [Key; StopReason::ALL.len()],
    /// The errors and retries of the errors that found no slot, by class.
    other: [ErrorKeys; 4],
}

/// An error kind's `tenacious_errors_total` and `tenacious_retries_total`.
struct ErrorKeys {
    errors: Key,
    retries: Key,
}

impl ErrorKeys {
    fn new(labels: &'static [Label]) -> Self {
        Self {
            errors: Key::from_static_parts(ERRORS_TOTAL, labels),
            retries: Key::from_static_parts(RETRIES_TOTAL, labels),
        }
    }
}

impl RecordMetrics {
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
                error_labels(name, ErrorClass::Transient, OTHER_VARIANT),
                error_labels(name, ErrorClass::RateLimited, OTHER_VARIANT),
                error_labels(name, ErrorClass::Invalid, OTHER_VARIANT),
                error_labels(name, ErrorClass::Fatal, OTHER_VARIANT),
            ],
            keys: OnceLock::new(),
        }
    }

    fn keys(&'static self) -> &'static RecordKeys {
        self.keys.get_or_init(|| RecordKeys {
            attempts: Key::from_static_parts(ATTEMPTS_TOTAL, &self.by_fn),
            per_call: Key::from_static_parts(ATTEMPTS_PER_CALL, &self.by_fn),
            gave_up: std::array::from_fn(|i| {
                Key::from_static_parts(GAVE_UP_TOTAL, &self.by_reason[i])
            }),
            other: std::array::from_fn(|i| ErrorKeys::new(&self.other_by_class[i])),
        })
    }
}

/// A variant slot's labels and keys, built when the slot is first reported.
pub(crate) struct SlotMetrics {
    labels: OnceLock<[Label; 3]>,
    keys: OnceLock<ErrorKeys>,
}

impl SlotMetrics {
    pub(crate) const fn new() -> Self {
        Self {
            labels: OnceLock::new(),
            keys: OnceLock::new(),
        }
    }

    /// The slot's keys; `class` and `variant` are the pair it counts.
    fn keys(
        &'static self,
        name: &'static str,
        class: ErrorClass,
        variant: &'static str,
    ) -> &'static ErrorKeys {
        self.keys.get_or_init(|| {
            ErrorKeys::new(
                self.labels
                    .get_or_init(|| error_labels(name, class, variant)),
            )
        })
    }
}

const fn by_reason(name: &'static str, reason: StopReason) -> [Label; 2] {
    [
        Label::from_static_parts("fn", name),
        Label::from_static_parts("reason", reason.label()),
    ]
}

const fn error_labels(name: &'static str, class: ErrorClass, variant: &'static str) -> [Label; 3] {
    [
        Label::from_static_parts("fn", name),
        Label::from_static_parts("class", class.as_str()),
        Label::from_static_parts("variant", variant),
    ]
}

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
        None => &stats.metrics.keys().other[class_index(failed.class)],
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
