//! What [`snapshot`](super::snapshot) returns: each fn's counts, the four
//! figures, its streams' figures, and the tables `Display` prints.
mod streams;
mod table;

use std::time::Duration;

use super::GuardStats;
use crate::{ErrorClass, StopReason};
pub(super) use streams::StreamCounts;

/// How often one kind of error was met: a (class, variant) pair of the
/// error distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ErrorCount {
    /// The errors' class.
    pub class: ErrorClass,
    /// Their [`variant`](crate::Classify::variant); `"(other)"` for the
    /// errors of a class whose variants found no free slot in the record
    /// (it counts 16 pairs one by one).
    pub variant: &'static str,
    /// Failed attempts that met it.
    pub count: u64,
}

/// One retried fn's statistics at the moment of the snapshot: the counts,
/// and the four figures operators watch, computed from them.
///
/// - **retry rate**: the share of calls that retried at least once,
///   [`retried`](FnStats::retried) / [`calls`](FnStats::calls);
/// - **retry success rate**: the share of those that then succeeded,
///   [`recovered`](FnStats::recovered) / [`retried`](FnStats::retried);
/// - **mean attempts per call**: [`attempts`](FnStats::attempts) /
///   [`calls`](FnStats::calls);
/// - **error distribution**: failed attempts by class and by variant,
///   [`errors`](FnStats::errors), with each one's share of all of them.
///
/// A high retry rate with a high success rate is retrying doing its job;
/// a falling success rate, or mean attempts near `max`, is retrying hiding
/// a fault.
///
/// A fn whose calls are retried streams has their figures too, all zero
/// (or `None`) for a fn that opens none: the streams that committed
/// ([`streams`](FnStats::streams)) and how long their first item took
/// ([`first_item_mean`](FnStats::first_item_mean),
/// [`first_item_max`](FnStats::first_item_max)), the stream timers that ran
/// out ([`stalls`](FnStats::stalls)), the reconnections
/// ([`resumes`](FnStats::resumes)), and the streams that failed after
/// delivering items ([`partial_failures`](FnStats::partial_failures),
/// [`partial_items`](FnStats::partial_items)).
///
/// ```
/// use std::io;
/// use std::time::Duration;
/// use tenacious::{ErrorClass, Policy, StopReason};
/// use tenacious::stats::CallStats;
///
/// static FETCH: CallStats = CallStats::new("fetch");
/// const POLICY: Policy = Policy::new().max(2).base(Duration::ZERO).stats(&FETCH);
///
/// let timed_out = || io::Error::from(io::ErrorKind::TimedOut);
/// let _ = POLICY.retry_blocking(|| Ok::<_, io::Error>(1)); // at once
/// let mut first = true;
/// let _ = POLICY.retry_blocking(|| {
///     if std::mem::take(&mut first) { Err(timed_out()) } else { Ok(2) } // recovered
/// });
/// let _ = POLICY.retry_blocking(|| Err::<(), _>(timed_out())); // exhausted
/// let _ = POLICY.retry_blocking(|| Err::<(), _>(io::Error::from(io::ErrorKind::NotFound)));
///
/// let stats = FETCH.snapshot();
/// assert_eq!((stats.calls(), stats.attempts(), stats.retries()), (4, 6, 2));
/// assert_eq!(stats.retry_rate(), Some(0.5)); // 2 of 4 calls retried
/// assert_eq!(stats.retry_success_rate(), Some(0.5)); // 1 of those 2 succeeded
/// assert_eq!(stats.mean_attempts(), Some(1.5));
/// assert_eq!(stats.gave_up(StopReason::Exhausted), 1);
/// assert_eq!(stats.gave_up(StopReason::NotRetryable), 1);
/// assert_eq!(stats.errors_of(ErrorClass::Transient), 3);
/// assert_eq!(stats.class_share(ErrorClass::Invalid), Some(0.25));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FnStats {
    name: &'static str,
    calls: u64,
    attempts: u64,
    retried: u64,
    recovered: u64,
    gave_up: [u64; StopReason::ALL.len()],
    /// By count, largest first.
    errors: Vec<ErrorCount>,
    stream: StreamCounts,
    fallbacks: u64,
    refused: u64,
    silence_limit: Option<Duration>,
}

