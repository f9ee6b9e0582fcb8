//! Why a retried call stopped retrying: [`StopReason`], the one list of
//! reasons the engine decides, the statistics count and the `tracing`
//! events and `metrics` label.
use std::fmt;

/// Why a retried call stopped retrying.
///
/// `Display` gives a short lowercase phrase (`"exhausted"`, `"not
/// retryable"`, …), as [`Failure`](crate::Failure)'s one-line story uses it.
///
/// ```
/// use tenacious::StopReason;
///
/// assert_eq!(StopReason::HintTooLong.to_string(), "hint too long");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// Every allowed attempt was made.
    Exhausted,
    /// The error's class is not retried (or `when` said no).
    NotRetryable,
    /// The server's hint was longer than `max_retry_after`.
    HintTooLong,
    /// Waiting for the next attempt (the backoff or the server's hint)
    /// would have ended at or past the deadline.
    Deadline,
    /// The shared retry budget could not pay for another retry.
    Budget,
    /// The call ran inside another retried call and made its one attempt
    /// (see [`Nested`](crate::Nested)); the outer call decides whether to try again.
    Nested,
    /// A [`Guard`](crate::Guard) of the policy refused the next attempt.
    Guard,
    /// The shared [`Cooldown`](crate::Cooldown) would have kept the call
    /// waiting longer than `max_retry_after` or past its deadline.
    Cooldown,
    /// The shared [`Breaker`](crate::Breaker) is open (or half-open with
    /// every probe out): the provider failed too often lately (transient
    /// errors, overload), so the call stopped at once, without the attempt.
    CircuitOpen,
    /// A retried stream failed after it had delivered items, and is not
    /// resumed: retrying would repeat output the consumer already has, so
    /// it ended with the error ([`Failure::delivered`](crate::Failure::delivered)
    /// counts the items).
    PartialOutput,
    /// The call is not idempotent ([`Policy::idempotent`](crate::Policy::idempotent)
    /// is `false`) and its error does not prove the request never reached
    /// the server ([`Classify::not_sent`](crate::Classify::not_sent)): it
    /// may have been applied, and a retry could apply it twice.
    NotIdempotent,
    /// Every permit of the shared [`Concurrency`](crate::Concurrency)
    /// limit stayed out for longer than the call could wait (its
    /// `max_wait`, or what was left of its deadline).
    Concurrency,
}

impl StopReason {
    /// Every reason, in declaration order.
    pub const ALL: [Self; 12] = [
        Self::Exhausted,
        Self::NotRetryable,
        Self::HintTooLong,
        Self::Deadline,
        Self::Budget,
        Self::Nested,
        Self::Guard,
        Self::Cooldown,
        Self::CircuitOpen,
        Self::PartialOutput,
        Self::NotIdempotent,
        Self::Concurrency,
    ];

    /// The reason as one snake_case word, as the `reason` of the tracing
    /// events and of the `tenacious_gave_up_total` metric spell it:
    /// `"exhausted"`, `"not_retryable"`, `"hint_too_long"`, `"deadline"`,
    /// `"budget"`, `"nested"`, `"guard"`, `"cooldown"`, `"circuit_open"`,
    /// `"partial_output"`, `"not_idempotent"` or `"concurrency_limit"`.
    ///
    /// ```
    /// use tenacious::StopReason;
    ///
    /// assert_eq!(StopReason::NotRetryable.label(), "not_retryable");
    /// ```
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::Exhausted => "exhausted",
            Self::NotRetryable => "not_retryable",
            Self::HintTooLong => "hint_too_long",
            Self::Deadline => "deadline",
            Self::Budget => "budget",
            Self::Nested => "nested",
            Self::Guard => "guard",
            Self::Cooldown => "cooldown",
            Self::CircuitOpen => "circuit_open",
            Self::PartialOutput => "partial_output",
            Self::NotIdempotent => "not_idempotent",
            Self::Concurrency => "concurrency_limit",
        }
    }

    /// The position of the reason in [`StopReason::ALL`].
    pub(crate) const fn index(self) -> usize {
        match self {
            Self::Exhausted => 0,
            Self::NotRetryable => 1,
            Self::HintTooLong => 2,
            Self::Deadline => 3,
            Self::Budget => 4,
            Self::Nested => 5,
            Self::Guard => 6,
            Self::Cooldown => 7,
            Self::CircuitOpen => 8,
            Self::PartialOutput => 9,
            Self::NotIdempotent => 10,
            Self::Concurrency => 11,
        }
    }

    /// A short lowercase phrase: `"exhausted"`, `"not retryable"`, `"hint
    /// too long"`, `"deadline"`, `"budget"`, `"nested"`, `"guard"`, `"cooldown"`,
    /// `"circuit open"`, `"partial output"`, `"not idempotent"` or
    /// `"concurrency limit"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Exhausted => "exhausted",
            Self::NotRetryable => "not retryable",
            Self::HintTooLong => "hint too long",
            Self::Deadline => "deadline",
            Self::Budget => "budget",
            Self::Nested => "nested",
            Self::Guard => "guard",
            Self::Cooldown => "cooldown",
            Self::CircuitOpen => "circuit open",
            Self::PartialOutput => "partial output",
            Self::NotIdempotent => "not idempotent",
            Self::Concurrency => "concurrency limit",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_read_as_phrases() {
        let names: Vec<String> = StopReason::ALL.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "exhausted",
                "not retryable",
                "hint too long",
                "deadline",
                "budget",
                "nested",
                "guard",
                "cooldown",
                "circuit open",
                "partial output",
                "not idempotent",
                "concurrency limit"
            ]
        );
    }

    #[test]
    fn every_reason_sits_at_its_index_and_labels_as_its_phrase() {
        for (i, reason) in StopReason::ALL.into_iter().enumerate() {
            assert_eq!(reason.index(), i);
            assert_eq!(reason.label(), reason.as_str().replace(' ', "_"));
        }
    }
}
