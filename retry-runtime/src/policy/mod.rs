//! [`Policy`]: the settings of one retried call, built in a `const`.
pub(crate) mod backoff;
pub(crate) mod bound;
pub(crate) mod explain;
mod guards;
pub(crate) mod nested;
pub(crate) mod retry_on;
mod stream;
mod time;

pub(crate) use guards::Chain;

use std::time::Duration;

use crate::clock::saturating_nanos;
use crate::guard::ByAddress;
use crate::stats::CallStats;
use crate::{
    Breaker, Concurrency, Cooldown, Guard, Jitter, Nested, RetryBudget, RetryOn, Throttle,
};

/// A retry policy: how many attempts, how long to wait between them, which
/// errors to retry.
///
/// The same settings as `#[retry(...)]`, with the same defaults; build one
/// in a `const` and run closures with [`retry`](Policy::retry) (async, on
/// tokio) or [`retry_blocking`](Policy::retry_blocking).
///
/// | setting | builder | getter | default |
/// |---|---|---|---|
/// | total attempts, the first included | [`max`](Policy::max) | [`get_max`](Policy::get_max) | 3 |
/// | first backoff ceiling | [`base`](Policy::base) | [`get_base`](Policy::get_base) | 200 ms |
/// | ceiling of any backoff | [`cap`](Policy::cap) | [`get_cap`](Policy::get_cap) | 20 s |
/// | jitter | [`jitter`](Policy::jitter) | [`get_jitter`](Policy::get_jitter) | [`Jitter::Full`] |
/// | retried classes | [`on`](Policy::on) | [`get_on`](Policy::get_on) | `Transient \| RateLimited` |
/// | longest server hint honoured | [`max_retry_after`](Policy::max_retry_after) | [`get_max_retry_after`](Policy::get_max_retry_after) | 120 s |
/// | per-attempt limit (async, [`retry_timed`](Policy::retry_timed)) | [`timeout`](Policy::timeout) | [`get_timeout`](Policy::get_timeout) | none |
/// | whole-call limit | [`deadline`](Policy::deadline) | [`get_deadline`](Policy::get_deadline) | none |
/// | shared circuit breaker | [`breaker`](Policy::breaker) | [`get_breaker`](Policy::get_breaker) | none |
/// | shared rate-limit cooldown | [`cooldown`](Policy::cooldown) | [`get_cooldown`](Policy::get_cooldown) | none |
/// | shared adaptive request rate | [`throttle`](Policy::throttle) | [`get_throttle`](Policy::get_throttle) | none |
/// | a shared [`Guard`] of your own, asked before each attempt | [`guard`](Policy::guard) | [`get_guard`](Policy::get_guard) | none |
/// | shared retry budget | [`budget`](Policy::budget) | [`get_budget`](Policy::get_budget) | none |
/// | shared limit of attempts in flight | [`concurrency`](Policy::concurrency) | [`get_concurrency`](Policy::get_concurrency) | none |
/// | inside another retried call | [`nested`](Policy::nested) | [`get_nested`](Policy::get_nested) | [`Nested::Once`] |
/// | statistics record (and `tracing`/`metrics`) | [`stats`](Policy::stats) | [`get_stats`](Policy::get_stats) | none |
/// | a stream's held preamble, in items | [`max_held`](Policy::max_held) | [`get_max_held`](Policy::get_max_held) | 1 024 |
/// | a stream's held preamble, in bytes | [`max_held_bytes`](Policy::max_held_bytes) | [`get_max_held_bytes`](Policy::get_max_held_bytes) | 1 MiB |
///
/// Every builder has a getter of its name with `get_` before it.
///
/// Durations are held as whole nanoseconds in a `u64`: anything longer than
/// about 584 years saturates there.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Jitter, Policy, RetryOn};
///
/// const POLICY: Policy = Policy::new()
///     .max(5)
///     .base(Duration::from_millis(100))
///     .cap(Duration::from_secs(5))
///     .jitter(Jitter::Equal)
///     .on(RetryOn::TRANSIENT);
///
/// assert_eq!(POLICY.get_max(), 5);
/// assert_eq!(Policy::new(), Policy::DEFAULT);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Policy {
    // Private so settings can join without breaking anyone.
    max: u32,
    base: u64,
    cap: u64,
    jitter: Jitter,
    on: RetryOn,
    max_retry_after: u64,
    timeout: Option<u64>,
    deadline: Option<u64>,
    /// A retried stream's time to its first content item, and its idle
    /// limit between items (see `stream.rs`).
    first_item: Option<u64>,
    idle: Option<u64>,
    /// A retried stream reconnects after it has delivered items.
    resume: bool,
    /// The most a retried stream holds before its first content item, in
    /// items and in bytes (see `stream.rs`).
    max_held: u32,
    max_held_bytes: u32,
    /// `false`: only errors that prove nothing was sent are retried.
    idempotent: bool,
    breaker: Option<ByAddress<Breaker>>,
    cooldown: Option<ByAddress<Cooldown>>,
    throttle: Option<ByAddress<Throttle>>,
    guard: Option<ByAddress<dyn Guard>>,
    budget: Option<ByAddress<RetryBudget>>,
    concurrency: Option<ByAddress<Concurrency>>,
    /// Which of the guard slots are set (`HAS_*`): what a call tests first,
    /// in one load, from the engine's pointer to its policy.
    guards: u8,
    nested: Nested,
    stats: Option<ByAddress<CallStats>>,
}

