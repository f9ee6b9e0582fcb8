//! `Policy` and `RetryOn`.
use std::fmt;
use std::ops::{BitOr, BitOrAssign};
use std::time::Duration;

use crate::backoff::saturating_nanos;
use crate::{ErrorClass, Jitter};

/// The set of classes a policy retries: `Transient`, `RateLimited` or both.
///
/// `Invalid` and `Fatal` cannot be put in it: retrying a wrong request
/// unchanged, or one a human must fix, only repeats the failure. Sets join
/// with `|` (or [`union`](RetryOn::union) in a `const`).
///
/// ```
/// use tenacious_runtime::{ErrorClass, RetryOn};
///
/// let on = RetryOn::TRANSIENT | RetryOn::RATE_LIMITED;
/// assert_eq!(on, RetryOn::DEFAULT);
/// assert!(on.contains(ErrorClass::RateLimited));
/// assert!(!RetryOn::TRANSIENT.contains(ErrorClass::RateLimited));
/// assert!(!on.contains(ErrorClass::Invalid));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RetryOn(u8);

impl RetryOn {
    /// Only `Transient`.
    pub const TRANSIENT: Self = Self(1);
    /// Only `RateLimited`.
    pub const RATE_LIMITED: Self = Self(2);
    /// `Transient | RateLimited`, the default.
    pub const DEFAULT: Self = Self(3);

    /// Both sets.
    #[must_use]
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether errors of `class` are retried.
    #[must_use]
    pub const fn contains(self, class: ErrorClass) -> bool {
        let bit = match class {
            ErrorClass::Transient => Self::TRANSIENT.0,
            ErrorClass::RateLimited => Self::RATE_LIMITED.0,
            ErrorClass::Invalid | ErrorClass::Fatal => return false,
        };
        self.0 & bit != 0
    }
}

impl Default for RetryOn {
    /// [`RetryOn::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl BitOr for RetryOn {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        self.union(rhs)
    }
}

impl BitOrAssign for RetryOn {
    fn bitor_assign(&mut self, rhs: Self) {
        *self = self.union(rhs);
    }
}

impl fmt::Debug for RetryOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RetryOn(")?;
        let mut sep = "";
        for class in [ErrorClass::Transient, ErrorClass::RateLimited] {
            if self.contains(class) {
                write!(f, "{sep}{class:?}")?;
                sep = " | ";
            }
        }
        f.write_str(")")
    }
}

