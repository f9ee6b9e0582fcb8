//! [`Failed`], what one attempt of [`RetryMiddleware`](crate::RetryMiddleware)
//! hands the engine when it did not succeed, classified as its cause.

use http::Extensions;
use reqwest_middleware::Error;
use tenacious_runtime::{Classify, Elapsed, ErrorClass, HttpError, Refused};

/// How one attempt of the middleware failed.
#[derive(Debug)]
pub(crate) enum Cause {
    /// The server answered with a 4xx or 5xx status, classified by it, its
    /// headers and its error body; the response is kept whole, the call's
    /// answer if the policy gives up on it.
    Response {
        error: HttpError,
        response: reqwest::Response,
    },
    /// The rest of the middleware chain or the client failed.
    Sent(Error),
    /// The attempt ran out of the policy's timeout (or of what its
    /// deadline left).
    Elapsed(Elapsed),
    /// A guard refused the call before its first attempt.
    Refused(Refused),
}

/// One attempt's failure, as the engine classifies it, with the
/// extensions the attempt ended with (none for an attempt dropped at its
/// time limit, or never made).
#[derive(Debug)]
pub(crate) struct Failed {
    pub(crate) cause: Cause,
    pub(crate) extensions: Option<Extensions>,
}

impl Failed {
    fn cause(&self) -> &dyn Classify {
        match &self.cause {
            Cause::Response { error, .. } => error,
            Cause::Sent(error) => error,
            Cause::Elapsed(elapsed) => elapsed,
            Cause::Refused(refused) => refused,
        }
    }
}

impl Classify for Failed {
    fn classify(&self) -> ErrorClass {
        self.cause().classify()
    }

    /// The cause: every method not written here is its.
    fn inner(&self) -> Option<&dyn Classify> {
        Some(self.cause())
    }

    fn refused() -> Option<fn(Refused) -> Self> {
        Some(|refused| Self {
            cause: Cause::Refused(refused),
            extensions: None,
        })
    }
}

impl tenacious_runtime::Refusable for Failed {}

impl From<Elapsed> for Failed {
    fn from(elapsed: Elapsed) -> Self {
        Self {
            cause: Cause::Elapsed(elapsed),
            extensions: None,
        }
    }
}
