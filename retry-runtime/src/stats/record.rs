//! [`CallStats`]: one retried fn's counters.
use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{self, Acquire, Relaxed, Release};
use std::time::Duration;

use super::registry;
use super::snapshot::{ErrorCount, FnStats, StreamCounts};
use crate::clock::saturating_nanos;
use crate::{ErrorClass, Limit, StopReason};

/// How many distinct (variant, class) pairs a record counts one by one;
/// errors of any further pair are counted per class as `(other)`.
pub(crate) const VARIANT_SLOTS: usize = 16;

/// The name [`FnStats::errors`] gives the errors that found no slot.
pub(crate) const OTHER_VARIANT: &str = "(other)";

/// The statistics of one retried fn (or of the calls of a
/// [`Policy`](crate::Policy) given the record): lock-free counters in a
/// `static`, so counting a call costs one relaxed atomic addition when it
/// succeeds at once and a few atomic additions otherwise, with no lookup,
/// no lock and no allocation.
///
/// Every `#[retry]` fn has one, declared inside its expansion and named
/// `module::path::fn_name` (`#[retry(stats = "name")]` names it,
/// `#[retry(stats = false)]` leaves the fn without one). A generic fn has one
/// record for all its instantiations. Give a [`Policy`](crate::Policy) one
/// with [`Policy::stats`](crate::Policy::stats):
///
/// ```
/// use std::io;
/// use std::time::Duration;
/// use tenacious::Policy;
/// use tenacious::stats::CallStats;
///
/// static SEARCH: CallStats = CallStats::new("search");
/// const POLICY: Policy = Policy::new().base(Duration::ZERO).stats(&SEARCH);
///
/// let mut calls = 0;
/// let hits = POLICY.retry_blocking(|| {
///     calls += 1;
///     if calls == 1 { Err(io::Error::from(io::ErrorKind::TimedOut)) } else { Ok(3) }
/// });
/// assert_eq!(hits.unwrap(), 3);
///
/// let stats = SEARCH.snapshot();
/// assert_eq!((stats.calls(), stats.attempts(), stats.recovered()), (1, 2, 1));
/// assert_eq!(stats.errors()[0].variant, "TimedOut");
/// ```
///
/// A call is counted when it returns (a call dropped mid-way is not
/// counted, but the errors its attempts met are); each failed attempt's
/// error is counted as the engine sees it. A record joins the registry
/// behind [`snapshot`](super::snapshot) the first time it counts anything.
pub struct CallStats {
    name: &'static str,
    /// Calls that succeeded at their first attempt: the happy path adds to
    /// this one counter only, where a call that retried or failed adds to
    /// `calls` and `attempts`.
    clean: AtomicU64,
    calls: AtomicU64,
    attempts: AtomicU64,
    /// Calls that made more than one attempt.
    retried: AtomicU64,
    /// Retried calls that succeeded.
    recovered: AtomicU64,
    /// Calls that returned an error, by [`StopReason::index`].
    gave_up: [AtomicU64; StopReason::ALL.len()],
    variants: [VariantSlot; VARIANT_SLOTS],
    /// Errors that found no free slot, by class.
    other: [AtomicU64; 4],
    /// Calls a guard refused before their first attempt (each also in
    /// `calls` and `gave_up`).
    refused: AtomicU64,
    /// Calls whose give-up a `fallback` answered.
    fallbacks: AtomicU64,
    /// Retried streams that committed (delivered their first content item).
    streams: AtomicU64,
    /// Their times to first item, in nanoseconds, added up (saturating).
    first_item_nanos: AtomicU64,
    /// The longest of those times, in nanoseconds.
    first_item_max: AtomicU64,
    /// Stream timers that ran out, by [`limit_index`].
    stalls: [AtomicU64; LIMITS.len()],
    /// Streams that reconnected to resume.
    resumes: AtomicU64,
    /// Streams that ended with an error after delivering items.
    partial: AtomicU64,
    /// The items those streams had delivered, added up (saturating).
    partial_items: AtomicU64,
    /// A route target's learnt silence limit, in nanoseconds; 0: none.
    silence_limit: AtomicU64,
    registered: AtomicBool,
    next: OnceLock<&'static CallStats>,
    #[cfg(feature = "metrics")]
    pub(crate) metrics: super::metric_keys::RecordMetrics,
}

