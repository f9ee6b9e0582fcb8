//! [`Nested`]: what a retried call does inside another's attempt.

/// What a retried call does when it runs inside an attempt of another
/// retried call.
///
/// Retries multiply when layered: an outer call of 3 attempts around an
/// inner one of 3 makes 9 inner attempts against a service that is already
/// failing. So by default the inner call makes one attempt and leaves the
/// retrying to the outer call. Write `#[retry(nested = "retry")]` (or
/// [`Policy::nested`](crate::Policy::nested)`(Nested::Retry)`) for an inner call that must retry on
/// its own, say one whose errors the outer call does not retry.
///
/// "Inside" means: started while an attempt of another retried call runs on
/// the same thread or in the same task (a task spawned by the attempt is
/// not inside it).
///
/// ```
/// use tenacious::{Nested, Policy};
///
/// assert_eq!(Policy::new().get_nested(), Nested::Once);
/// const INNER: Policy = Policy::new().nested(Nested::Retry);
/// assert_eq!(INNER.get_nested(), Nested::Retry);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Nested {
    /// One attempt, whatever `max` says; a retryable error ends the call
    /// with [`StopReason::Nested`](crate::StopReason::Nested). The default.
    #[default]
    Once,
    /// Retry as the policy says, inside the outer call's attempt.
    Retry,
}

impl Nested {
    /// The name `#[retry(nested = "...")]` takes: `"once"` or `"retry"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Retry => "retry",
        }
    }
}