/// A retry policy: how many attempts, how long to wait between them, which
/// errors to retry.
///
/// The same settings as `#[retry(...)]`, with the same defaults; build one
/// in a `const` and run closures with [`retry`](Policy::retry) (async, on
/// tokio) or [`retry_blocking`](Policy::retry_blocking).
///
/// | setting | builder | default |
/// |---|---|---|
/// | total attempts, the first included | [`max`](Policy::max) | 3 |
/// | first backoff ceiling | [`base`](Policy::base) | 200 ms |
/// | ceiling of any backoff | [`cap`](Policy::cap) | 20 s |
/// | jitter | [`jitter`](Policy::jitter) | [`Jitter::Full`] |
/// | retried classes | [`on`](Policy::on) | `Transient \| RateLimited` |
/// | longest server hint honoured | [`max_retry_after`](Policy::max_retry_after) | 120 s |
///
/// Durations are held as whole nanoseconds in a `u64`: anything longer than
/// about 584 years saturates there.
///
/// ```
/// use std::time::Duration;
/// use tenacious_runtime::{Jitter, Policy, RetryOn};
///
/// const POLICY: Policy = Policy::new()
///     .max(5)
///     .base(Duration::from_millis(100))
///     .cap(Duration::from_secs(5))
///     .jitter(Jitter::Equal)
///     .on(RetryOn::TRANSIENT);
///
/// assert_eq!(POLICY.max_attempts(), 5);
/// assert_eq!(Policy::new(), Policy::DEFAULT);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Policy {
    // Private so per-attempt timeout, deadline and a shared budget can join
    // without breaking anyone.
    max: u32,
    base: u64,
    cap: u64,
    jitter: Jitter,
    on: RetryOn,
    max_retry_after: u64,
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
    };

    /// The defaults, [`Policy::DEFAULT`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious_runtime::{Jitter, Policy, RetryOn};
    ///
    /// let p = Policy::new();
    /// assert_eq!(p.max_attempts(), 3);
    /// assert_eq!(p.base_delay(), Duration::from_millis(200));
    /// assert_eq!(p.delay_cap(), Duration::from_secs(20));
    /// assert_eq!(p.jitter_kind(), Jitter::Full);
    /// assert_eq!(p.retried_classes(), RetryOn::DEFAULT);
    /// assert_eq!(p.retry_after_limit(), Duration::from_secs(120));
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// Total attempts, the first included. Default: 3.
    ///
    /// `max(1)` makes one attempt and never retries. `max(0)` is taken as
    /// `max(1)`: every call makes at least one attempt.
    ///
    /// ```
    /// use tenacious_runtime::Policy;
    ///
    /// assert_eq!(Policy::new().max(5).max_attempts(), 5);
    /// assert_eq!(Policy::new().max(0).max_attempts(), 1);
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
    /// use tenacious_runtime::Policy;
    ///
    /// let p = Policy::new().base(Duration::from_secs(1));
    /// assert_eq!(p.base_delay(), Duration::from_secs(1));
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
    /// use tenacious_runtime::Policy;
    ///
    /// let p = Policy::new().cap(Duration::from_secs(3));
    /// assert_eq!(p.delay_cap(), Duration::from_secs(3));
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
    /// use tenacious_runtime::{Jitter, Policy};
    ///
    /// let p = Policy::new().jitter(Jitter::None);
    /// assert_eq!(p.jitter_kind(), Jitter::None);
    /// ```
    #[must_use]
    pub const fn jitter(self, jitter: Jitter) -> Self {
        Self { jitter, ..self }
    }

    /// The classes retried. Default: [`RetryOn::DEFAULT`]
    /// (`Transient | RateLimited`).
    ///
    /// ```
    /// use tenacious_runtime::{ErrorClass, Policy, RetryOn};
    ///
    /// let p = Policy::new().on(RetryOn::TRANSIENT);
    /// assert!(!p.retried_classes().contains(ErrorClass::RateLimited));
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
    /// use tenacious_runtime::Policy;
    ///
    /// let p = Policy::new().max_retry_after(Duration::from_secs(30));
    /// assert_eq!(p.retry_after_limit(), Duration::from_secs(30));
    /// ```
    #[must_use]
    pub const fn max_retry_after(self, limit: Duration) -> Self {
        Self {
            max_retry_after: saturating_nanos(limit),
            ..self
        }
    }

    /// Total attempts, the first included (at least 1).
    #[must_use]
    pub const fn max_attempts(&self) -> u32 {
        self.max
    }

    /// The first backoff ceiling.
    #[must_use]
    pub const fn base_delay(&self) -> Duration {
        Duration::from_nanos(self.base)
    }

    /// The ceiling of any computed backoff.
    #[must_use]
    pub const fn delay_cap(&self) -> Duration {
        Duration::from_nanos(self.cap)
    }

    /// The jitter.
    #[must_use]
    pub const fn jitter_kind(&self) -> Jitter {
        self.jitter
    }

    /// The classes retried.
    #[must_use]
    pub const fn retried_classes(&self) -> RetryOn {
        self.on
    }

    /// The longest server hint honoured.
    #[must_use]
    pub const fn retry_after_limit(&self) -> Duration {
        Duration::from_nanos(self.max_retry_after)
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

    #[test]
    fn builders_set_only_their_own_field() {
        let p = Policy::new()
            .max(7)
            .base(Duration::from_millis(5))
            .cap(Duration::from_secs(9))
            .jitter(Jitter::Equal)
            .on(RetryOn::RATE_LIMITED)
            .max_retry_after(Duration::from_secs(11));
        assert_eq!(p.max_attempts(), 7);
        assert_eq!(p.base_delay(), Duration::from_millis(5));
        assert_eq!(p.delay_cap(), Duration::from_secs(9));
        assert_eq!(p.jitter_kind(), Jitter::Equal);
        assert_eq!(p.retried_classes(), RetryOn::RATE_LIMITED);
        assert_eq!(p.retry_after_limit(), Duration::from_secs(11));
    }

    #[test]
    fn huge_durations_saturate() {
        let p = Policy::new()
            .base(Duration::MAX)
            .cap(Duration::MAX)
            .max_retry_after(Duration::MAX);
        assert_eq!(p.base_delay(), Duration::from_nanos(u64::MAX));
        assert_eq!(p.delay_cap(), Duration::from_nanos(u64::MAX));
        assert_eq!(p.retry_after_limit(), Duration::from_nanos(u64::MAX));
    }

    #[test]
    fn retry_on_never_holds_invalid_or_fatal() {
        let all = [RetryOn::TRANSIENT, RetryOn::RATE_LIMITED, RetryOn::DEFAULT];
        for a in all {
            for b in all {
                let set = a | b;
                assert!(!set.contains(ErrorClass::Invalid));
                assert!(!set.contains(ErrorClass::Fatal));
                assert_eq!(set, a.union(b));
            }
        }
        let mut on = RetryOn::TRANSIENT;
        assert!(!on.contains(ErrorClass::RateLimited));
        on |= RetryOn::RATE_LIMITED;
        assert_eq!(on, RetryOn::DEFAULT);
        assert_eq!(RetryOn::default(), RetryOn::DEFAULT);
    }

    #[test]
    fn retry_on_debug_names_the_classes() {
        assert_eq!(format!("{:?}", RetryOn::TRANSIENT), "RetryOn(Transient)");
        assert_eq!(
            format!("{:?}", RetryOn::DEFAULT),
            "RetryOn(Transient | RateLimited)"
        );
    }
}