impl Policy {
    /// The defaults: 3 attempts, base 200 ms, cap 20 s, full jitter, retry on
    /// `Transient | RateLimited`, honour server hints up to 120 s.
    pub const DEFAULT: Self = Self {
        max: 3,
        base: 200_000_000,
        cap: 20_000_000_000,
        jitter: Jitter::Full,
        on: RetryOn::DEFAULT,
        max_retry_after: 120_000_000_000,
        timeout: None,
        deadline: None,
        first_item: None,
        idle: None,
        resume: false,
        max_held: 1024,
        max_held_bytes: 1 << 20,
        idempotent: true,
        breaker: None,
        cooldown: None,
        throttle: None,
        guard: None,
        budget: None,
        concurrency: None,
        guards: 0,
        nested: Nested::Once,
        stats: None,
    };

    /// The defaults, [`Policy::DEFAULT`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::{Jitter, Policy, RetryOn};
    ///
    /// let p = Policy::new();
    /// assert_eq!(p.get_max(), 3);
    /// assert_eq!(p.get_base(), Duration::from_millis(200));
    /// assert_eq!(p.get_cap(), Duration::from_secs(20));
    /// assert_eq!(p.get_jitter(), Jitter::Full);
    /// assert_eq!(p.get_on(), RetryOn::DEFAULT);
    /// assert_eq!(p.get_max_retry_after(), Duration::from_secs(120));
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// `policy`, as `#[retry(policy = NAME)]` starts from it: the identity,
    /// spelled so a path that is no `Policy` is a type error that names it.
    ///
    /// ```
    /// use tenacious::Policy;
    ///
    /// const OPENAI: Policy = Policy::new().max(5);
    /// assert_eq!(Policy::named(OPENAI).max(2).get_max(), 2);
    /// ```
    #[must_use]
    pub const fn named(policy: Self) -> Self {
        policy
    }

    /// Total attempts, the first included. Default: 3.
    ///
    /// `max(1)` makes one attempt and never retries. `max(0)` is taken as
    /// `max(1)`: every call makes at least one attempt.
    ///
    /// ```
    /// use tenacious::Policy;
    ///
    /// assert_eq!(Policy::new().max(5).get_max(), 5);
    /// assert_eq!(Policy::new().max(0).get_max(), 1);
    /// ```
    #[must_use]
    pub const fn max(self, max: u32) -> Self {
        Self {
            max: if max == 0 { 1 } else { max },
            ..self
        }
    }

    /// The first backoff ceiling: retry `n` waits up to
    /// `min(cap, base * 2^(n-1))`, randomised by the jitter. Default: 200 ms.
    ///
    /// A zero base means no waiting at all.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// let p = Policy::new().base(Duration::from_secs(1));
    /// assert_eq!(p.get_base(), Duration::from_secs(1));
    /// ```
    #[must_use]
    pub const fn base(self, base: Duration) -> Self {
        Self {
            base: saturating_nanos(base),
            ..self
        }
    }

    /// The ceiling of any computed backoff, applied after jitter. Default:
    /// 20 s.
    ///
    /// A cap below `base` makes `cap` the ceiling of every backoff (and,
    /// without jitter or with decorrelated jitter, every backoff). Server hints
    /// are bounded by [`max_retry_after`](Policy::max_retry_after) instead.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// let p = Policy::new().cap(Duration::from_secs(3));
    /// assert_eq!(p.get_cap(), Duration::from_secs(3));
    /// ```
    #[must_use]
    pub const fn cap(self, cap: Duration) -> Self {
        Self {
            cap: saturating_nanos(cap),
            ..self
        }
    }

    /// How the backoff ceiling is randomised. Default: [`Jitter::Full`].
    ///
    /// ```
    /// use tenacious::{Jitter, Policy};
    ///
    /// let p = Policy::new().jitter(Jitter::None);
    /// assert_eq!(p.get_jitter(), Jitter::None);
    /// ```
    #[must_use]
    pub const fn jitter(self, jitter: Jitter) -> Self {
        Self { jitter, ..self }
    }