impl FnStats {
    pub(super) fn new(
        name: &'static str,
        calls: u64,
        attempts: u64,
        retried: u64,
        recovered: u64,
        gave_up: [u64; StopReason::ALL.len()],
        errors: Vec<ErrorCount>,
    ) -> Self {
        let mut stats = Self {
            name,
            calls,
            attempts,
            retried,
            recovered,
            gave_up,
            errors: Vec::new(),
            stream: StreamCounts::default(),
            fallbacks: 0,
            refused: 0,
            silence_limit: None,
        };
        stats.add_errors(&errors);
        stats
    }

    /// The same counts, with a route target's learnt silence limit.
    pub(super) const fn with_silence_limit(mut self, limit: Option<Duration>) -> Self {
        self.silence_limit = limit;
        self
    }

    /// For the record of a route target that
    /// [learns its silence](crate::route::Target::learn_silence): the
    /// limit it learnt from its answers — SRTT + 4·RTTVAR of its recent
    /// successes, doubled for each silence since, at least its floor;
    /// the written limit still caps it when it is applied. `None` for
    /// any other record, and before the target's first answer.
    #[must_use]
    pub const fn silence_limit(&self) -> Option<Duration> {
        self.silence_limit
    }

    /// The same counts, with `fallbacks` give-ups a fallback answered.
    pub(super) const fn with_fallbacks(mut self, fallbacks: u64) -> Self {
        self.fallbacks = fallbacks;
        self
    }

    /// Calls that gave up and whose `fallback`
    /// (`#[retry(fallback = path)]`) answered instead; each is also
    /// counted in [`gave_up`](FnStats::gave_up) by why it stopped.
    /// 0 for a fn without one.
    ///
    /// ```
    /// use tenacious::stats::CallStats;
    ///
    /// static SEARCH: CallStats = CallStats::new("search");
    /// assert_eq!(SEARCH.snapshot().fallbacks(), 0);
    /// ```
    #[must_use]
    pub const fn fallbacks(&self) -> u64 {
        self.fallbacks
    }

    /// The same counts, with `refused` of the calls refused before their
    /// first attempt.
    pub(super) const fn with_refused(mut self, refused: u64) -> Self {
        self.refused = refused;
        self
    }

    /// Calls a guard refused before their first attempt (an open breaker,
    /// a cooldown or a throttle the call could not wait for, a guard of
    /// your own): they sent nothing, made no attempt, and are counted in
    /// [`calls`](FnStats::calls) and, by why they stopped, in
    /// [`gave_up`](FnStats::gave_up) too. The load a fn put on its callers
    /// is `calls`; on the provider, `calls - refused`.
    ///
    /// ```
    /// use std::io;
    /// use tenacious::{Admit, Guard, NextAttempt, Outcome, Policy, StopReason};
    /// use tenacious::stats::CallStats;
    ///
    /// #[derive(Debug)]
    /// struct Shut;
    /// impl Guard for Shut {
    ///     fn admit(&self, _: &NextAttempt) -> Admit {
    ///         Admit::Stop(StopReason::CircuitOpen)
    ///     }
    ///     fn observe(&self, _: &Outcome) {}
    /// }
    /// static SHUT: Shut = Shut;
    /// static TOOL: CallStats = CallStats::new("tool");
    /// const POLICY: Policy = Policy::new().guard(&SHUT).stats(&TOOL);
    ///
    /// let result = POLICY.retry_blocking(|| Ok::<_, io::Error>(1));
    /// assert!(result.is_err());
    /// let stats = TOOL.snapshot();
    /// assert_eq!((stats.calls(), stats.refused(), stats.attempts()), (1, 1, 0));
    /// assert_eq!(stats.gave_up(StopReason::CircuitOpen), 1);
    /// assert_eq!(stats.mean_attempts(), None);
    /// ```
    #[must_use]
    pub const fn refused(&self) -> u64 {
        self.refused
    }

