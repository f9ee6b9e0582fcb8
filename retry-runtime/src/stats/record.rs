//! [`CallStats`]: one retried fn's counters.
use std::fmt;
use std::sync::OnceLock;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use super::registry;
use super::snapshot::{ErrorCount, FnStats};
use crate::{ErrorClass, StopReason};

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
        ];
        let slots = self.variants.iter().map(|slot| &slot.count);
        for counter in counters
            .into_iter()
            .chain(&self.gave_up)
            .chain(&self.other)
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
        self.other[class_index(class)].fetch_add(1, Relaxed);
        None
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

/// The position of `class` in [`ErrorClass::ALL`].
pub(crate) const fn class_index(class: ErrorClass) -> usize {
    match class {
        ErrorClass::Transient => 0,
        ErrorClass::RateLimited => 1,
        ErrorClass::Invalid => 2,
        ErrorClass::Fatal => 3,
    }
}

impl fmt::Debug for CallStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CallStats").field(&self.name).finish()
    }
}
