//! `Status`: what the model should do about a failed tool call.
use std::fmt;

use serde::{Deserialize, Serialize};

#[cfg(doc)]
use tenacious_runtime::Failure;
use tenacious_runtime::{ErrorClass, StopReason};

#[cfg(doc)]
use super::Observation;

/// What the model should do about a failed tool call: the `status` of an
/// [`Observation`], one per error class, or per the reason a call stopped
/// when that says more than the class.
///
/// | class / stop reason | status | the model should |
/// |---|---|---|
/// | `transient` | `"retry_later"` | try the call again later, or reach the goal another way |
/// | `rate_limited` | `"wait_and_retry"` | wait `retry_after_ms` (when given), then call again |
/// | `invalid` | `"fix_input"` | change the arguments: the same call fails the same way |
/// | `fatal` | `"escalate"` | stop and tell the user: a human must fix it |
/// | [`StopReason::Cooldown`] | `"wait_and_retry"` | the provider asked every caller to wait: wait, then call again |
/// | [`StopReason::Concurrency`] | `"wait_and_retry"` | every permit of the provider's concurrency limit stayed busy: do other work, then call again |
/// | [`StopReason::CircuitOpen`] | `"switch_direction"` | the provider is failing: take another route (another tool or provider), do not call it again now |
/// | a give-up a fallback answered ([`Observation::fallback`]) | `"fallback"` | use the fallback's answer as a best effort: it may be stale, partial or a default |
/// | [`StopReason::NotIdempotent`] | `"verify_first"` | the request may have been applied: check whether it took effect before calling again |
/// | a stream that had delivered items ([`StopReason::PartialOutput`], or any failure with [`Failure::delivered`] above 0) | `"partial_output"` | part of the answer already reached the user: do not call again to repeat it; continue from where it stopped, or say it was cut off |
///
/// ```
/// use tenacious::{ErrorClass, StopReason};
/// use tenacious::agent::Status;
///
/// assert_eq!(Status::for_class(ErrorClass::Invalid), Status::FixInput);
/// assert_eq!(Status::Escalate.as_str(), "escalate");
/// assert_eq!(
///     Status::for_stop(StopReason::CircuitOpen, ErrorClass::Transient),
///     Status::SwitchDirection
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A temporary failure outlasted the retries: try later or another way.
    RetryLater,
    /// Rate limited: wait the server's hint, then call again.
    WaitAndRetry,
    /// The request was wrong: fix the arguments before calling again.
    FixInput,
    /// A fault a human must fix: stop, do not retry, tell the user.
    Escalate,
    /// The provider behind the tool is failing (its circuit
    /// [`Breaker`](tenacious_runtime::Breaker) is open): take another route — another
    /// tool, another provider — rather than calling it again now.
    SwitchDirection,
    /// A stream failed after part of its output reached the user: calling
    /// again would repeat it. Continue from where it stopped (ask for the
    /// rest), or tell the user the answer was cut off.
    PartialOutput,
    /// A call that is not idempotent failed after its request may have
    /// reached the server: check whether it took effect (the order exists,
    /// the email went) before calling again.
    VerifyFirst,
    /// The call gave up and a fallback answered instead (a cached value,
    /// a default, a graceful message): use the answer as a best effort,
    /// and say so where it matters.
    Fallback,
}

impl Status {
    /// The status for an error of `class` (the table on [`Status`]).
    #[must_use]
    pub const fn for_class(class: ErrorClass) -> Self {
        match class {
            ErrorClass::Transient => Self::RetryLater,
            ErrorClass::RateLimited => Self::WaitAndRetry,
            ErrorClass::Invalid => Self::FixInput,
            ErrorClass::Fatal => Self::Escalate,
        }
    }

    /// The status for a call that stopped for `reason` with a last error
    /// of `class` (the table on [`Status`]): `SwitchDirection` for
    /// [`StopReason::CircuitOpen`], `WaitAndRetry` for
    /// [`StopReason::Cooldown`] and [`StopReason::Concurrency`], `PartialOutput` for
    /// [`StopReason::PartialOutput`], `VerifyFirst` for
    /// [`StopReason::NotIdempotent`], else as [`for_class`](Status::for_class).
    #[must_use]
    pub const fn for_stop(reason: StopReason, class: ErrorClass) -> Self {
        match reason {
            StopReason::CircuitOpen => Self::SwitchDirection,
            StopReason::Cooldown | StopReason::Concurrency => Self::WaitAndRetry,
            StopReason::PartialOutput => Self::PartialOutput,
            StopReason::NotIdempotent => Self::VerifyFirst,
            _ => Self::for_class(class),
        }
    }

    /// The name it serialises as: `"retry_later"`, `"wait_and_retry"`,
    /// `"fix_input"`, `"escalate"`, `"switch_direction"`,
    /// `"partial_output"`, `"verify_first"` or `"fallback"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::RetryLater => "retry_later",
            Self::WaitAndRetry => "wait_and_retry",
            Self::FixInput => "fix_input",
            Self::Escalate => "escalate",
            Self::SwitchDirection => "switch_direction",
            Self::PartialOutput => "partial_output",
            Self::VerifyFirst => "verify_first",
            Self::Fallback => "fallback",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_follows_class() {
        let statuses: Vec<_> = ErrorClass::ALL
            .into_iter()
            .map(|c| Status::for_class(c).as_str())
            .collect();
        assert_eq!(
            statuses,
            ["retry_later", "wait_and_retry", "fix_input", "escalate"]
        );
    }
}