    /// Calls that made at least one attempt: [`calls`](FnStats::calls)
    /// but the [`refused`](FnStats::refused) ones.
    #[must_use]
    pub const fn sent(&self) -> u64 {
        self.calls.saturating_sub(self.refused)
    }

    /// The same counts, with `stream` for the stream counters.
    pub(super) const fn with_streams(mut self, stream: StreamCounts) -> Self {
        self.stream = stream;
        self
    }

    /// The record's name: `module::path::fn_name` for a `#[retry]` fn,
    /// `"total"` for [`Snapshot::total`].
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Calls that returned, successfully or not, the
    /// [`refused`](FnStats::refused) ones included.
    #[must_use]
    pub const fn calls(&self) -> u64 {
        self.calls
    }

    /// Attempts those calls made, the first ones included.
    #[must_use]
    pub const fn attempts(&self) -> u64 {
        self.attempts
    }

    /// Retries those calls made: attempts beyond each call's first.
    #[must_use]
    pub const fn retries(&self) -> u64 {
        self.attempts.saturating_sub(self.sent())
    }

    /// Calls that retried at least once.
    #[must_use]
    pub const fn retried(&self) -> u64 {
        self.retried
    }

    /// Calls that retried at least once and then succeeded.
    #[must_use]
    pub const fn recovered(&self) -> u64 {
        self.recovered
    }

    /// Calls that returned an error after stopping for `reason`.
    ///
    /// Every call that returns an error stopped for some reason, so this
    /// counts [`StopReason::NotRetryable`] (an error the policy does not
    /// retry) and [`StopReason::Nested`] too, next to the limits.
    #[must_use]
    pub const fn gave_up(&self, reason: StopReason) -> u64 {
        self.gave_up[reason.index()]
    }

    /// Calls that returned an error, whatever the reason.
    #[must_use]
    pub fn gave_up_total(&self) -> u64 {
        self.gave_up.iter().fold(0, |sum, n| sum.saturating_add(*n))
    }

    /// The error distribution: failed attempts by class and variant,
    /// largest count first.
    #[must_use]
    pub fn errors(&self) -> &[ErrorCount] {
        &self.errors
    }

    /// Failed attempts, every class.
    #[must_use]
    pub fn error_total(&self) -> u64 {
        self.errors
            .iter()
            .fold(0, |sum, e| sum.saturating_add(e.count))
    }

    /// Failed attempts whose error was of `class`.
    #[must_use]
    pub fn errors_of(&self, class: ErrorClass) -> u64 {
        self.errors
            .iter()
            .filter(|e| e.class == class)
            .fold(0, |sum, e| sum.saturating_add(e.count))
    }

    /// The share of failed attempts whose error was of `class`; `None`
    /// without errors.
    #[must_use]
    pub fn class_share(&self, class: ErrorClass) -> Option<f64> {
        ratio(self.errors_of(class), self.error_total())
    }

    /// The share of `count` failed attempts in all of them, as for an
    /// [`ErrorCount`]; `None` without errors.
    #[must_use]
    pub fn error_share(&self, count: u64) -> Option<f64> {
        ratio(count, self.error_total())
    }

    /// Retry rate: the share of calls that retried at least once, among
    /// those that made an attempt ([`sent`](FnStats::sent)); `None` before
    /// any such call returned.
    #[must_use]
    pub fn retry_rate(&self) -> Option<f64> {
        ratio(self.retried, self.sent())
    }

    /// Retry success rate: the share of calls that retried and then
    /// succeeded, among the calls that retried; `None` if none retried.
    #[must_use]
    pub fn retry_success_rate(&self) -> Option<f64> {
        ratio(self.recovered, self.retried)
    }

    /// Mean attempts per call that made one ([`sent`](FnStats::sent)), so
    /// refused calls do not hide a retry storm; `None` before any such
    /// call returned.
    #[must_use]
    pub fn mean_attempts(&self) -> Option<f64> {
        ratio(self.attempts, self.sent())
    }

