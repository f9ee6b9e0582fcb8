//! Per-function retry statistics, and the four figures that tell whether a
//! retry policy is fixing faults or hiding them.
//!
//! Every `#[retry]` fn counts its calls in its own `static` [`CallStats`]
//! record: calls, attempts, calls that retried, calls that recovered (that
//! succeeded after at least one retry), calls that gave up by
//! [`StopReason`](crate::StopReason), and failed attempts by class and by
//! variant; for a retried stream, also the streams that committed and
//! their time to first item, the stream timers that ran out, the resumes
//! and the partial failures (see [`FnStats::streams`]). Counting is one relaxed atomic addition for a call that
//! succeeds at once, a few atomic additions for the others, on the record
//! the fn already points at: no lookup, no lock, no allocation. A record joins a
//! global registry the first time it counts something, and [`snapshot`]
//! reads every record there:
//!
//! ```
//! use std::io;
//! use std::time::Duration;
//! use tenacious::Policy;
//! use tenacious::stats::{self, CallStats};
//!
//! static LOOKUP: CallStats = CallStats::new("lookup");
//! const POLICY: Policy = Policy::new().base(Duration::ZERO).stats(&LOOKUP);
//!
//! for round in 0..4 {
//!     let mut attempt = 0;
//!     let _ = POLICY.retry_blocking(|| {
//!         attempt += 1;
//!         // Every other call times out once, then succeeds.
//!         if round % 2 == 0 && attempt == 1 {
//!             Err(io::Error::from(io::ErrorKind::TimedOut))
//!         } else {
//!             Ok(attempt)
//!         }
//!     });
//! }
//!
//! let snapshot = stats::snapshot();
//! let lookup = snapshot.get("lookup").unwrap();
//! assert_eq!(lookup.retry_rate(), Some(0.5));
//! assert_eq!(lookup.retry_success_rate(), Some(1.0));
//! assert_eq!(lookup.mean_attempts(), Some(1.5));
//! println!("{snapshot}");
//! ```
//!
//! printing
//!
//! ```text
//! fn      calls  attempts  retried  recovered  retry rate  retry success  mean attempts  refused  gave up
//! lookup      4         6        2          2       50.0%         100.0%           1.50        0  0
//! total       4         6        2          2       50.0%         100.0%           1.50        0  0
//!
//! fn      class      errors   share  variants
//! lookup  transient       2  100.0%  TimedOut 2
//! total   transient       2  100.0%  TimedOut 2
//! ```
//!
//! # Consistency
//!
//! A snapshot taken while calls run is consistent: however the counts
//! interleave with the calls ending, every row (and the total) satisfies
//!
//! - `retried <= calls` and `recovered <= retried`,
//! - `recovered + gave_up_total <= calls`, `refused <= gave_up_total`,
//! - `calls - refused <= attempts`, and `retries >= retried`,
//!
//! so the retry rate and the retry success rate stay within 0 and 100 %,
//! and mean attempts at 1 or more. A call that ends meanwhile may be
//! counted in part: in `attempts` but not yet in `calls`, in `calls` but not
//! yet in `retried`, and so on down that chain. A call counts its counters
//! in one order (attempts, calls, retried, then recovered or gave up), each
//! after the first with `Release`, and a snapshot reads them in the reverse
//! order with `Acquire`: having seen a call's later counter, it sees the
//! earlier ones. A call that succeeds at once adds to one counter, with a
//! relaxed addition, that stands for both a call and an attempt. The
//! error distribution is counted per attempt as it fails, so it may be
//! ahead of the calls (and of a call dropped mid-way). [`reset`] is the
//! exception: calls that run while it zeroes the counters can leave them
//! off by those calls until the next reset.
//!
//! The stream figures are counted as the stream wrapper reports them,
//! apart from the calls (a stream's call is counted when it returns), with
//! relaxed additions, save that a snapshot never shows a mean time to
//! first item above the max: a stream adds its time to the sum last, with
//! `Release`, and a snapshot reads the sum first, with `Acquire`.
//!
//! A call a provider guard refused before its first attempt (an open
//! breaker, a cooldown it could not wait for) made no attempt, and is
//! counted as a call and in [`FnStats::refused`] (and by its reason in
//! `gave up`), so `calls` is the load callers put on the fn; the guard
//! counts it too, in its row of [`Snapshot::guards`] (`stopped`). The
//! retry rate and mean attempts are of the calls that made an attempt.
//!
//! The same record feeds the `tracing` events and the `metrics` of the
//! features of those names: a call without a record (a `#[retry(stats =
//! false)]` fn, a [`Policy`](crate::Policy) not given one) is not observed
//! at all.
mod guards;
#[cfg(feature = "metrics")]
mod metric_keys;
mod record;
mod registry;
mod snapshot;

