//! [`Explain`]: a policy's schedule worked out from the engine's own
//! formula (`backoff.rs`), what [`Policy::explain`] returns.
mod display;

use std::iter::FusedIterator;
use std::time::Duration;

use crate::policy::backoff::ceiling;
use crate::{Jitter, Policy};

/// A policy's schedule: when each attempt may start, and the longest the
/// whole call can take. Returned by [`Policy::explain`].
///
/// Worked out with the formula the engine draws its delays from, so it
/// says what the policy does, not what it was meant to do: each retry's
/// window under the jitter, capped by `cap`, saturating at `u64`
/// nanoseconds (about 584 years) like the engine. What it leaves out: a
/// server's hint (waited on top of the backoff, up to `max_retry_after`;
/// see [`WorstCase::hints`]), the time the guards ask for, and nesting
/// (inside another retried call a policy makes one attempt, see
/// [`Nested`](crate::Nested)).
///
/// Its `Display` prints the schedule, one run of equal windows a line, so
/// a policy of `u32::MAX` attempts prints a few lines:
///
/// ```
/// use std::time::Duration;
/// use tenacious::Policy;
///
/// let policy = Policy::new(); // 3 attempts, base 200ms, cap 20s, full jitter
/// assert_eq!(
///     policy.explain().to_string(),
///     "3 attempts, full jitter, base 200ms, cap 20s, on transient | rate_limited\n\
///      attempt 1: at once\n\
///      attempt 2: after 0..=200ms\n\
///      attempt 3: after 0..=400ms\n\
///      worst case: 600ms of waiting (no timeout: attempts unbounded), deadline none\n\
///      server hints: up to 2m each (max_retry_after), waited on top of the backoff; \
///      a longer one stops retrying",
/// );
///
/// let long = Policy::new().max(u32::MAX).explain().to_string();
/// assert!(long.contains("attempt 8: after 0..=12s800ms\n"));
/// assert!(long.contains("attempts 9..=4294967295: after 0..=20s each\n"));
/// assert_eq!(long.lines().count(), 12);
/// ```
///
/// The same figures, as values: [`attempts`](Explain::attempts) and
/// [`worst_case`](Explain::worst_case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Explain {
    policy: Policy,
}

/// When one attempt may start: after a wait from `min` to `max` since the
/// previous attempt failed (both zero for the first attempt).
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Jitter, Policy};
///
/// let policy = Policy::new().jitter(Jitter::Equal);
/// let third = policy.explain().attempts().nth(2).unwrap();
/// assert_eq!(third.attempt(), 3);
/// assert_eq!(third.min(), Duration::from_millis(200));
/// assert_eq!(third.max(), Duration::from_millis(400));
/// assert!(!third.is_exact());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Window {
    attempt: u32,
    min: u64,
    max: u64,
}

impl Window {
    /// The attempt's number, 1 for the first.
    #[must_use]
    pub const fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The shortest wait before it.
    #[must_use]
    pub const fn min(&self) -> Duration {
        Duration::from_nanos(self.min)
    }

    /// The longest wait before it (never above the policy's `cap`).
    #[must_use]
    pub const fn max(&self) -> Duration {
        Duration::from_nanos(self.max)
    }

    /// Whether the wait is one value, not a range: no jitter, a zero
    /// base, or the first attempt.
    #[must_use]
    pub const fn is_exact(&self) -> bool {
        self.min == self.max
    }

    const fn same_wait(&self, other: &Self) -> bool {
        self.min == other.min && self.max == other.max
    }
}

/// Every attempt's [`Window`], the first included, from
/// [`Explain::attempts`]: `max` of them, lazily (a policy of `u32::MAX`
/// attempts costs nothing until they are read).
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Jitter, Policy};
///
/// let policy = Policy::new()
///     .max(5)
///     .base(Duration::from_secs(1))
///     .cap(Duration::from_secs(5))
///     .jitter(Jitter::None);
/// let waits: Vec<_> = policy.explain().attempts().map(|w| w.max().as_secs()).collect();
/// assert_eq!(waits, [0, 1, 2, 4, 5]);
/// assert_eq!(policy.explain().attempts().len(), 5);
/// ```
#[derive(Debug, Clone)]
pub struct Attempts {
    jitter: Jitter,
    base: u64,
    cap: u64,
    /// The number of the attempt `next` gives (1-based, may pass `max`).
    next: u64,
    max: u64,
    /// The longest decorrelated delay so far: the engine's `prev` at its
    /// largest (`base` before the first retry, as the engine seeds it).
    upper: u64,
}