    /// Adds `other`'s counts to these.
    pub(super) fn merge(&mut self, other: &Self) {
        self.calls = self.calls.saturating_add(other.calls);
        self.attempts = self.attempts.saturating_add(other.attempts);
        self.retried = self.retried.saturating_add(other.retried);
        self.recovered = self.recovered.saturating_add(other.recovered);
        self.refused = self.refused.saturating_add(other.refused);
        for (sum, n) in self.gave_up.iter_mut().zip(other.gave_up) {
            *sum = sum.saturating_add(n);
        }
        self.add_errors(&other.errors);
        self.stream.merge(&other.stream);
        self.fallbacks = self.fallbacks.saturating_add(other.fallbacks);
    }

    /// Adds `errors` to the distribution, merging equal (class, variant)
    /// pairs, and keeps it sorted.
    fn add_errors(&mut self, errors: &[ErrorCount]) {
        for error in errors.iter().filter(|e| e.count > 0) {
            match self
                .errors
                .iter_mut()
                .find(|e| e.class == error.class && e.variant == error.variant)
            {
                Some(same) => same.count = same.count.saturating_add(error.count),
                None => self.errors.push(*error),
            }
        }
        self.errors.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then(a.class.index().cmp(&b.class.index()))
                .then(a.variant.cmp(b.variant))
        });
    }

    fn empty(name: &'static str) -> Self {
        Self::new(name, 0, 0, 0, 0, [0; StopReason::ALL.len()], Vec::new())
    }
}

/// `part / whole`, `None` for an empty whole.
#[allow(clippy::cast_precision_loss)] // counts far beyond 2^52 are not a concern for a ratio
fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// Every fn's statistics, taken by [`snapshot`](super::snapshot).
///
/// `Display` prints aligned tables: the four figures per fn and in total,
/// then the error distribution; the figures of the fns that had retried
/// streams, if any did; and the provider guards, if a call asked one.
/// Records with the same name are merged into one row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// By name.
    fns: Vec<FnStats>,
    total: FnStats,
    /// By name and kind.
    guards: Vec<GuardStats>,
}

impl Snapshot {
    pub(super) fn from_records(
        records: impl IntoIterator<Item = FnStats>,
        guard_records: impl IntoIterator<Item = GuardStats>,
    ) -> Self {
        let mut guards: Vec<GuardStats> = Vec::new();
        for stats in guard_records {
            match guards
                .iter_mut()
                .find(|g| g.name == stats.name && g.kind == stats.kind)
            {
                Some(same) => {
                    same.waits += stats.waits;
                    same.waited = same.waited.saturating_add(stats.waited);
                    same.stopped += stats.stopped;
                    same.changes += stats.changes;
                }
                None => guards.push(stats),
            }
        }
        guards.sort_by(|a, b| (a.name, a.kind).cmp(&(b.name, b.kind)));
        let mut fns: Vec<FnStats> = Vec::new();
        for stats in records {
            match fns.iter_mut().find(|f| f.name == stats.name) {
                Some(same) => same.merge(&stats),
                None => fns.push(stats),
            }
        }
        fns.sort_by(|a, b| a.name.cmp(b.name));
        let mut total = FnStats::empty("total");
        for stats in &fns {
            total.merge(stats);
        }
        Self { fns, total, guards }
    }

    /// A snapshot of fn records only.
    #[cfg(test)]
    fn from_fns(records: impl IntoIterator<Item = FnStats>) -> Self {
        Self::from_records(records, [])
    }

    /// Each provider guard a call has asked, by name and kind: the waits
    /// it asked for, the time they add up to, the calls it stopped and its
    /// changes of state (see [`GuardRecord`](super::GuardRecord)).
    #[must_use]
    pub fn guards(&self) -> &[GuardStats] {
        &self.guards
    }

    /// The guard named `name`, if a call has asked it.
    #[must_use]
    pub fn guard(&self, name: &str) -> Option<&GuardStats> {
        self.guards.iter().find(|g| g.name == name)
    }

    /// Each fn that has counted a call or an error, by name.
    #[must_use]
    pub fn fns(&self) -> &[FnStats] {
        &self.fns
    }