pub(crate) use guards::guard_name;
pub use guards::{GuardRecord, GuardStats};
#[cfg(feature = "metrics")]
pub(crate) use metric_keys::ErrorKeys;
pub use record::CallStats;
#[cfg(feature = "metrics")]
pub(crate) use record::{VariantSlot, limit_index};
pub use snapshot::{ErrorCount, FnStats, Snapshot};

#[cfg(feature = "tracing")]
pub use crate::observe::levels::{GiveUpLevels, give_up_levels, set_give_up_levels};

/// Every record that has counted a call or an error, read now: each fn's
/// counts and figures, by name, and their total; and each provider guard a
/// call has asked ([`Snapshot::guards`]).
///
/// Not on any call path: it allocates the rows it returns. A snapshot
/// taken while calls run is consistent (see [Consistency](self#consistency)):
/// calls ending meanwhile may be counted in part, never so that a figure
/// leaves its range.
#[must_use]
pub fn snapshot() -> Snapshot {
    Snapshot::from_records(
        registry::records().map(CallStats::snapshot),
        guards::records().map(GuardRecord::snapshot),
    )
}

/// Sets every registered record's counters back to zero (see
/// [`CallStats::reset`]).
///
/// For tests and demos that print a table of their own runs only; calls
/// running meanwhile may be counted in part.
pub fn reset() {
    registry::records().for_each(CallStats::reset);
    guards::records().for_each(GuardRecord::reset);
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;

    use std::time::Duration;

    use super::*;
    use crate::observe::{stream_first_item, stream_partial, stream_resume, stream_stall};
    use crate::{ErrorClass, Limit, StopReason};

    #[test]
    fn records_racing_to_register_all_join_once() {
        const THREADS: usize = 8;
        static RECORDS: [CallStats; 4] = [
            CallStats::new("race::a"),
            CallStats::new("race::b"),
            CallStats::new("race::c"),
            CallStats::new("race::d"),
        ];
        let start = Barrier::new(THREADS);
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    for (i, record) in RECORDS.iter().enumerate() {
                        // Half the threads count a success, half an error first.
                        if (thread + i) % 2 == 0 {
                            record.count_success(1);
                        } else {
                            record.count_error(ErrorClass::Transient, "Timeout");
                            record.count_give_up(1, StopReason::Exhausted);
                        }
                    }
                });
            }
        });
        for record in &RECORDS {
            let joined = registry::records()
                .filter(|r| std::ptr::eq(*r, record))
                .count();
            assert_eq!(joined, 1, "{}", record.name());
            let stats = record.snapshot();
            assert_eq!(stats.calls(), THREADS as u64);
            assert_eq!(stats.gave_up_total(), THREADS as u64 / 2);
            assert_eq!(stats.error_total(), THREADS as u64 / 2);
        }
    }

    #[test]
    fn each_variant_and_class_pair_gets_a_slot_until_they_run_out() {
        static RECORD: CallStats = CallStats::new("slots");
        static NAMES: [&str; 20] = [
            "V0", "V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9", "V10", "V11", "V12", "V13",
            "V14", "V15", "V16", "V17", "V18", "V19",
        ];
        // The same text from another place (another codegen unit's copy)
        // is the same variant.
        let v0_elsewhere: &'static str = String::from("V0").leak();
        assert!(
            RECORD
                .count_error(ErrorClass::Transient, NAMES[0])
                .is_some()
        );
        assert!(
            RECORD
                .count_error(ErrorClass::Transient, v0_elsewhere)
                .is_some()
        );
        // The same name in another class is another pair.
        assert!(RECORD.count_error(ErrorClass::Fatal, NAMES[0]).is_some());
        for name in &NAMES[1..] {
            let _ = RECORD.count_error(ErrorClass::Invalid, name);
        }
        let stats = RECORD.snapshot();
        let count = |class, variant| {
            stats
                .errors()
                .iter()
                .find(|e| e.class == class && e.variant == variant)
                .map(|e| e.count)
        };
        assert_eq!(count(ErrorClass::Transient, "V0"), Some(2));
        assert_eq!(count(ErrorClass::Fatal, "V0"), Some(1));
        // 16 slots: V0 twice, then V1..=V14; V15..=V19 overflow.
        assert_eq!(count(ErrorClass::Invalid, "V14"), Some(1));
        assert_eq!(count(ErrorClass::Invalid, "V15"), None);
        assert_eq!(count(ErrorClass::Invalid, record::OTHER_VARIANT), Some(5));
        assert_eq!(stats.errors_of(ErrorClass::Invalid), 19);
        assert_eq!(stats.error_total(), 22);
        assert!(RECORD.count_error(ErrorClass::Invalid, "V19").is_none());

        RECORD.reset();
        let stats = RECORD.snapshot();
        assert_eq!((stats.calls(), stats.error_total()), (0, 0));
        assert!(stats.errors().is_empty());
        // Still registered, and the slots keep their pairs.
        assert!(registry::records().any(|r| std::ptr::eq(r, &RECORD)));
        assert!(RECORD.count_error(ErrorClass::Invalid, "V14").is_some());
    }

    #[test]
    fn the_stream_hooks_count_into_the_record() {
        static RECORD: CallStats = CallStats::new("stream::counted");
        let ms = Duration::from_millis;
        stream_first_item(&RECORD, ms(100));
        stream_first_item(&RECORD, ms(400));
        stream_first_item(&RECORD, ms(250));
        stream_stall(&RECORD, Limit::FirstItem);
        stream_stall(&RECORD, Limit::Idle);
        stream_stall(&RECORD, Limit::Idle);
        stream_stall(&RECORD, Limit::Deadline);
        stream_resume(&RECORD, 12);
        stream_partial(&RECORD, 7, StopReason::PartialOutput);
        stream_partial(&RECORD, 3, StopReason::Exhausted);

        let stats = RECORD.snapshot();
        assert_eq!(stats.streams(), 3);
        assert_eq!(stats.first_item_mean(), Some(ms(250)));
        assert_eq!(stats.first_item_max(), Some(ms(400)));
        assert_eq!(stats.stalls(), 4);
        assert_eq!(
            [
                Limit::Timeout,
                Limit::FirstItem,
                Limit::Idle,
                Limit::Deadline
            ]
            .map(|limit| stats.stalls_of(limit)),
            [0, 1, 2, 1]
        );
        assert_eq!(stats.resumes(), 1);
        assert_eq!((stats.partial_failures(), stats.partial_items()), (2, 10));
        // The hooks count no call: the engine's own hooks do.
        assert_eq!(
            (stats.calls(), stats.attempts(), stats.gave_up_total()),
            (0, 0, 0)
        );
        // Counting joined the registry, so the record has its row.
        let snapshot = snapshot();
        let row = snapshot.get("stream::counted").unwrap();
        assert_eq!((row.streams(), row.stalls()), (3, 4));

        RECORD.reset();
        let stats = RECORD.snapshot();
        assert_eq!((stats.streams(), stats.first_item_mean()), (0, None));
        assert_eq!(stats.first_item_max(), None);
        assert_eq!((stats.stalls(), stats.resumes()), (0, 0));
        assert_eq!((stats.partial_failures(), stats.partial_items()), (0, 0));
    }

    #[test]
    fn stream_sums_saturate() {
        static RECORD: CallStats = CallStats::new("stream::saturated");
        stream_first_item(&RECORD, Duration::MAX);
        stream_first_item(&RECORD, Duration::MAX);
        stream_partial(&RECORD, u64::MAX, StopReason::PartialOutput);
        stream_partial(&RECORD, 1, StopReason::PartialOutput);
        let stats = RECORD.snapshot();
        let top = Duration::from_nanos(u64::MAX);
        assert_eq!(stats.first_item_max(), Some(top));
        assert_eq!(
            stats.first_item_mean(),
            Some(Duration::from_nanos(u64::MAX / 2))
        );
        assert_eq!(
            (stats.partial_failures(), stats.partial_items()),
            (2, u64::MAX)
        );
    }

    #[test]
    fn the_mean_time_to_first_item_never_exceeds_the_max_while_streams_commit() {
        static RECORD: CallStats = CallStats::new("stream::racing");
        const WRITERS: usize = 3;
        const STREAMS: u64 = 2_000;
        let start = Barrier::new(WRITERS + 1);
        std::thread::scope(|scope| {
            for writer in 0..WRITERS {
                let start = &start;
                scope.spawn(move || {
                    start.wait();
                    for n in 0..STREAMS {
                        // Each writer's times rise, so the max keeps moving.
                        let after = Duration::from_micros(n * (writer as u64 + 1));
                        stream_first_item(&RECORD, after);
                    }
                });
            }
            start.wait();
            loop {
                let stats = RECORD.snapshot();
                if let Some(mean) = stats.first_item_mean() {
                    assert!(mean <= stats.first_item_max().unwrap(), "{stats:?}");
                }
                if stats.streams() == WRITERS as u64 * STREAMS {
                    break;
                }
            }
        });
        let stats = RECORD.snapshot();
        assert_eq!(
            stats.first_item_max(),
            Some(Duration::from_micros((STREAMS - 1) * WRITERS as u64))
        );
    }
}