/// One (variant, class) pair's counter, claimed by the first error of that
/// pair to find the slot free.
pub(crate) struct VariantSlot {
    key: OnceLock<SlotKey>,
    count: AtomicU64,
    #[cfg(feature = "metrics")]
    pub(crate) metrics: super::metric_keys::SlotMetrics,
}

/// What a slot counts.
struct SlotKey {
    variant: &'static str,
    class: ErrorClass,
}

impl SlotKey {
    fn is(&self, variant: &'static str, class: ErrorClass) -> bool {
        // The same variant usually comes back as the same pointer; equal
        // text from another codegen unit still matches.
        self.class == class && (std::ptr::eq(self.variant, variant) || self.variant == variant)
    }
}

impl VariantSlot {
    const fn new() -> Self {
        Self {
            key: OnceLock::new(),
            count: AtomicU64::new(0),
            #[cfg(feature = "metrics")]
            metrics: super::metric_keys::SlotMetrics::new(),
        }
    }
}

impl CallStats {
    /// A record named `name`, with every counter at zero.
    ///
    /// `const`, so it can initialise a `static`. The name labels the
    /// record's row in [`snapshot`](super::snapshot), its tracing events
    /// and its metrics; records with the same name share one row.
    #[must_use]
    pub const fn new(name: &'static str) -> Self {
        Self {
            name,
            clean: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            attempts: AtomicU64::new(0),
            retried: AtomicU64::new(0),
            recovered: AtomicU64::new(0),
            gave_up: [const { AtomicU64::new(0) }; StopReason::ALL.len()],
            variants: [const { VariantSlot::new() }; VARIANT_SLOTS],
            other: [const { AtomicU64::new(0) }; 4],
            refused: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            streams: AtomicU64::new(0),
            first_item_nanos: AtomicU64::new(0),
            first_item_max: AtomicU64::new(0),
            stalls: [const { AtomicU64::new(0) }; LIMITS.len()],
            resumes: AtomicU64::new(0),
            partial: AtomicU64::new(0),
            partial_items: AtomicU64::new(0),
            silence_limit: AtomicU64::new(0),
            registered: AtomicBool::new(false),
            next: OnceLock::new(),
            #[cfg(feature = "metrics")]
            metrics: super::metric_keys::RecordMetrics::new(name),
        }
    }

    /// The record's name.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The record's counts now, with the four figures computed.
    ///
    /// Consistent while calls run (see [the module](super#consistency)):
    /// a call that ends while the counters are read may be counted in
    /// part, never so that a figure leaves its range.
    #[must_use]
    pub fn snapshot(&self) -> FnStats {
        // The reverse of the order `count_end` and its callers write in,
        // each load `Acquire` where the write was `Release`: a call's last
        // counter seen implies its earlier ones are seen too, so each
        // counter read is at least the calls the previous read counted.
        let mut gave_up = [0; StopReason::ALL.len()];
        for (count, counter) in gave_up.iter_mut().zip(&self.gave_up) {
            *count = counter.load(Acquire);
        }
        let recovered = self.recovered.load(Acquire);
        let retried = self.retried.load(Acquire);
        let calls = self.calls.load(Acquire);
        // Read after `calls`, which a refused call counts after it: every
        // refused call in `calls` is in `refused`, so the calls that made
        // an attempt (`calls - refused`) never outnumber the attempts.
        let refused = self.refused.load(Relaxed);
        let attempts = self.attempts.load(Relaxed);
        // A clean call adds one to both calls and attempts: one value
        // read for both keeps them in step.
        let clean = self.clean.load(Relaxed);
        let mut errors = Vec::new();
        for slot in &self.variants {
            if let Some(key) = slot.key.get() {
                errors.push(ErrorCount {
                    class: key.class,
                    variant: key.variant,
                    count: slot.count.load(Relaxed),
                });
            }
        }
        for (class, counter) in ErrorClass::ALL.into_iter().zip(&self.other) {
            let count = counter.load(Relaxed);
            if count > 0 {
                errors.push(ErrorCount {
                    class,
                    variant: OTHER_VARIANT,
                    count,
                });
            }
        }
        FnStats::new(
            self.name,
            clean.saturating_add(calls),
            clean.saturating_add(attempts),
            retried,
            recovered,
            gave_up,
            errors,
        )
        .with_streams(self.stream_counts())
        .with_fallbacks(self.fallbacks.load(Relaxed))
        .with_refused(refused.min(calls))
        .with_silence_limit(match self.silence_limit.load(Relaxed) {
            0 => None,
            nanos => Some(std::time::Duration::from_nanos(nanos)),
        })
    }