    /// The fn named `name` (as [`FnStats::name`]), if it has run.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&FnStats> {
        self.fns.iter().find(|f| f.name == name)
    }

    /// Every fn's counts added up, named `"total"`.
    #[must_use]
    pub const fn total(&self) -> &FnStats {
        &self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limit;
    use std::time::Duration;

    fn counts(
        name: &'static str,
        calls: u64,
        attempts: u64,
        retried: u64,
        recovered: u64,
        errors: &[(ErrorClass, &'static str, u64)],
    ) -> FnStats {
        let mut gave_up = [0; StopReason::ALL.len()];
        gave_up[StopReason::Exhausted.index()] = retried - recovered;
        let errors = errors
            .iter()
            .map(|&(class, variant, count)| ErrorCount {
                class,
                variant,
                count,
            })
            .collect();
        FnStats::new(name, calls, attempts, retried, recovered, gave_up, errors)
    }

    #[test]
    fn the_table_aligns_its_columns_to_the_widest_cell() {
        let snapshot = Snapshot::from_fns([
            counts(
                "agent::search",
                200,
                263,
                52,
                49,
                &[
                    (ErrorClass::Transient, "Timeout", 40),
                    (ErrorClass::RateLimited, "TooManyRequests", 23),
                    (ErrorClass::Transient, "Reset", 3),
                ],
            ),
            counts("agent::fetch", 10, 10, 0, 0, &[]),
        ]);
        let expected = "\
fn             calls  attempts  retried  recovered  retry rate  retry success  mean attempts  refused  gave up
agent::fetch      10        10        0          0        0.0%              -           1.00        0  0
agent::search    200       263       52         49       26.0%          94.2%           1.31        0  3 (exhausted 3)
total            210       273       52         49       24.8%          94.2%           1.30        0  3 (exhausted 3)

fn             class         errors  share  variants
agent::search  transient         43  65.2%  Timeout 40, Reset 3
               rate_limited      23  34.8%  TooManyRequests 23
total          transient         43  65.2%  Timeout 40, Reset 3
               rate_limited      23  34.8%  TooManyRequests 23
";
        assert_eq!(snapshot.to_string(), expected);
    }

    #[test]
    fn an_empty_snapshot_prints_the_header_and_a_zero_total() {
        let snapshot = Snapshot::from_fns([]);
        assert_eq!(
            snapshot.to_string(),
            "fn     calls  attempts  retried  recovered  retry rate  retry success  mean attempts  refused  gave up\n\
             total      0         0        0          0           -              -              -        0  0\n"
        );
        let total = snapshot.total();
        assert_eq!(
            (
                total.retry_rate(),
                total.retry_success_rate(),
                total.mean_attempts()
            ),
            (None, None, None)
        );
        assert_eq!(total.class_share(ErrorClass::Fatal), None);
    }

    #[test]
    fn records_of_one_name_are_one_row_and_equal_errors_one_entry() {
        let snapshot = Snapshot::from_fns([
            counts("b", 1, 2, 1, 1, &[(ErrorClass::Transient, "Timeout", 1)]),
            counts("a", 4, 4, 0, 0, &[(ErrorClass::Invalid, "Bad", 2)]),
            counts("b", 3, 5, 2, 1, &[(ErrorClass::Transient, "Timeout", 3)]),
        ]);
        let names: Vec<_> = snapshot.fns().iter().map(FnStats::name).collect();
        assert_eq!(names, ["a", "b"]);
        let b = snapshot.get("b").unwrap();
        assert_eq!((b.calls(), b.attempts(), b.retries()), (4, 7, 3));
        assert_eq!((b.retried(), b.recovered()), (3, 2));
        assert_eq!(b.gave_up(StopReason::Exhausted), 1);
        assert_eq!(b.errors().len(), 1);
        assert_eq!(b.errors()[0].count, 4);
        let total = snapshot.total();
        assert_eq!(total.name(), "total");
        assert_eq!(total.error_total(), 6);
        // Largest first, whatever the order they were counted in.
        assert_eq!(total.errors()[0].variant, "Timeout");
        assert_eq!(total.error_share(4), Some(4.0 / 6.0));
        assert_eq!(total.class_share(ErrorClass::Invalid), Some(2.0 / 6.0));
        assert!(snapshot.get("c").is_none());
    }

    #[test]
    fn counts_near_the_top_saturate() {
        let big = counts(
            "big",
            u64::MAX,
            u64::MAX,
            u64::MAX,
            u64::MAX,
            &[(ErrorClass::Fatal, "F", u64::MAX)],
        );
        let snapshot = Snapshot::from_fns([big.clone(), big]);
        let total = snapshot.total();
        assert_eq!(total.calls(), u64::MAX);
        assert_eq!(total.errors_of(ErrorClass::Fatal), u64::MAX);
        assert_eq!(total.retry_rate(), Some(1.0));
        assert!(!snapshot.to_string().is_empty());
    }

    /// `stats` with these stream counts.
    fn streamed(
        stats: FnStats,
        streams: u64,
        first_item_ms: [u64; 2],
        stalls: [u64; 4],
    ) -> FnStats {
        let [sum, max] = first_item_ms.map(|ms| ms * 1_000_000);
        stats.with_streams(StreamCounts {
            streams,
            first_item_nanos: sum,
            first_item_max: max,
            stalls,
            resumes: 2,
            partial: 1,
            partial_items: 40,
        })
    }

    #[test]
    fn the_streams_table_lists_the_fns_that_had_streams_only() {
        let snapshot = Snapshot::from_fns([
            counts("agent::fetch", 10, 10, 0, 0, &[]),
            streamed(
                counts(
                    "agent::chat",
                    4,
                    6,
                    2,
                    1,
                    &[(ErrorClass::Transient, "Idle", 2)],
                ),
                4,
                [1_650, 900],
                [0, 1, 2, 0],
            ),
        ]);
        let expected = "\
fn            calls  attempts  retried  recovered  retry rate  retry success  mean attempts  refused  gave up
agent::chat       4         6        2          1       50.0%          50.0%           1.50        0  1 (exhausted 1)
agent::fetch     10        10        0          0        0.0%              -           1.00        0  0
total            14        16        2          1       14.3%          50.0%           1.14        0  1 (exhausted 1)

fn           class      errors   share  variants
agent::chat  transient       2  100.0%  Idle 2
total        transient       2  100.0%  Idle 2

fn           streams  first item mean  first item max  resumes  partial  partial items  stalls
agent::chat        4          412.5ms         900.0ms        2        1             40  3 (first_item 1, idle 2)
total              4          412.5ms         900.0ms        2        1             40  3 (first_item 1, idle 2)
";
        assert_eq!(snapshot.to_string(), expected);

        // Without streams, no streams table.
        let plain = Snapshot::from_fns([counts("agent::fetch", 10, 10, 0, 0, &[])]);
        assert!(!plain.to_string().contains("streams"));
    }

    #[test]
    fn records_of_one_name_add_their_streams_and_keep_the_longest_first_item() {
        let snapshot = Snapshot::from_fns([
            streamed(
                counts("chat", 1, 1, 0, 0, &[]),
                2,
                [3_000, 2_500],
                [0, 1, 0, 0],
            ),
            streamed(
                counts("chat", 1, 1, 0, 0, &[]),
                1,
                [1_500, 1_500],
                [0, 0, 1, 1],
            ),
            counts("plain", 1, 1, 0, 0, &[]),
        ]);
        let chat = snapshot.get("chat").unwrap();
        assert_eq!(chat.streams(), 3);
        assert_eq!(chat.first_item_mean(), Some(Duration::from_millis(1_500)));
        assert_eq!(chat.first_item_max(), Some(Duration::from_millis(2_500)));
        assert_eq!((chat.stalls(), chat.stalls_of(Limit::Idle)), (3, 1));
        assert_eq!(chat.resumes(), 4);
        assert_eq!((chat.partial_failures(), chat.partial_items()), (2, 80));
        let plain = snapshot.get("plain").unwrap();
        assert_eq!((plain.streams(), plain.first_item_max()), (0, None));
        let total = snapshot.total();
        assert_eq!(total.streams(), 3);
        assert_eq!(total.first_item_max(), Some(Duration::from_millis(2_500)));
        assert!(snapshot.to_string().contains("2.50s"));
    }
}