    /// The classes retried. Default: [`RetryOn::DEFAULT`]
    /// (`Transient | RateLimited`).
    ///
    /// ```
    /// use tenacious::{ErrorClass, Policy, RetryOn};
    ///
    /// let p = Policy::new().on(RetryOn::TRANSIENT);
    /// assert!(!p.get_on().contains(ErrorClass::RateLimited));
    /// ```
    #[must_use]
    pub const fn on(self, on: RetryOn) -> Self {
        Self { on, ..self }
    }

    /// The longest server hint ([`Classify::retry_after`]) honoured. A
    /// longer hint ends retrying at once and the call returns that error.
    /// Default: 120 s.
    ///
    /// [`Classify::retry_after`]: crate::Classify::retry_after
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// let p = Policy::new().max_retry_after(Duration::from_secs(30));
    /// assert_eq!(p.get_max_retry_after(), Duration::from_secs(30));
    /// ```
    #[must_use]
    pub const fn max_retry_after(self, limit: Duration) -> Self {
        Self {
            max_retry_after: saturating_nanos(limit),
            ..self
        }
    }

    /// Whether the call may be made twice with the same effect. Default:
    /// `true`.
    ///
    /// `false` — a payment, an email, a write without an idempotency key
    /// the server honours — retries only an error that proves the request
    /// never reached the server ([`Classify::not_sent`](crate::Classify::not_sent):
    /// a refused connection, a failed DNS lookup or TLS handshake, a
    /// guard's refusal); any other error, a reset after the request was
    /// written, a timeout, a 503, stops the call with
    /// [`StopReason::NotIdempotent`](crate::StopReason::NotIdempotent): it
    /// may have been applied.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::{Policy, StopReason};
    ///
    /// let policy = Policy::new().idempotent(false).base(Duration::ZERO);
    /// let reset = policy
    ///     .retry_blocking_failure(|| Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionReset)))
    ///     .unwrap_err();
    /// assert_eq!((reset.stop_reason(), reset.attempts().len()), (StopReason::NotIdempotent, 1));
    /// let refused = policy
    ///     .retry_blocking_failure(|| Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused)))
    ///     .unwrap_err();
    /// assert_eq!((refused.stop_reason(), refused.attempts().len()), (StopReason::Exhausted, 3));
    /// ```
    #[must_use]
    pub const fn idempotent(self, idempotent: bool) -> Self {
        Self { idempotent, ..self }
    }

    /// Whether the call may be made twice with the same effect.
    #[must_use]
    pub const fn get_idempotent(&self) -> bool {
        self.idempotent
    }

    /// What a call does inside an attempt of another retried call. Default:
    /// [`Nested::Once`], one attempt.
    ///
    /// ```
    /// use tenacious::{Nested, Policy};
    ///
    /// assert_eq!(Policy::new().nested(Nested::Retry).get_nested(), Nested::Retry);
    /// ```
    #[must_use]
    pub const fn nested(self, nested: Nested) -> Self {
        Self { nested, ..self }
    }

    /// Counts every call in `stats` (see [`CallStats`]), and with the
    /// features `tracing` and `metrics` reports its retries and give-ups
    /// there under the record's name. Default: none, and a call without a
    /// record is not observed. (`#[retry]` fns get a record of their own.)
    ///
    /// ```
    /// use tenacious::Policy;
    /// use tenacious::stats::CallStats;
    ///
    /// static SEARCH: CallStats = CallStats::new("search");
    /// const POLICY: Policy = Policy::new().stats(&SEARCH);
    ///
    /// let _ = POLICY.retry_blocking(|| Ok::<_, std::io::Error>(()));
    /// assert_eq!(SEARCH.snapshot().calls(), 1);
    /// assert_eq!(POLICY.get_stats().unwrap().name(), "search");
    /// ```
    #[must_use]
    pub const fn stats(self, stats: &'static CallStats) -> Self {
        Self {
            stats: Some(ByAddress(stats)),
            ..self
        }
    }

