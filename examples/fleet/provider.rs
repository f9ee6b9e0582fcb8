//! The simulated provider: its token bucket and its answers (see `sim.rs`).
#![allow(clippy::wildcard_imports)]

use super::*;

/// The provider's quota: a token bucket on tokio's clock (the real one
/// for the provider of `examples/fleet/procs.rs`).
#[derive(Debug)]
pub struct Bucket {
    tokens: f64,
    /// The instant the bucket was made full: the times below count from it.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    origin: Instant,
    /// The last arrival, after `origin`.
    at: Duration,
    /// Tokens per second.
    rate: f64,
    burst: f64,
    penalty: bool,
}

/// What the provider answered a request with, headers included (the
/// provider of `examples/fleet/procs.rs`, `--redis`).
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    /// Served (else 429).
    pub served: bool,
    /// `Retry-After`, whole seconds (on a 429).
    pub retry_after: Duration,
    /// `x-ratelimit-remaining-requests`.
    pub remaining: u64,
    /// `x-ratelimit-reset-requests`: until the bucket is full again.
    pub reset: Duration,
    /// `x-ratelimit-limit-requests`: the bucket's size.
    pub limit: u64,
}

impl Bucket {
    /// `config`'s quota, full at `at`.
    #[must_use]
    pub fn new(config: &Config, at: Instant) -> Self {
        Self {
            tokens: f64::from(config.burst),
            origin: at,
            at: Duration::ZERO,
            rate: f64::from(config.rpm) / 60.0,
            burst: f64::from(config.burst),
            penalty: config.penalty,
        }
    }

    /// A request arriving at `now`: the provider's answer.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub fn arrive(&mut self, now: Instant) -> Answer {
        let served = self.take(now.saturating_duration_since(self.origin));
        Answer {
            served,
            retry_after: if served {
                Duration::ZERO
            } else {
                self.retry_after()
            },
            remaining: self.remaining(),
            reset: self.reset(),
            limit: self.limit(),
        }
    }

    /// A request arriving `since` the bucket was made full: whether a
    /// token serves it. The headers of the answer are read from the bucket
    /// right after ([`Bucket::retry_after`] and the others), only those the
    /// client reads: the simulation's hot path.
    pub(super) fn take(&mut self, since: Duration) -> bool {
        let elapsed = since.saturating_sub(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.at = since;
        let served = self.tokens >= 1.0;
        if served || self.penalty {
            self.tokens -= 1.0;
        }
        served
    }

    /// `Retry-After` of a 429: until a whole token is there again, rounded
    /// up to seconds.
    pub(super) fn retry_after(&self) -> Duration {
        let short = (1.0 - self.tokens).max(0.0) / self.rate;
        Duration::from_secs_f64(short.ceil().max(1.0))
    }

    /// `x-ratelimit-remaining-requests`: whole tokens, as the header is an
    /// integer, and never negative.
    fn remaining(&self) -> u64 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let remaining = self.tokens.max(0.0).floor() as u64;
        remaining
    }

    /// `x-ratelimit-reset-requests`: until the bucket is full again.
    fn reset(&self) -> Duration {
        Duration::from_secs_f64((self.burst - self.tokens).max(0.0) / self.rate)
    }

    /// `x-ratelimit-limit-requests`: the bucket's size.
    fn limit(&self) -> u64 {
        // The burst is a whole number of requests (`Config::burst`).
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let limit = self.burst as u64;
        limit
    }

    /// The rate-limit headers of the answer just given, as [`Signals`].
    pub(super) fn signals(&self) -> Signals {
        Signals::NONE
            .remaining(self.remaining())
            .reset(self.reset())
            .limit(self.limit())
    }
}

/// A failed call, as the strategy's client read it.
#[derive(Debug, Clone, Copy)]
pub enum ApiError {
    /// A 429: the caller's own quota.
    TooManyRequests {
        /// `Retry-After`, if the client reads it.
        retry_after: Option<Duration>,
        /// The rate-limit headers, if the client passes them on.
        signals: Signals,
    },
    /// A 529 during an outage, or noise: the provider as a whole is
    /// refusing work.
    Overloaded,
    /// A 503 of the noise: one request failed, nothing said.
    Unavailable,
    /// A guard refused the call before its first attempt.
    Refused(Refused),
}

impl Classify for ApiError {
    fn classify(&self) -> ErrorClass {
        match self {
            Self::TooManyRequests { .. } => ErrorClass::RateLimited,
            Self::Overloaded | Self::Unavailable => ErrorClass::Transient,
            Self::Refused(refused) => refused.classify(),
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::TooManyRequests { retry_after, .. } => *retry_after,
            Self::Overloaded | Self::Unavailable | Self::Refused(_) => None,
        }
    }
    fn signals(&self) -> Signals {
        match self {
            Self::TooManyRequests { signals, .. } => *signals,
            Self::Overloaded => Signals::NONE.overloaded(true),
            Self::Unavailable | Self::Refused(_) => Signals::NONE,
        }
    }
    fn variant(&self) -> &'static str {
        match self {
            Self::TooManyRequests { .. } => "TooManyRequests",
            Self::Overloaded => "Overloaded",
            Self::Unavailable => "Unavailable",
            Self::Refused(_) => "Refused",
        }
    }
    fn refused() -> Option<fn(Refused) -> Self> {
        Some(Self::Refused)
    }
}