impl Attempts {
    fn new(policy: &Policy) -> Self {
        Self {
            jitter: policy.get_jitter(),
            base: policy.base_nanos(),
            cap: policy.cap_nanos(),
            next: 1,
            max: u64::from(policy.get_max()),
            upper: policy.base_nanos(),
        }
    }

    /// The window of retry `retry` (1 for the first), the engine's draws
    /// (`backoff::delay`) at their extremes.
    fn retry_window(&mut self, retry: u32) -> (u64, u64) {
        let (base, cap) = (self.base, self.cap);
        match self.jitter {
            Jitter::None => {
                let c = ceiling(base, cap, retry);
                (c, c)
            }
            Jitter::Full => (0, ceiling(base, cap, retry)),
            // `c/2 + U(0, c - c/2)`.
            Jitter::Equal => {
                let c = ceiling(base, cap, retry);
                (c / 2, c)
            }
            // `min(cap, U(base, max(base, 3 * prev)))`: its top grows
            // with the largest `prev` the previous retry can have drawn.
            Jitter::Decorrelated => {
                self.upper = self.upper.saturating_mul(3).max(base).min(cap);
                (base.min(cap), self.upper)
            }
        }
    }
}

impl Iterator for Attempts {
    type Item = Window;

    fn next(&mut self) -> Option<Window> {
        if self.next > self.max {
            return None;
        }
        let attempt = u32::try_from(self.next).unwrap_or(u32::MAX);
        self.next += 1;
        let (min, max) = match attempt {
            1 => (0, 0),
            _ => self.retry_window(attempt - 1),
        };
        Some(Window { attempt, min, max })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.max + 1).saturating_sub(self.next);
        let left = usize::try_from(left).unwrap_or(usize::MAX);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Attempts {}

impl FusedIterator for Attempts {}

/// The longest a call under the policy can take, from
/// [`Explain::worst_case`].
///
/// ```
/// use std::time::Duration;
/// use tenacious::Policy;
///
/// let policy = Policy::new().timeout(Duration::from_secs(10));
/// let worst = policy.explain().worst_case();
/// assert_eq!(worst.waiting(), Duration::from_millis(600)); // 200ms + 400ms
/// assert_eq!(worst.attempts(), Some(Duration::from_secs(30)));
/// assert_eq!(worst.total(), Some(Duration::from_millis(30_600)));
/// assert_eq!(worst.hints(), Duration::from_secs(240)); // 2 retries × 2m
///
/// // A deadline bounds it; without a timeout an attempt is unbounded.
/// let bounded = policy.deadline(Duration::from_secs(20)).explain().worst_case();
/// assert_eq!(bounded.total(), Some(Duration::from_secs(20)));
/// assert_eq!(Policy::new().explain().worst_case().total(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WorstCase {
    waiting: u64,
    hints: u64,
    attempts: Option<u64>,
    total: Option<u64>,
}

impl WorstCase {
    /// The longest waits between attempts, added up: every retry's
    /// [`Window::max`]. Server hints and guards come on top.
    #[must_use]
    pub const fn waiting(&self) -> Duration {
        Duration::from_nanos(self.waiting)
    }

    /// The most server hints can add on top of [`waiting`](Self::waiting):
    /// `max_retry_after` before every retry (a longer hint stops the call
    /// instead of being waited).
    #[must_use]
    pub const fn hints(&self) -> Duration {
        Duration::from_nanos(self.hints)
    }

    /// The longest the attempts can run, `max × timeout`, if the policy
    /// has a `timeout` (which only [`Policy::retry_timed`] and
    /// `#[retry(timeout = …)]` apply); `None` without one.
    #[must_use]
    pub const fn attempts(&self) -> Option<Duration> {
        match self.attempts {
            Some(nanos) => Some(Duration::from_nanos(nanos)),
            None => None,
        }
    }

    /// The longest the whole call can take, waits and attempts, bounded by
    /// the deadline: `None` without a timeout, as an attempt then runs as
    /// long as it runs (past the deadline too). Server hints and guards
    /// left out, but for the deadline, which bounds them as well.
    #[must_use]
    pub const fn total(&self) -> Option<Duration> {
        match self.total {
            Some(nanos) => Some(Duration::from_nanos(nanos)),
            None => None,
        }
    }
}

/// Consecutive attempts with the same window.
struct Run {
    first: u32,
    last: u32,
    window: Window,
}

impl Explain {
    pub(crate) const fn new(policy: Policy) -> Self {
        Self { policy }
    }