    /// A route target's learnt silence limit now (see
    /// [`FnStats::silence_limit`]).
    pub(crate) fn set_silence_limit(&self, limit: std::time::Duration) {
        let nanos = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX).max(1);
        self.silence_limit.store(nanos, Relaxed);
    }

    /// The stream counters now. The sum of the times to first item is read
    /// first, `Acquire`, the reverse of the order `count_stream` writes in:
    /// every stream in the sum is in the count and the max read after it,
    /// so their mean never exceeds their max.
    fn stream_counts(&self) -> StreamCounts {
        let first_item_nanos = self.first_item_nanos.load(Acquire);
        let first_item_max = self.first_item_max.load(Relaxed);
        let streams = self.streams.load(Relaxed);
        let mut stalls = [0; LIMITS.len()];
        for (count, counter) in stalls.iter_mut().zip(&self.stalls) {
            *count = counter.load(Relaxed);
        }
        StreamCounts {
            streams,
            first_item_nanos,
            first_item_max,
            stalls,
            resumes: self.resumes.load(Relaxed),
            partial: self.partial.load(Relaxed),
            partial_items: self.partial_items.load(Relaxed),
        }
    }

    /// Sets every counter back to zero; the record stays registered and
    /// keeps the variants it has seen (at a count of zero, left out of
    /// snapshots).
    ///
    /// For tests and demos: calls running meanwhile may be counted in part.
    pub fn reset(&self) {
        let counters = [
            &self.clean,
            &self.calls,
            &self.attempts,
            &self.retried,
            &self.recovered,
            &self.refused,
            &self.fallbacks,
            &self.streams,
            &self.first_item_nanos,
            &self.first_item_max,
            &self.resumes,
            &self.partial,
            &self.partial_items,
        ];
        let slots = self.variants.iter().map(|slot| &slot.count);
        for counter in counters
            .into_iter()
            .chain(&self.gave_up)
            .chain(&self.other)
            .chain(&self.stalls)
            .chain(slots)
        {
            counter.store(0, Relaxed);
        }
    }

    /// Counts a call that succeeded at its first attempt: one counter,
    /// once the record is registered.
    #[inline]
    pub(crate) fn count_clean(&'static self) {
        if self.registered.load(Relaxed) {
            self.clean.fetch_add(1, Relaxed);
        } else {
            self.count_success(1);
        }
    }

    /// Counts a call that succeeded after `attempts` attempts.
    pub(crate) fn count_success(&'static self, attempts: u32) {
        self.join();
        if attempts <= 1 {
            self.clean.fetch_add(1, Relaxed);
        } else {
            self.count_end(attempts);
            self.recovered.fetch_add(1, Release);
        }
    }

    /// Counts a call that returned an error after `attempts` attempts.
    pub(crate) fn count_give_up(&'static self, attempts: u32, reason: StopReason) {
        self.join();
        self.count_end(attempts);
        self.gave_up[reason.index()].fetch_add(1, Release);
    }

    /// Counts a call a guard refused, for `reason`, before its first
    /// attempt: a call of no attempt, given up. `refused` first, so a
    /// snapshot that sees the call sees it refused (see `snapshot`).
    pub(crate) fn count_refused(&'static self, reason: StopReason) {
        self.join();
        self.refused.fetch_add(1, Relaxed);
        self.count_end(0);
        self.gave_up[reason.index()].fetch_add(1, Release);
    }

    /// Counts a give-up a `fallback` answered (the give-up itself is
    /// counted by `count_give_up`).
    pub(crate) fn count_fallback(&'static self) {
        self.join();
        self.fallbacks.fetch_add(1, Relaxed);
    }

    /// Counts a call that ended after `attempts` attempts (not a clean
    /// one), in the order `snapshot` reads in reverse: attempts, calls,
    /// retried, then (the caller) recovered or gave up, each but the first
    /// `Release`, so whoever sees one of them sees the ones before.
    fn count_end(&self, attempts: u32) {
        self.attempts.fetch_add(u64::from(attempts), Relaxed);
        self.calls.fetch_add(1, Release);
        if attempts > 1 {
            self.retried.fetch_add(1, Release);
        }
    }

    /// Counts one failed attempt's error; returns the slot that counted it
    /// (`None` once every slot holds another pair).
    pub(crate) fn count_error(
        &'static self,
        class: ErrorClass,
        variant: &'static str,
    ) -> Option<&'static VariantSlot> {
        self.join();
        for slot in &self.variants {
            let key = match slot.key.get() {
                Some(key) => key,
                // Free: claim it, unless another pair got there first.
                None => slot.key.get_or_init(|| SlotKey { variant, class }),
            };
            if key.is(variant, class) {
                slot.count.fetch_add(1, Relaxed);
                return Some(slot);
            }
        }
        self.other[class.index()].fetch_add(1, Relaxed);
        None
    }

    /// Counts a retried stream that committed, its first content item
    /// `after` the start of the attempt that delivered it: the count, the
    /// max, then the sum `Release`, the order `stream_counts` reads in
    /// reverse.
    pub(crate) fn count_stream(&'static self, after: Duration) {
        self.join();
        let nanos = saturating_nanos(after);
        self.streams.fetch_add(1, Relaxed);
        self.first_item_max.fetch_max(nanos, Relaxed);
        add_saturating(&self.first_item_nanos, nanos, Release);
    }

    /// Counts a stream timer, `limit`, that ran out.
    pub(crate) fn count_stall(&'static self, limit: Limit) {
        self.join();
        if let Some(index) = limit_index(limit) {
            self.stalls[index].fetch_add(1, Relaxed);
        }
    }

    /// Counts a stream reconnecting to resume.
    pub(crate) fn count_resume(&'static self) {
        self.join();
        self.resumes.fetch_add(1, Relaxed);
    }

    /// Counts a stream that ended with an error after it had delivered
    /// `delivered` items.
    pub(crate) fn count_partial(&'static self, delivered: u64) {
        self.join();
        add_saturating(&self.partial_items, delivered, Relaxed);
        self.partial.fetch_add(1, Relaxed);
    }

    /// Joins the registry on first use.
    #[inline]
    fn join(&'static self) {
        if !self.registered.load(Relaxed) {
            self.join_slow();
        }
    }

    #[cold]
    fn join_slow(&'static self) {
        if !self.registered.swap(true, Relaxed) {
            registry::push(self);
        }
    }

    pub(super) const fn next_link(&self) -> &OnceLock<&'static CallStats> {
        &self.next
    }
}

/// Adds `n` to `counter`, saturating at `u64::MAX`, the store `order`.
fn add_saturating(counter: &AtomicU64, n: u64, order: Ordering) {
    // Always `Some`: the update cannot fail.
    let _ = counter.fetch_update(order, Relaxed, |sum| Some(sum.saturating_add(n)));
}

/// Every timer [`Limit`], in declaration order: the stalls are counted by
/// these ([`Limit::CatchUp`] and [`Limit::Held`] are no timers, nor stalls).
pub(crate) const LIMITS: [Limit; 4] = [
    Limit::Timeout,
    Limit::FirstItem,
    Limit::Idle,
    Limit::Deadline,
];

/// The position of `limit` in [`LIMITS`]; `None` for a limit that is no
/// timer.
pub(crate) const fn limit_index(limit: Limit) -> Option<usize> {
    match limit {
        Limit::Timeout => Some(0),
        Limit::FirstItem => Some(1),
        Limit::Idle => Some(2),
        Limit::Deadline => Some(3),
        Limit::CatchUp | Limit::Held => None,
    }
}

impl fmt::Debug for CallStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CallStats").field(&self.name).finish()
    }
}
