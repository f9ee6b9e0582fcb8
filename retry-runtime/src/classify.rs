//! Error classes and the `Classify` trait.
use std::borrow::Cow;
use std::time::Duration;

/// What kind of failure an error is, and so what a retry layer does with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// A passing fault (timeout, reset, 5xx): back off and retry.
    Transient,
    /// The server asked to slow down (429): wait its hint, bounded, then retry.
    RateLimited,
    /// The request itself is wrong (400, 404, 422, invalid model output):
    /// never retried unchanged.
    Invalid,
    /// A fault a human must fix (401, 403, bad config): never retried.
    Fatal,
}

/// Classifies an error for the retry layers.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `Classify`",
    label = "the error type of a retried fn must implement `tenacious::Classify`",
    note = "add `#[derive(tenacious::Classify)]` to `{Self}` and mark each variant with `#[classify(transient)]`, `#[classify(rate_limited)]`, `#[classify(invalid)]`, `#[classify(fatal)]` or `#[classify(transparent)]`"
)]
pub trait Classify {
    /// The class of this error.
    fn classify(&self) -> ErrorClass;
    /// The server's hint of how long to wait before the next attempt.
    fn retry_after(&self) -> Option<Duration> {
        None
    }
    /// Advice for the model or the operator.
    fn hint(&self) -> Option<Cow<'static, str>> {
        None
    }
    /// The variant's name, for the error distribution.
    fn variant(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}
