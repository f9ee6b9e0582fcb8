//! [`Refused`]: the error of a call a guard stopped before its first
//! attempt, when there is no attempt's error to return.
use std::borrow::Cow;
use std::fmt;

use crate::{Classify, ErrorClass, StopReason};

/// A call stopped before its first attempt by one of its policy's guards:
/// an open circuit [`Breaker`](crate::Breaker), or a
/// [`Cooldown`](crate::Cooldown) the call cannot wait for (longer than
/// its `max_retry_after`, or past its deadline).
///
/// There is no attempt's error to return then, so the call returns its
/// error type made from this one, if the type says how
/// ([`Classify::refused`]: `io::Error`, `HttpError` and `Failure<E>` of
/// such an `E` do, and so does an enum deriving `Classify` with a
/// `#[classify(refused)]` variant holding the `Refused`). An error type that cannot say
/// it makes its first attempt anyway, and its guards refuse only retries.
///
/// Classified [`Transient`](ErrorClass::Transient) (the guard expects to
/// let calls through again), with a hint for the model to take another
/// route meanwhile; [`reason`](Refused::reason) says which guard.
///
/// ```
/// use tenacious::{Classify, ErrorClass, Refused, StopReason};
///
/// let refused = Refused::new(StopReason::Cooldown);
/// assert_eq!(refused.reason(), StopReason::Cooldown);
/// assert_eq!(refused.classify(), ErrorClass::Transient);
/// assert_eq!(refused.to_string(), "refused before the first attempt (cooldown)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Refused {
    reason: StopReason,
}

impl Refused {
    /// A refusal for `reason`.
    #[must_use]
    pub const fn new(reason: StopReason) -> Self {
        Self { reason }
    }

    /// Why the guard refused the call.
    #[must_use]
    pub const fn reason(&self) -> StopReason {
        self.reason
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused before the first attempt ({})", self.reason)
    }
}

impl std::error::Error for Refused {}

impl Classify for Refused {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }

    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(
            "the provider is refusing calls for now; take another route or try again later",
        ))
    }

    fn variant(&self) -> &'static str {
        "Refused"
    }

    /// A refused call sent nothing.
    fn not_sent(&self) -> bool {
        true
    }

    fn refused() -> Option<fn(Refused) -> Self> {
        Some(|refused| refused)
    }
}
