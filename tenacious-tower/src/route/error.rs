//! [`AttemptError`] and [`RouteFailed`]: how an attempt at a target
//! failed, and what a call that no target of a
//! [`RouteService`](super::RouteService)'s route served returns.
use std::fmt;

use tenacious_runtime::__route_http;
use tenacious_runtime::route::RouteFailure;
use tenacious_runtime::{Classify, Elapsed, ErrorClass};

/// How an attempt at a target failed: the error a
/// [`RouteService`](super::RouteService)'s route is told (in each
/// [`Tried`](tenacious_runtime::route::Tried) of a [`RouteFailed`]): the
/// inner service's error `E`, or a response `R` the check called bad, with
/// the check's verdict `X` ([`HttpError`](tenacious_runtime::HttpError) for
/// [`HttpCheck`](crate::HttpCheck)).
///
/// ```
/// use std::io;
/// use tenacious::tower::AttemptError;
/// use tenacious::{Classify, ErrorClass, HttpError};
///
/// let answer = http::Response::builder().status(503).body(()).unwrap();
/// let bad: AttemptError<io::Error, _, _> = AttemptError::Response {
///     bad: HttpError::from_response(&answer),
///     response: answer,
/// };
/// assert_eq!(bad.classify(), ErrorClass::Transient);
/// assert_eq!(bad.response().map(|r| r.status().as_u16()), Some(503));
///
/// let reset: AttemptError<_, (), HttpError> =
///     AttemptError::Service(io::Error::from(io::ErrorKind::ConnectionReset));
/// assert_eq!(reset.to_string(), "connection reset");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum AttemptError<E, R, X> {
    /// The inner service's error, from its readiness or its call.
    Service(E),
    /// A response the check called bad, kept whole.
    Response {
        /// The response.
        response: R,
        /// The check's verdict on it.
        bad: X,
    },
}

impl<E, R, X> AttemptError<E, R, X> {
    /// The inner service's error, if that is what this is.
    #[must_use]
    pub const fn service(&self) -> Option<&E> {
        match self {
            Self::Service(error) => Some(error),
            Self::Response { .. } => None,
        }
    }

    /// The bad response, if that is what this is.
    #[must_use]
    pub const fn response(&self) -> Option<&R> {
        match self {
            Self::Response { response, .. } => Some(response),
            Self::Service(_) => None,
        }
    }

    /// The bad response, owned, if that is what this is.
    #[must_use]
    pub fn into_response(self) -> Option<R> {
        match self {
            Self::Response { response, .. } => Some(response),
            Self::Service(_) => None,
        }
    }
}

impl<E: Classify, R, X: Classify> AttemptError<E, R, X> {
    fn as_dyn(&self) -> &dyn Classify {
        match self {
            Self::Service(error) => error,
            Self::Response { bad, .. } => bad,
        }
    }
}

impl<E: fmt::Display, R, X: fmt::Display> fmt::Display for AttemptError<E, R, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Service(error) => error.fmt(f),
            Self::Response { bad, .. } => bad.fmt(f),
        }
    }
}

impl<E, R, X> std::error::Error for AttemptError<E, R, X>
where
    E: std::error::Error + 'static,
    R: fmt::Debug,
    X: std::error::Error + 'static,
{
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(match self {
            Self::Service(error) => error,
            Self::Response { bad, .. } => bad,
        })
    }
}

/// As the service's error, or the check's verdict.
impl<E: Classify, R, X: Classify> Classify for AttemptError<E, R, X> {
    fn classify(&self) -> ErrorClass {
        self.as_dyn().classify()
    }

    /// What it holds: every method not written here is its.
    fn inner(&self) -> Option<&dyn Classify> {
        Some(self.as_dyn())
    }
}

