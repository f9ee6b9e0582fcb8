//! `reqwest_middleware::Error` as a classified error (feature
//! `reqwest-middleware`): here, beside the trait, as the orphan rule
//! requires; the middleware itself is the crate `tenacious-reqwest`.
use std::borrow::Cow;
use std::io;

use reqwest_middleware::Error;

use crate::{Classify, Elapsed, ErrorClass, HttpError, Refused};

/// Classifies the error of a `ClientWithMiddleware` (so a `#[retry]` fn
/// may return it as it is) by the error it holds:
///
/// | error | classified as |
/// |---|---|
/// | `Error::Reqwest(e)` | `e`, by the [`reqwest::Error` table](crate::Classify#impl-Classify-for-Error-1) |
/// | `Error::Middleware(e)` where `e`, or an error in its source chain, is a `reqwest::Error`, an [`HttpError`], an [`Elapsed`], a [`Refused`], an `io::Error` or a `reqwest_middleware::Error` | that error (the outermost such), by its own table |
/// | any other `Error::Middleware` | `Fatal`, variant `"Middleware"`: a middleware failed in a way no retry can mend, as reqwest-retry takes it |
///
/// [`not_sent`](Classify::not_sent) is the inner error's (a connect error,
/// a guard's refusal: nothing was sent), so a policy with
/// [`idempotent(false)`](crate::Policy::idempotent) may retry those. A
/// guard's refusal before the first attempt is
/// `Error::Middleware(Refused)`.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classify, Elapsed, ErrorClass, Refused, StopReason};
///
/// let refused = reqwest_middleware::Error::middleware(Refused::new(StopReason::CircuitOpen));
/// assert_eq!(refused.classify(), ErrorClass::Transient);
/// assert!(refused.not_sent());
///
/// // A middleware's own error, which says nothing this crate reads.
/// let failed = reqwest_middleware::Error::middleware(std::fmt::Error);
/// assert_eq!(failed.classify(), ErrorClass::Fatal);
/// assert_eq!(failed.variant(), "Middleware");
///
/// // Anything of this crate's, or of reqwest's, in the middleware's error.
/// let timed_out = reqwest_middleware::Error::middleware(Elapsed::new(Duration::from_secs(10)));
/// assert_eq!((timed_out.classify(), timed_out.variant()), (ErrorClass::Transient, "Elapsed"));
/// ```
#[cfg(feature = "reqwest-middleware")] // on the item too, for its feature badge where it is re-exported
impl Classify for Error {
    fn classify(&self) -> ErrorClass {
        known(self).map_or(ErrorClass::Fatal, Classify::classify)
    }

    fn hint(&self) -> Option<Cow<'static, str>> {
        match known(self) {
            Some(error) => error.hint(),
            None => Some(Cow::Borrowed(
                "a middleware of the HTTP client failed; its error says why",
            )),
        }
    }

    fn variant(&self) -> &'static str {
        known(self).map_or("Middleware", Classify::variant)
    }

    /// The error it holds that this crate classifies: every method not
    /// written here is its.
    fn inner(&self) -> Option<&dyn Classify> {
        known(self)
    }

    /// `Error::Middleware` holding the [`Refused`].
    fn refused() -> Option<fn(Refused) -> Self> {
        Some(Error::middleware)
    }
}

impl crate::Refusable for Error {}

/// The error `error` holds that this crate classifies, if any.
fn known(error: &Error) -> Option<&dyn Classify> {
    match error {
        Error::Reqwest(error) => Some(error),
        Error::Middleware(error) => error.chain().find_map(|error| {
            let error: &dyn Classify = if let Some(e) = error.downcast_ref::<reqwest::Error>() {
                e
            } else if let Some(e) = error.downcast_ref::<HttpError>() {
                e
            } else if let Some(e) = error.downcast_ref::<Elapsed>() {
                e
            } else if let Some(e) = error.downcast_ref::<Refused>() {
                e
            } else if let Some(e) = error.downcast_ref::<io::Error>() {
                e
            } else {
                return known(error.downcast_ref::<Error>()?);
            };
            Some(error)
        }),
    }
}
