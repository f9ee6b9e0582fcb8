//! [`Limits`]: what an error's class or variant sets for the call beyond
//! the policy: its own `max` and `base`.
use std::time::Duration;

/// Limits an error sets for the call it stops or delays, over the
/// policy's: a `RateLimited` variant that deserves more attempts, a
/// transient one that should wait longer before each. Returned by
/// [`Classify::limits`](crate::Classify::limits); `#[derive(Classify)]`
/// writes it from `#[classify(rate_limited, max = 6)]` or
/// `#[classify(transient, base = "1s")]`.
///
/// - `max`: the call's attempts, the first included, when this error is
///   the last one (it lowers or raises the policy's; at least 1; a call
///   nested in another's attempt is still held to one);
/// - `base`: the backoff's base for the retry after this error (the
///   policy's `cap` still bounds every delay).
///
/// ```
/// use std::time::Duration;
/// use tenacious::Limits;
///
/// let limits = Limits::NONE.max(6).base(Duration::from_secs(1));
/// assert_eq!(limits.get_max(), Some(6));
/// assert_eq!(limits.get_base(), Some(Duration::from_secs(1)));
/// assert!(Limits::NONE.is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Limits {
    max: Option<u32>,
    base: Option<u64>,
}

impl Limits {
    /// No limit of its own: the policy's hold.
    pub const NONE: Self = Self {
        max: None,
        base: None,
    };

    /// The call's attempts when this error is the last (at least 1).
    #[must_use]
    pub const fn max(self, max: u32) -> Self {
        Self {
            max: Some(if max == 0 { 1 } else { max }),
            ..self
        }
    }

    /// The backoff's base for the retry after this error.
    #[must_use]
    pub const fn base(self, base: Duration) -> Self {
        Self {
            base: Some(crate::clock::saturating_nanos(base)),
            ..self
        }
    }

    /// The attempts this error allows the call, if it says.
    #[must_use]
    pub const fn get_max(&self) -> Option<u32> {
        self.max
    }

    /// The base this error's retry backs off from, if it says.
    #[must_use]
    pub const fn get_base(&self) -> Option<Duration> {
        match self.base {
            Some(nanos) => Some(Duration::from_nanos(nanos)),
            None => None,
        }
    }

    /// Whether it sets nothing.
    #[must_use]
    pub const fn is_none(&self) -> bool {
        self.max.is_none() && self.base.is_none()
    }

    pub(crate) const fn base_nanos(&self) -> Option<u64> {
        self.base
    }
}
