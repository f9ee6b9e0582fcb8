//! [`AttemptError`] and [`RouteFailed`]: how an attempt at a target
//! failed, and what a request that no target of a
//! [`RouteMiddleware`](super::RouteMiddleware)'s route served returns.
use std::fmt;

use reqwest::Response;
use reqwest_middleware::Error;
use tenacious_runtime::__route_http;
use tenacious_runtime::route::RouteFailure;
use tenacious_runtime::{Classify, Elapsed, ErrorClass, HttpError};

use crate::failed::{Cause, Failed};

/// How an attempt at a target failed: the error a
/// [`RouteMiddleware`](super::RouteMiddleware)'s route is told (in each
/// [`Tried`](tenacious_runtime::route::Tried) of a [`RouteFailed`]),
/// classified as [`RetryMiddleware`](crate::RetryMiddleware) classifies an
/// attempt.
///
/// ```
/// use tenacious::reqwest_middleware::AttemptError;
/// use tenacious::{Classify, ErrorClass, HttpError};
///
/// let answer = http::Response::builder().status(503).body("").unwrap();
/// let error = AttemptError::Status {
///     error: HttpError::from_response(&answer),
///     response: answer.into(),
/// };
/// assert_eq!(error.classify(), ErrorClass::Transient);
/// assert_eq!(error.response().map(|r| r.status().as_u16()), Some(503));
/// ```
#[derive(Debug)]
#[non_exhaustive]
#[expect(
    clippy::large_enum_variant,
    reason = "a bad answer is the common failure: boxing it would allocate for each"
)]
pub enum AttemptError {
    /// The target answered with a 4xx or 5xx status, classified by the
    /// status, the headers and the error body; the response is kept
    /// whole (the bytes read for the classification are read again).
    Status {
        /// The answer, classified.
        error: HttpError,
        /// The answer itself.
        response: Response,
    },
    /// The rest of the chain or the client failed (a refused
    /// connection, a timeout of the client).
    Sent(Error),
}

impl AttemptError {
    /// The bad answer, if the target sent one.
    #[must_use]
    pub const fn response(&self) -> Option<&Response> {
        match self {
            Self::Status { response, .. } => Some(response),
            Self::Sent(_) => None,
        }
    }

    /// The bad answer, owned, if the target sent one.
    #[must_use]
    pub fn into_response(self) -> Option<Response> {
        match self {
            Self::Status { response, .. } => Some(response),
            Self::Sent(_) => None,
        }
    }

    /// An attempt's failure as the shared attempt returns it. The policy's
    /// timeouts and guards are the route's (its silence, its refusals):
    /// an attempt of the route never returns those, kept here all the same.
    pub(super) fn from_failed(failed: Failed) -> Self {
        match failed.cause {
            Cause::Response { error, response } => Self::Status { error, response },
            Cause::Sent(error) => Self::Sent(error),
            Cause::Elapsed(elapsed) => Self::Sent(Error::middleware(elapsed)),
            Cause::Refused(refused) => Self::Sent(Error::middleware(refused)),
        }
    }

    fn as_dyn(&self) -> &dyn Classify {
        match self {
            Self::Status { error, .. } => error,
            Self::Sent(error) => error,
        }
    }
}

impl fmt::Display for AttemptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Status { error, .. } => error.fmt(f),
            Self::Sent(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for AttemptError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(match self {
            Self::Status { error, .. } => error,
            Self::Sent(error) => error,
        })
    }
}

/// As the [`HttpError`] or the chain's error it holds.
impl Classify for AttemptError {
    fn classify(&self) -> ErrorClass {
        self.as_dyn().classify()
    }

    /// The error held: every method not written here is its.
    fn inner(&self) -> Option<&dyn Classify> {
        Some(self.as_dyn())
    }
}

