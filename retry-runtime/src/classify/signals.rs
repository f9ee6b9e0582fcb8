//! [`Signals`]: what an error (or a response) says about the provider
//! beyond its class — that it is overloaded, and how much of the caller's
//! rate-limit window is left — which the provider guards share.
use std::time::Duration;

/// What an attempt's error says about the provider beyond its
/// [`ErrorClass`](crate::ErrorClass): given by
/// [`Classify::signals`](crate::Classify::signals) and passed to every
/// [`Guard`](crate::Guard) in [`Outcome::signals`](crate::Outcome::signals).
///
/// - **`overloaded`**: the provider as a whole is refusing work (HTTP 529,
///   a 503 that says "overloaded", an in-band `overloaded_error`), not the
///   caller's own quota. It feeds the [`Throttle`](crate::Throttle) and
///   the [`Breaker`](crate::Breaker); a rate limit of the caller's own
///   quota (`RateLimited`) feeds the [`Cooldown`](crate::Cooldown) and the
///   throttle, never the breaker.
/// - **`remaining`** and **`reset`**: the requests left in the caller's
///   current rate-limit window and the time until it resets, as the
///   provider's headers say (`x-ratelimit-remaining-requests` /
///   `x-ratelimit-reset-requests`, `anthropic-ratelimit-requests-remaining`
///   / `-reset`): the throttle paces ahead of a 429 with them.
/// - **`limit`**: the size of the caller's rate-limit window, the most
///   requests it holds (`x-ratelimit-limit-requests`,
///   `anthropic-ratelimit-requests-limit`). With it the throttle reads the
///   window as a token bucket: `reset` is when it is full again, so it
///   refills at `(limit − remaining) / reset`.
///
/// Default: [`Signals::NONE`], nothing said.
///
/// ```
/// use std::time::Duration;
/// use tenacious::Signals;
///
/// let signals = Signals::NONE.remaining(3).reset(Duration::from_secs(2));
/// assert_eq!(signals.get_remaining(), Some(3));
/// assert_eq!(signals.get_limit(), None);
/// assert_eq!(Signals::NONE.limit(20).get_limit(), Some(20));
/// assert!(!signals.is_overloaded());
/// assert!(Signals::NONE.overloaded(true).is_overloaded());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Signals {
    overloaded: bool,
    remaining: Option<u64>,
    reset: Option<Duration>,
    limit: Option<u64>,
}

impl Signals {
    /// Nothing said.
    pub const NONE: Self = Self {
        overloaded: false,
        remaining: None,
        reset: None,
        limit: None,
    };

    /// Whether the provider said it is overloaded.
    #[must_use]
    pub const fn overloaded(self, overloaded: bool) -> Self {
        Self { overloaded, ..self }
    }

    /// The requests left in the current rate-limit window.
    #[must_use]
    pub const fn remaining(self, remaining: u64) -> Self {
        Self {
            remaining: Some(remaining),
            ..self
        }
    }

    /// The time until the current rate-limit window resets, from now.
    #[must_use]
    pub const fn reset(self, reset: Duration) -> Self {
        Self {
            reset: Some(reset),
            ..self
        }
    }

    /// The size of the rate-limit window: the most requests it holds.
    #[must_use]
    pub const fn limit(self, limit: u64) -> Self {
        Self {
            limit: Some(limit),
            ..self
        }
    }

    /// Whether the provider said it is overloaded (see the type's docs).
    #[must_use]
    pub const fn is_overloaded(&self) -> bool {
        self.overloaded
    }

    /// The requests left in the current window, if said.
    #[must_use]
    pub const fn get_remaining(&self) -> Option<u64> {
        self.remaining
    }

    /// The time until the current window resets, if said.
    #[must_use]
    pub const fn get_reset(&self) -> Option<Duration> {
        self.reset
    }

    /// The size of the rate-limit window, if said.
    #[must_use]
    pub const fn get_limit(&self) -> Option<u64> {
        self.limit
    }

    /// Whether nothing is said.
    #[must_use]
    pub const fn is_none(&self) -> bool {
        !self.overloaded && self.remaining.is_none() && self.reset.is_none() && self.limit.is_none()
    }
}
