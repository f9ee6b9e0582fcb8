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
/// `#[classify(refused)]` variant holding the `Refused`); such a type is
/// [`Refusable`]. `#[retry]` refuses to compile a guard key (`breaker`,
/// `cooldown`, `throttle`, `guard`) on a fn whose error type is not, since
/// the guard could not stop its first attempt.
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

/// An error type that can say a guard refused a call before its first
/// attempt: its [`Classify::refused`] returns `Some`.
///
/// `#[retry]` asks for it of the error type of a fn that names a guard
/// (`breaker`, `cooldown`, `throttle` or `guard`): without it an open
/// breaker, a cooldown or a throttle could refuse only the call's retries,
/// and a `max = 1` call would walk past them. `#[derive(Classify)]`
/// implements it for a type with a `#[classify(refused)]` variant;
/// `io::Error`, `HttpError` (feature `http`), `Refused`, the adapters'
/// errors and `Failure<E>` of such an `E` implement it too. Implement it
/// by hand only beside a `Classify::refused` that returns `Some`.
///
/// ```
/// use tenacious::{Breaker, Classify, Refused, Refusable, retry};
///
/// #[derive(Debug, Classify)]
/// enum ToolError {
///     #[classify(transient)]
///     Timeout,
///     #[classify(refused)]
///     Refused(Refused),
/// }
///
/// fn refusable<E: Refusable>() {}
/// refusable::<ToolError>();
///
/// static PROVIDER: Breaker = Breaker::new();
///
/// #[retry(max = 1, breaker = PROVIDER)]
/// async fn call() -> Result<u32, ToolError> {
///     Ok(1)
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot say a guard refused the call, so the guard could not stop its first attempt",
    label = "this guard may refuse a call before its first attempt",
    note = "add a variant `#[classify(refused)] Refused(tenacious::Refused)` to the error type: a call the guard stops returns it, sending nothing"
)]
pub trait Refusable: Classify {}

impl Refusable for Refused {}

impl Refusable for std::io::Error {}

impl<E: Refusable> Refusable for crate::Failure<E> {}
