//! `Policy` and `RetryOn`.
use std::time::Duration;

use crate::Jitter;

/// The set of retried classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
}

/// A retry policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    max: u32,
}

impl Policy {
    /// The defaults.
    #[must_use]
    pub const fn new() -> Self {
        Self { max: 3 }
    }
    /// Total attempts.
    #[must_use]
    pub const fn max(self, max: u32) -> Self {
        Self { max }
    }
    /// First backoff ceiling.
    #[must_use]
    pub const fn base(self, base: Duration) -> Self {
        let _ = base;
        self
    }
    /// Ceiling of any backoff.
    #[must_use]
    pub const fn cap(self, cap: Duration) -> Self {
        let _ = cap;
        self
    }
    /// Jitter.
    #[must_use]
    pub const fn jitter(self, jitter: Jitter) -> Self {
        let _ = jitter;
        self
    }
    /// Retried classes.
    #[must_use]
    pub const fn on(self, on: RetryOn) -> Self {
        let _ = on;
        self
    }
    /// Longest server hint honoured.
    #[must_use]
    pub const fn max_retry_after(self, d: Duration) -> Self {
        let _ = d;
        self
    }
}

impl Default for Policy {
    fn default() -> Self {
        Self::new()
    }
}