    /// The statistics record, if any.
    #[must_use]
    pub const fn get_stats(&self) -> Option<&'static CallStats> {
        match self.stats {
            Some(ByAddress(stats)) => Some(stats),
            None => None,
        }
    }

    /// What a call does inside another retried call.
    #[must_use]
    pub const fn get_nested(&self) -> Nested {
        self.nested
    }

    /// Total attempts, the first included (at least 1).
    #[must_use]
    pub const fn get_max(&self) -> u32 {
        self.max
    }

    /// The first backoff ceiling.
    #[must_use]
    pub const fn get_base(&self) -> Duration {
        Duration::from_nanos(self.base)
    }

    /// The ceiling of any computed backoff.
    #[must_use]
    pub const fn get_cap(&self) -> Duration {
        Duration::from_nanos(self.cap)
    }

    /// The jitter.
    #[must_use]
    pub const fn get_jitter(&self) -> Jitter {
        self.jitter
    }

    /// The classes retried.
    #[must_use]
    pub const fn get_on(&self) -> RetryOn {
        self.on
    }

    /// The longest server hint honoured.
    #[must_use]
    pub const fn get_max_retry_after(&self) -> Duration {
        Duration::from_nanos(self.max_retry_after)
    }

    /// The schedule this policy gives a call: each attempt's window of
    /// delay, the timeout and deadline, and the longest the call can take,
    /// worked out from the engine's own backoff formula (see [`Explain`]).
    /// Print it to see a policy before running it, or read its figures.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::{Jitter, Policy};
    ///
    /// let policy = Policy::new()
    ///     .max(4)
    ///     .base(Duration::from_millis(500))
    ///     .jitter(Jitter::None)
    ///     .timeout(Duration::from_secs(10));
    /// let explain = policy.explain();
    /// println!("{explain}");
    /// let waits: Vec<_> = explain.attempts().map(|w| w.max()).collect();
    /// assert_eq!(waits[3], Duration::from_secs(2));
    /// assert_eq!(explain.worst_case().total(), Some(Duration::from_millis(43_500)));
    /// ```
    ///
    /// [`Explain`]: crate::Explain
    #[must_use]
    pub const fn explain(&self) -> crate::Explain {
        crate::Explain::new(*self)
    }

    pub(crate) const fn base_nanos(&self) -> u64 {
        self.base
    }

    pub(crate) const fn cap_nanos(&self) -> u64 {
        self.cap
    }

    pub(crate) const fn max_retry_after_nanos(&self) -> u64 {
        self.max_retry_after
    }
}

impl Default for Policy {
    /// [`Policy::DEFAULT`].
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static BUDGET: RetryBudget = RetryBudget::new();
    static OTHER: RetryBudget = RetryBudget::new();

    #[test]
    fn policies_with_different_budgets_differ() {
        use std::hash::BuildHasher;
        let a = Policy::new().budget(&BUDGET);
        let b = Policy::new().budget(&OTHER);
        assert_eq!(a, Policy::new().budget(&BUDGET));
        assert_ne!(a, b);
        assert_ne!(a, Policy::new());
        let hasher = std::hash::RandomState::new();
        assert_eq!(
            hasher.hash_one(a),
            hasher.hash_one(Policy::new().budget(&BUDGET))
        );
        assert!(format!("{a:?}").contains("RetryBudget { balance: 500, capacity: 500 }"));
    }

    #[test]
    fn builders_set_only_their_own_field() {
        let p = Policy::new()
            .max(7)
            .base(Duration::from_millis(5))
            .cap(Duration::from_secs(9))
            .jitter(Jitter::Equal)
            .on(RetryOn::RATE_LIMITED)
            .max_retry_after(Duration::from_secs(11))
            .timeout(Duration::from_secs(2))
            .deadline(Duration::from_secs(12))
            .budget(&BUDGET)
            .nested(Nested::Retry);
        assert_eq!(p.get_max(), 7);
        assert_eq!(p.get_timeout(), Some(Duration::from_secs(2)));
        assert_eq!(p.get_deadline(), Some(Duration::from_secs(12)));
        assert!(std::ptr::eq(p.get_budget().unwrap(), &BUDGET));
        assert_eq!(p.get_nested(), Nested::Retry);
        assert_eq!(p.get_base(), Duration::from_millis(5));
        assert_eq!(p.get_cap(), Duration::from_secs(9));
        assert_eq!(p.get_jitter(), Jitter::Equal);
        assert_eq!(p.get_on(), RetryOn::RATE_LIMITED);
        assert_eq!(p.get_max_retry_after(), Duration::from_secs(11));
    }

    #[test]
    fn huge_durations_saturate() {
        let p = Policy::new()
            .base(Duration::MAX)
            .cap(Duration::MAX)
            .max_retry_after(Duration::MAX);
        assert_eq!(p.get_base(), Duration::from_nanos(u64::MAX));
        assert_eq!(p.get_cap(), Duration::from_nanos(u64::MAX));
        assert_eq!(p.get_max_retry_after(), Duration::from_nanos(u64::MAX));
        let p = Policy::new().timeout(Duration::MAX).deadline(Duration::MAX);
        assert_eq!(p.get_timeout(), Some(Duration::from_nanos(u64::MAX)));
        assert_eq!(p.get_deadline(), Some(Duration::from_nanos(u64::MAX)));
    }
}
