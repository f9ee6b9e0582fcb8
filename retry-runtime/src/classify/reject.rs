//! [`Reject`]: why a target turned a request down, beyond its class — what
//! a route needs to tell "another target may serve this" from "no target
//! will".
use std::fmt;

/// Why a target rejected a request, when the error says: what
/// [`Classify::rejected`](crate::Classify::rejected) returns. Both are
/// `Invalid` errors (the same request fails the same way at the same
/// target); they differ in what another target would do with it.
///
/// [`HttpError`](crate::HttpError) reads them from the provider's error
/// body (see its presets table); `#[derive(Classify)]` passes them up
/// from a `transparent` variant's error.
///
/// ```
/// use tenacious::{Classify, ErrorClass, Reject};
///
/// #[derive(Debug)]
/// struct TooLong;
/// impl Classify for TooLong {
///     fn classify(&self) -> ErrorClass { ErrorClass::Invalid }
///     fn rejected(&self) -> Option<Reject> { Some(Reject::ContextLength) }
/// }
/// assert_eq!(TooLong.rejected(), Some(Reject::ContextLength));
/// assert!(Reject::ContextLength.another_target_may_serve());
/// assert!(!Reject::ContentFilter.another_target_may_serve());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reject {
    /// The request is longer than the target's context window
    /// (`context_length_exceeded`, "prompt is too long"): a target with a
    /// larger window may serve it unchanged.
    ContextLength,
    /// The target's content policy refused the request
    /// (`content_filter`, `content_policy_violation`): another model will
    /// most likely refuse it too, so the request, not the target, must
    /// change.
    ContentFilter,
}

impl Reject {
    /// Whether another target may serve the same request: a larger
    /// context window may ([`ContextLength`](Reject::ContextLength)); a
    /// content policy is the provider's across its models
    /// ([`ContentFilter`](Reject::ContentFilter)).
    #[must_use]
    pub const fn another_target_may_serve(self) -> bool {
        matches!(self, Self::ContextLength)
    }

    /// Its name in statistics and observations: `"context_length"` or
    /// `"content_filter"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ContextLength => "context_length",
            Self::ContentFilter => "content_filter",
        }
    }
}

impl fmt::Display for Reject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