/// A call no target of a [`RouteService`](super::RouteService)'s route
/// served: its error.
///
/// It holds the route's [`RouteFailure`] (each target tried, its attempts,
/// why its policy gave up, its last error, and why the route stopped), and
/// is classified as its last error: that of the last target tried that
/// made an attempt or was refused by its guards (a target the route
/// skipped has none), else, when the route's deadline was spent before
/// any target, as an [`Elapsed`] of that deadline (transient). That error
/// is its [`source`](std::error::Error::source), so it converts into
/// tower's `BoxError` for the layers stacked on top.
///
/// ```
/// use std::convert::Infallible;
/// use http::{Response, StatusCode, Uri};
/// use tenacious::route::{Route, RouteStop, Target};
/// use tenacious::tower::RouteService;
/// use tenacious::{Classify, ErrorClass, Policy};
/// use tower::{ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let refuse = service_fn(|_: http::Request<String>| async {
///     Ok::<_, Infallible>(Response::builder().status(StatusCode::BAD_REQUEST).body("no").unwrap())
/// });
/// let route = Route::builder("docs-tower-400")
///     .target(Target::new("docs-tower-400-a", Uri::from_static("http://a.example/v1")))
///     .target(Target::new("docs-tower-400-b", Uri::from_static("http://b.example/v1")))
///     .build()
///     .unwrap();
/// let failed = RouteService::new(refuse, route)
///     .oneshot(http::Request::new(String::new()))
///     .await
///     .unwrap_err();
/// // A request to fix: the route stops at the first target.
/// assert_eq!(failed.classify(), ErrorClass::Invalid);
/// assert_eq!(failed.failure().reason(), RouteStop::Stopped);
/// assert_eq!(failed.failure().tried().len(), 1);
/// assert_eq!(failed.into_last_response().unwrap().into_body(), "no");
/// # }
/// ```
#[derive(Debug)]
pub struct RouteFailed<E, R, X> {
    pub(super) failure: RouteFailure<AttemptError<E, R, X>>,
    /// The route's deadline, what a route that tried no target failed by.
    pub(super) deadline: Option<Elapsed>,
}

// Which error is the route's (the last target's that has one, else the
// deadline's) is the runtime's rule, `__route_http`, written once for
// this crate and `tenacious-reqwest`.
impl<E, R, X> RouteFailed<E, R, X> {
    /// Every target's outcome, and why the route stopped.
    #[must_use]
    pub const fn failure(&self) -> &RouteFailure<AttemptError<E, R, X>> {
        &self.failure
    }

    /// The route's failure, owned.
    #[must_use]
    pub fn into_failure(self) -> RouteFailure<AttemptError<E, R, X>> {
        self.failure
    }

    /// The last target's bad response, when its last error was one (a
    /// `400` the route stopped on, the `503` of the last target), body
    /// untouched: what the server said.
    #[must_use]
    pub fn last_response(&self) -> Option<&R> {
        __route_http::last(&self.failure)?.answer()?.response()
    }

    /// The last target's bad response, owned.
    #[must_use]
    pub fn into_last_response(self) -> Option<R> {
        __route_http::into_last_answer(self.failure)?.into_response()
    }
}

impl<E: fmt::Display, R, X: fmt::Display> fmt::Display for RouteFailed<E, R, X> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.failure.fmt(f)
    }
}

impl<E, R, X> std::error::Error for RouteFailed<E, R, X>
where
    E: std::error::Error + 'static,
    R: fmt::Debug + 'static,
    X: std::error::Error + 'static,
{
    /// The last error (see [`RouteFailed`]).
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        __route_http::source(&self.failure, self.deadline.as_ref())
    }
}

/// As its last error (see [`RouteFailed`]).
impl<E: Classify, R, X: Classify> Classify for RouteFailed<E, R, X> {
    fn classify(&self) -> ErrorClass {
        self.inner()
            .map_or(ErrorClass::Transient, Classify::classify)
    }

    /// The last error: every method not written here is its.
    fn inner(&self) -> Option<&dyn Classify> {
        __route_http::inner(&self.failure, self.deadline.as_ref())
    }
}