    /// The policy explained.
    #[must_use]
    pub const fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Every attempt's window, the first included (see [`Attempts`]).
    #[must_use]
    pub fn attempts(&self) -> Attempts {
        Attempts::new(&self.policy)
    }

    /// The retries' windows as runs of equal ones. The windows grow until
    /// the cap (or `u64` nanoseconds) stops them, and once two in a row
    /// are equal every later one is (each follows from the one before, or
    /// from the retry number through a ceiling that stopped growing): so
    /// this reads at most some seventy windows, whatever `max` is.
    fn runs(&self) -> Vec<Run> {
        let mut runs: Vec<Run> = Vec::new();
        let last = self.policy.get_max();
        for window in self.attempts().skip(1) {
            match runs.last_mut() {
                Some(run) if run.window.same_wait(&window) => {
                    run.last = last;
                    break;
                }
                _ => runs.push(Run {
                    first: window.attempt,
                    last: window.attempt,
                    window,
                }),
            }
        }
        runs
    }

    /// The longest the call can take (see [`WorstCase`]).
    #[must_use]
    pub fn worst_case(&self) -> WorstCase {
        let waiting = self.runs().iter().fold(0u64, |sum, run| {
            let count = u64::from(run.last - run.first) + 1;
            sum.saturating_add(count.saturating_mul(run.window.max))
        });
        let max = u64::from(self.policy.get_max());
        let retries = max - 1;
        let hints = retries.saturating_mul(self.policy.max_retry_after_nanos());
        let attempts = self
            .policy
            .timeout_nanos()
            .map(|timeout| timeout.saturating_mul(max));
        let total = attempts.map(|attempts| {
            let total = waiting.saturating_add(attempts);
            match self.policy.deadline_nanos() {
                Some(deadline) => total.min(deadline),
                None => total,
            }
        });
        WorstCase {
            waiting,
            hints,
            attempts,
            total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::backoff::delay;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    const MS: u64 = 1_000_000;

    /// Every delay the engine's formula draws falls in the window explain
    /// gives, and the draws reach both ends of it.
    #[test]
    fn windows_hold_every_draw_of_the_engine() {
        for jitter in [
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
        ] {
            for (base, cap) in [(10, 1_000), (100, 30), (0, 50), (7, u64::MAX)] {
                let policy = Policy::new()
                    .max(12)
                    .jitter(jitter)
                    .base(Duration::from_nanos(base))
                    .cap(Duration::from_nanos(cap));
                let windows: Vec<_> = policy.explain().attempts().skip(1).collect();
                let mut lowest = vec![u64::MAX; windows.len()];
                let mut highest = vec![0; windows.len()];
                for seed in 0..2_000 {
                    let mut rng = SmallRng::seed_from_u64(seed);
                    let mut prev = base;
                    for (i, window) in windows.iter().enumerate() {
                        let retry = u32::try_from(i + 1).unwrap();
                        prev = delay(jitter, base, cap, retry, prev, &mut rng);
                        assert!(
                            window.min <= prev && prev <= window.max,
                            "{jitter:?} base {base} cap {cap} retry {retry}: {prev} not in {window:?}"
                        );
                        lowest[i] = lowest[i].min(prev);
                        highest[i] = highest[i].max(prev);
                    }
                }
                // The bottom of every window is drawn; the top of the
                // first two (later ones need ever luckier chains of draws
                // under decorrelated jitter, or huge ranges).
                for (i, window) in windows.iter().enumerate() {
                    if window.max - window.min < 200 {
                        assert_eq!(lowest[i], window.min, "{jitter:?} {base} {cap} {i}");
                    }
                    if i < 2 && window.max - window.min < 50 {
                        assert_eq!(highest[i], window.max, "{jitter:?} {base} {cap} {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn decorrelated_windows_triple_up_to_the_cap() {
        let policy = Policy::new()
            .max(6)
            .jitter(Jitter::Decorrelated)
            .base(Duration::from_millis(100))
            .cap(Duration::from_secs(2));
        let windows: Vec<_> = policy
            .explain()
            .attempts()
            .map(|w| (w.min / MS, w.max / MS))
            .collect();
        assert_eq!(
            windows,
            [
                (0, 0),
                (100, 300),
                (100, 900),
                (100, 2_000),
                (100, 2_000),
                (100, 2_000)
            ]
        );
        assert_eq!(
            policy.explain().to_string(),
            "6 attempts, decorrelated jitter, base 100ms, cap 2s, on transient | rate_limited\n\
             attempt 1: at once\n\
             attempt 2: after 100ms..=300ms\n\
             attempt 3: after 100ms..=900ms\n\
             attempts 4..=6: after 100ms..=2s each\n\
             worst case: 7s200ms of waiting (no timeout: attempts unbounded), deadline none\n\
             server hints: up to 2m each (max_retry_after), waited on top of the backoff; \
             a longer one stops retrying"
        );
    }

    #[test]
    fn extreme_policies_print_a_few_lines_and_saturate() {
        let policy = Policy::new()
            .max(u32::MAX)
            .base(Duration::from_nanos(1))
            .cap(Duration::MAX)
            .jitter(Jitter::None)
            .timeout(Duration::MAX)
            .max_retry_after(Duration::MAX);
        let text = policy.explain().to_string();
        assert!(text.lines().count() < 80, "{text}");
        assert!(
            text.contains("attempt 65: after 2562047h47m16s854ms775us808ns\n"),
            "{text}"
        );
        assert!(
            text.contains("attempts 66..=4294967295: after 5124095h34m33s709ms551us615ns each\n"),
            "{text}"
        );
        let worst = policy.explain().worst_case();
        assert_eq!(worst.waiting(), Duration::from_nanos(u64::MAX));
        assert_eq!(worst.total(), Some(Duration::from_nanos(u64::MAX)));
        assert_eq!(worst.hints(), Duration::from_nanos(u64::MAX));

        // Every jitter, every edge: no panic, a bounded number of lines.
        for jitter in [
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
        ] {
            for base in [0, 1, 3, u64::MAX] {
                for cap in [0, 1, 2, u64::MAX] {
                    for max in [1, 2, 3, u32::MAX] {
                        let policy = Policy::new()
                            .max(max)
                            .jitter(jitter)
                            .base(Duration::from_nanos(base))
                            .cap(Duration::from_nanos(cap));
                        let text = policy.explain().to_string();
                        assert!(text.lines().count() < 80, "{text}");
                        let _ = policy.explain().worst_case();
                    }
                }
            }
        }
    }

    #[test]
    fn equal_and_no_jitter_print_their_windows() {
        let policy = Policy::new()
            .max(4)
            .base(Duration::from_secs(1))
            .cap(Duration::from_secs(3))
            .on(crate::RetryOn::TRANSIENT)
            .timeout(Duration::from_secs(5))
            .deadline(Duration::from_secs(60));
        assert_eq!(
            policy.jitter(Jitter::Equal).explain().to_string(),
            "4 attempts, equal jitter, base 1s, cap 3s, on transient\n\
             attempt 1: at once\n\
             attempt 2: after 500ms..=1s\n\
             attempt 3: after 1s..=2s\n\
             attempt 4: after 1s500ms..=3s\n\
             worst case: 26s: 6s of waiting + 4 × 5s timeout, deadline 1m\n\
             server hints: up to 2m each (max_retry_after), waited on top of the backoff; \
             a longer one stops retrying"
        );
        assert_eq!(
            policy
                .jitter(Jitter::None)
                .max(6)
                .explain()
                .to_string()
                .lines()
                .skip(1)
                .take(5)
                .collect::<Vec<_>>(),
            [
                "attempt 1: at once",
                "attempt 2: after 1s",
                "attempt 3: after 2s",
                "attempts 4..=6: after 3s each",
                "worst case: 42s: 12s of waiting + 6 × 5s timeout, deadline 1m",
            ]
        );
        let stream = Policy::new().first_item(Duration::from_secs(10)).explain();
        assert!(
            stream
                .to_string()
                .ends_with("\nstream: first item within 10s, idle none, no resume")
        );
    }

    #[test]
    fn one_attempt_has_no_retry_lines() {
        let text = Policy::new().max(1).explain().to_string();
        assert_eq!(
            text,
            "1 attempt, full jitter, base 200ms, cap 20s, on transient | rate_limited\n\
             attempt 1: at once\n\
             worst case: 0s of waiting (no timeout: attempts unbounded), deadline none"
        );
        assert_eq!(
            Policy::new().max(1).explain().worst_case().hints(),
            Duration::ZERO
        );
    }

    #[test]
    fn the_sum_of_the_windows_is_the_worst_wait() {
        for jitter in [
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
        ] {
            for max in 1..40 {
                let policy = Policy::new().max(max).jitter(jitter);
                let explain = policy.explain();
                let sum: u64 = explain.attempts().map(|w| w.max).sum();
                assert_eq!(explain.worst_case().waiting, sum, "{jitter:?} {max}");
                assert_eq!(explain.attempts().len(), usize::try_from(max).unwrap());
            }
        }
    }
}
