//! [`Refused`]: the error of a call a guard stopped before its first
//! attempt, when there is no attempt's error to return.
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

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
/// use std::time::Duration;
/// use tenacious::{Classify, ErrorClass, Refused, StopReason};
///
/// let refused = Refused::new(StopReason::Cooldown);
/// assert_eq!(refused.reason(), StopReason::Cooldown);
/// assert_eq!(refused.classify(), ErrorClass::Transient);
/// assert_eq!(refused.to_string(), "refused before the first attempt (cooldown)");
///
/// // What the guard said of when it would admit again: the error's wait.
/// let refused = refused.with_retry_in(Duration::from_millis(1500));
/// assert_eq!(refused.retry_after(), Some(Duration::from_millis(1500)));
/// assert_eq!(
///     refused.to_string(),
///     "refused before the first attempt (cooldown); admits again in 1.5s"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Refused {
    reason: StopReason,
    retry_in: Option<Duration>,
}

impl Refused {
    /// A refusal for `reason`, saying nothing of when the guard would
    /// admit again.
    #[must_use]
    pub const fn new(reason: StopReason) -> Self {
        Self {
            reason,
            retry_in: None,
        }
    }

    /// The same refusal, saying the guard would admit an attempt again
    /// after `wait` ([`Guard::retry_in`](crate::Guard::retry_in)). The
    /// engine sets it from the guard that refused.
    #[must_use]
    pub const fn with_retry_in(self, wait: Duration) -> Self {
        Self {
            retry_in: Some(wait),
            ..self
        }
    }

    /// Why the guard refused the call.
    #[must_use]
    pub const fn reason(&self) -> StopReason {
        self.reason
    }

    /// How long after the refusal the guard would admit an attempt again,
    /// if it could tell: an open breaker, the rest of its break; a
    /// cooldown, until it reopens; a throttle, the wait it would have
    /// asked. It is also the error's
    /// [`retry_after`](Classify::retry_after), so an agent's observation
    /// and the task guard's verdict carry it.
    #[must_use]
    pub const fn retry_in(&self) -> Option<Duration> {
        self.retry_in
    }
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused before the first attempt ({})", self.reason)?;
        if let Some(wait) = self.retry_in {
            write!(f, "; admits again in {wait:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Refused {}

impl Classify for Refused {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }

    /// What the refusal means for the caller, by its reason: a breaker's
    /// and a cooldown's refusals are the provider's state; a throttle's
    /// (the wait for a turn would pass the deadline) is this process's
    /// own queue, which more time or fewer calls at once cure.
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(match self.reason {
            StopReason::CircuitOpen => {
                "the provider is failing and its breaker refuses calls for now; take another route or try again after retry_in"
            }
            StopReason::Cooldown => {
                "the provider asked for a pause (rate limited); try again after retry_in"
            }
            StopReason::Deadline => {
                "the queue for the provider is this process's own: the wait for a turn would pass the call's deadline; give the call more time or make fewer calls at once"
            }
            StopReason::Budget => {
                "the retry budget shared with other calls is spent; try again later"
            }
            _ => "a guard is refusing calls for now; take another route or try again later",
        }))
    }

    fn variant(&self) -> &'static str {
        "Refused"
    }

    /// When the guard would admit again ([`Refused::retry_in`]).
    fn retry_after(&self) -> Option<Duration> {
        self.retry_in
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
