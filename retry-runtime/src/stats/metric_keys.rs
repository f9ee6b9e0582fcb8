//! The `metrics` keys a statistics record carries (feature `metrics`):
//! the label sets, built with the record in a `const`, and the keys, built
//! once on first use, for the record and for each variant slot, so an
//! event only hands a ready key to the recorder. They live in the record
//! (`observe/metrics.rs` reads them and talks to the recorder), so the
//! statistics do not depend on `observe`.
use std::sync::OnceLock;

use ::metrics::{Key, Label};

use super::record::{LIMITS, OTHER_VARIANT};
use crate::{ErrorClass, Limit, StopReason};

const ATTEMPTS_TOTAL: &str = "tenacious_attempts_total";
const ERRORS_TOTAL: &str = "tenacious_errors_total";
const RETRIES_TOTAL: &str = "tenacious_retries_total";
const GAVE_UP_TOTAL: &str = "tenacious_gave_up_total";
const REFUSED_TOTAL: &str = "tenacious_refused_total";
const ATTEMPTS_PER_CALL: &str = "tenacious_attempts_per_call";
const STREAM_FIRST_ITEM_SECONDS: &str = "tenacious_stream_first_item_seconds";
const STREAM_STALLS_TOTAL: &str = "tenacious_stream_stalls_total";
const STREAM_RESUMES_TOTAL: &str = "tenacious_stream_resumes_total";
const FALLBACKS_TOTAL: &str = "tenacious_fallbacks_total";
const STREAM_PARTIAL_TOTAL: &str = "tenacious_stream_partial_total";

/// A record's label sets (built with the record, in a `const`) and, from
/// its first use, its keys.
pub(crate) struct RecordMetrics {
    by_fn: [Label; 1],
    /// By [`StopReason::index`].
    by_reason: [[Label; 2]; StopReason::ALL.len()],
    /// By [`limit_index`](super::record::limit_index).
    by_timer: [[Label; 2]; LIMITS.len()],
    /// The errors that found no slot, by class.
    other_by_class: [[Label; 3]; 4],
    keys: OnceLock<RecordKeys>,
}

pub(crate) struct RecordKeys {
    pub(crate) attempts: Key,
    pub(crate) per_call: Key,
    /// By [`StopReason::index`].
    pub(crate) gave_up: [Key; StopReason::ALL.len()],
    /// `tenacious_refused_total`, by [`StopReason::index`].
    pub(crate) refused: [Key; StopReason::ALL.len()],
    /// The errors and retries of the errors that found no slot, by class.
    pub(crate) other: [ErrorKeys; 4],
    /// `tenacious_stream_first_item_seconds`.
    pub(crate) first_item: Key,
    /// `tenacious_stream_stalls_total`, by
    /// [`limit_index`](super::record::limit_index).
    pub(crate) stalls: [Key; LIMITS.len()],
    /// `tenacious_stream_resumes_total`.
    pub(crate) resumes: Key,
    /// `tenacious_fallbacks_total`.
    pub(crate) fallbacks: Key,
    /// `tenacious_stream_partial_total`, by [`StopReason::index`].
    pub(crate) partial: [Key; StopReason::ALL.len()],
}

/// An error kind's `tenacious_errors_total` and `tenacious_retries_total`.
pub(crate) struct ErrorKeys {
    pub(crate) errors: Key,
    pub(crate) retries: Key,
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
                by_reason(name, StopReason::Guard),
                by_reason(name, StopReason::Cooldown),
                by_reason(name, StopReason::CircuitOpen),
                by_reason(name, StopReason::PartialOutput),
                by_reason(name, StopReason::NotIdempotent),
                by_reason(name, StopReason::Concurrency),
            ],
            by_timer: [
                by_timer(name, LIMITS[0]),
                by_timer(name, LIMITS[1]),
                by_timer(name, LIMITS[2]),
                by_timer(name, LIMITS[3]),
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

    pub(crate) fn keys(&'static self) -> &'static RecordKeys {
        self.keys.get_or_init(|| RecordKeys {
            attempts: Key::from_static_parts(ATTEMPTS_TOTAL, &self.by_fn),
            per_call: Key::from_static_parts(ATTEMPTS_PER_CALL, &self.by_fn),
            gave_up: std::array::from_fn(|i| {
                Key::from_static_parts(GAVE_UP_TOTAL, &self.by_reason[i])
            }),
            refused: std::array::from_fn(|i| {
                Key::from_static_parts(REFUSED_TOTAL, &self.by_reason[i])
            }),
            other: std::array::from_fn(|i| ErrorKeys::new(&self.other_by_class[i])),
            first_item: Key::from_static_parts(STREAM_FIRST_ITEM_SECONDS, &self.by_fn),
            stalls: std::array::from_fn(|i| {
                Key::from_static_parts(STREAM_STALLS_TOTAL, &self.by_timer[i])
            }),
            resumes: Key::from_static_parts(STREAM_RESUMES_TOTAL, &self.by_fn),
            fallbacks: Key::from_static_parts(FALLBACKS_TOTAL, &self.by_fn),
            partial: std::array::from_fn(|i| {
                Key::from_static_parts(STREAM_PARTIAL_TOTAL, &self.by_reason[i])
            }),
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
    pub(crate) fn keys(
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

const fn by_timer(name: &'static str, limit: Limit) -> [Label; 2] {
    [
        Label::from_static_parts("fn", name),
        Label::from_static_parts("timer", limit.label()),
    ]
}

const fn error_labels(name: &'static str, class: ErrorClass, variant: &'static str) -> [Label; 3] {
    [
        Label::from_static_parts("fn", name),
        Label::from_static_parts("class", class.as_str()),
        Label::from_static_parts("variant", variant),
    ]
}