/// A request no target of a [`RouteMiddleware`](super::RouteMiddleware)'s
/// route served: the error it returns, in
/// `reqwest_middleware::Error::Middleware`.
///
/// It holds the route's [`RouteFailure`] (each target tried, its attempts,
/// why its policy gave up, its last error, and why the route stopped), and
/// is classified as its last error: that of the last target tried that
/// made an attempt or was refused by its guards (a target the route
/// skipped has none), else, when the route's deadline was spent before
/// any target, as an [`Elapsed`] of that deadline (transient). That error
/// is its [`source`](std::error::Error::source), where
/// `impl Classify for reqwest_middleware::Error` finds it, so the
/// client's error classifies the same.
///
/// ```
/// use http::Extensions;
/// use reqwest::{Request, Response, Url};
/// use reqwest_middleware::{ClientBuilder, Middleware, Next};
/// use tenacious::reqwest_middleware::{RouteFailed, RouteMiddleware};
/// use tenacious::route::{Route, RouteStop, Target};
/// use tenacious::{Classify, ErrorClass, Policy};
///
/// /// Stands for the network: every provider is down.
/// struct Down;
///
/// #[async_trait::async_trait]
/// impl Middleware for Down {
///     async fn handle(&self, _: Request, _: &mut Extensions, _: Next<'_>)
///         -> reqwest_middleware::Result<Response> {
///         Ok(http::Response::builder().status(503).body("down").unwrap().into())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let route = Route::builder("docs-reqwest-down")
///     .target(
///         Target::new("docs-reqwest-down-a", Url::parse("https://a.example/v1").unwrap())
///             .policy(Policy::new().max(2)),
///     )
///     .target(Target::new("docs-reqwest-down-b", Url::parse("https://b.example/v1").unwrap()))
///     .build()
///     .unwrap();
/// let client = ClientBuilder::new(reqwest::Client::new())
///     .with(RouteMiddleware::new(route))
///     .with(Down)
///     .build();
/// let error = client.get("https://a.example/v1/models").send().await.unwrap_err();
/// // The client's error classifies as the last target's 503.
/// assert_eq!(error.classify(), ErrorClass::Transient);
/// let reqwest_middleware::Error::Middleware(error) = error else { panic!("a route failure") };
/// let failed = error.downcast::<RouteFailed>().unwrap();
/// assert_eq!(failed.failure().reason(), RouteStop::NoTargetLeft);
/// assert_eq!(failed.failure().tried()[0].attempts(), 2);
/// let answer = failed.into_last_response().unwrap();
/// assert_eq!((answer.status().as_u16(), answer.text().await.unwrap().as_str()), (503, "down"));
/// # }
/// ```
#[derive(Debug)]
pub struct RouteFailed {
    pub(super) failure: RouteFailure<AttemptError>,
    /// The route's deadline, what a route that tried no target failed by.
    pub(super) deadline: Option<Elapsed>,
}

// Which error is the route's (the last target's that has one, else the
// deadline's) is the runtime's rule, `__route_http`, written once for
// this crate and `tenacious-tower`.
impl RouteFailed {
    /// Every target's outcome, and why the route stopped.
    #[must_use]
    pub const fn failure(&self) -> &RouteFailure<AttemptError> {
        &self.failure
    }

    /// The route's failure, owned.
    #[must_use]
    pub fn into_failure(self) -> RouteFailure<AttemptError> {
        self.failure
    }

    /// The last target's bad answer, when its last error was one (a
    /// `400` the route stopped on, the `503` of the last target), body
    /// whole: what the server said.
    #[must_use]
    pub fn last_response(&self) -> Option<&Response> {
        __route_http::last(&self.failure)?.answer()?.response()
    }

    /// The last target's bad answer, owned.
    #[must_use]
    pub fn into_last_response(self) -> Option<Response> {
        __route_http::into_last_answer(self.failure)?.into_response()
    }
}

impl fmt::Display for RouteFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.failure.fmt(f)
    }
}

impl std::error::Error for RouteFailed {
    /// The last error (see [`RouteFailed`]).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        __route_http::source(&self.failure, self.deadline.as_ref())
    }
}

/// As its last error (see [`RouteFailed`]).
impl Classify for RouteFailed {
    fn classify(&self) -> ErrorClass {
        self.inner()
            .map_or(ErrorClass::Transient, Classify::classify)
    }

    /// The last error: every method not written here is its.
    fn inner(&self) -> Option<&dyn Classify> {
        __route_http::inner(&self.failure, self.deadline.as_ref())
    }
}
