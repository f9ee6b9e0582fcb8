//! [`RouteLayer`] and [`RouteService`]: each `http::Request` through a
//! [`Route`] of base URIs, the next target serving when one cannot;
//! [`ServedBy`], the target that answered; [`RouteFailed`] and
//! [`AttemptError`], what a call no target served returns.
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::uri::PathAndQuery;
use http::{Request, Response, Uri};
use tower_layer::Layer;
use tower_service::Service;

use tenacious_runtime::route::{Route, RouteFailure, TargetError, Tried};
use tenacious_runtime::{Attempt, Classify, Elapsed, ErrorClass};

use crate::{CheckResponse, HttpCheck, IdempotencyHeader, NoKey, Resend, StampKey};

/// A tower [`Layer`] that wraps a service of `http::Request`s in a
/// [`RouteService`]: each call sent through a [`Route`] of base URIs, the
/// request's URI rewritten onto each target's base.
///
/// ```
/// use std::convert::Infallible;
///
/// use http::{Request, Response, StatusCode, Uri};
/// use tenacious::Policy;
/// use tenacious::route::{Route, Target};
/// use tenacious::tower::{RouteLayer, ServedBy};
/// use tower::{ServiceBuilder, ServiceExt, service_fn};
///
/// // Stands for the network: the primary is down, the fallback answers.
/// async fn network(request: Request<String>) -> Result<Response<String>, Infallible> {
///     let status = match request.uri().to_string().as_str() {
///         "https://fallback.example/openai/v1/chat/completions" => StatusCode::OK,
///         _ => StatusCode::SERVICE_UNAVAILABLE,
///     };
///     Ok(Response::builder().status(status).body("{}".to_owned()).unwrap())
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let route = Route::builder("docs-tower-chat")
///     .target(
///         Target::new("docs-tower-primary", Uri::from_static("https://primary.example/v1"))
///             .policy(Policy::new().max(2)),
///     )
///     .target(Target::new(
///         "docs-tower-fallback",
///         Uri::from_static("https://fallback.example/openai/v1"),
///     ))
///     .build()
///     .unwrap();
/// let client = ServiceBuilder::new()
///     .layer(RouteLayer::new(route))
///     .service(service_fn(network));
/// // Written against the first target's base (or as the path after it).
/// let request = Request::post("/v1/chat/completions").body("{}".to_owned()).unwrap();
/// let response = client.oneshot(request).await.unwrap();
/// assert_eq!(response.status(), StatusCode::OK);
/// let served = response.extensions().get::<ServedBy>().unwrap();
/// assert_eq!((served.name(), served.index()), ("docs-tower-fallback", 1));
/// # }
/// ```
///
/// # Where each target's request goes
///
/// Each target's data is its base URI (`Route<Uri>`, [`http::Uri`]), with
/// a scheme and a host: `https://api.openai.com/v1`. A request is written
/// against the first target's base, and what follows that base goes
/// after each target's own:
///
/// - the request URI's path less the first target's base path, when it
///   starts with it on a `/` boundary (a base `http://a:1/v1` and a
///   request to `/v1/chat` give `/chat`), else the whole path (a request
///   to `/chat` gives `/chat` too); the request's scheme and host, if it
///   has them, are not read;
/// - each target is sent that path after its base's path (a base
///   `http://b:2/openai/v1` is sent `http://b:2/openai/v1/chat`), with its
///   base's scheme and authority, and the request's query after the
///   base's own, if it has one (`?api-version=…`).
///
/// Headers and body go to every target as they are (a `Host` header of
/// the caller's own included).
///
/// # What is retried, and where
///
/// Each attempt sends a copy of the request ([`Resend`]: an
/// `http::Request<B>` whose body `B` is `Clone`) to a clone of the inner
/// service, and the target's policy decides on what comes back as
/// [`RetryLayer`](crate::RetryLayer) does: the inner service's error (from
/// its readiness or its call), which must be [`Classify`], and a response
/// the check calls bad — by default ([`HttpCheck`]) a 4xx or 5xx status,
/// classified by [`HttpError`](tenacious_runtime::HttpError) from its status and
/// headers, its `Retry-After` waited at the target up to the policy's
/// `max_retry_after`. When the target's policy gives up, the route's
/// [`Rules`](tenacious_runtime::route::Rules) decide: a target that is
/// down, overloaded or out of attempts, a `Retry-After` longer than the
/// policy waits, an open breaker: the next target; a request the caller
/// must fix (a `400`), one that may have been applied (a policy with
/// [`idempotent(false)`](tenacious_runtime::Policy::idempotent)): the
/// route stops, and no other target is sent it. A target's policy
/// `timeout` is its [silence limit](tenacious_runtime::route::Target::silence):
/// an attempt without an answer within it leaves the target.
///
/// Every attempt carries its call's
/// [`IdempotencyKey`](tenacious_runtime::IdempotencyKey) in the
/// `Idempotency-Key` header ([`IdempotencyHeader`]), unless the request
/// has it already: the attempts at one target share one key, another
/// target is sent its own. Name another header with
/// [`key_header`](RouteLayer::key_header), put it elsewhere with
/// [`key_with`](RouteLayer::key_with), or send none with
/// [`without_key`](RouteLayer::without_key).
///
/// # What the call returns
///
/// - the first good response, with a [`ServedBy`] in its extensions: the
///   target that answered, its place in the route, the attempts it took
///   there;
/// - when no target served: a [`RouteFailed`], every target's outcome
///   and why the route stopped, classified as the last target's error;
///   the last bad response, body untouched, is
///   [`RouteFailed::last_response`].
///
/// # Readiness
///
/// [`RouteService::poll_ready`](Service::poll_ready) is always ready:
/// each attempt takes its own clone of the inner service and drives it
/// ready itself, so a concurrency limit inside the route bounds the
/// attempts in flight and none holds a slot through a backoff or while
/// another target is tried. An error of its readiness is that attempt's
/// [`AttemptError::Service`].
///
/// The call's future is `Send` (and boxed): the inner service, its future,
/// the body, the check and the key's `K` must be `Send + 'static`.
#[derive(Debug, Clone)]
pub struct RouteLayer<C = HttpCheck, K = IdempotencyHeader> {
    route: Route<Uri>,
    check: C,
    key: K,
}

impl RouteLayer {
    /// Sends each call through `route`, checking `http::Response`s with
    /// [`HttpCheck`] and sending the key as `Idempotency-Key`.
    ///
    /// # Panics
    ///
    /// When a target's base URI has no scheme or no host (`/v1`).
    ///
    /// ```should_panic
    /// use http::Uri;
    /// use tenacious::route::{Route, Target};
    /// use tenacious::tower::RouteLayer;
    ///
    /// let relative = Uri::from_static("/v1");
    /// let route = Route::builder("docs-tower-relative").target(Target::new("docs-tower-relative-0", relative));
    /// RouteLayer::new(route.build().unwrap());
    /// ```
    #[must_use]
    pub fn new(route: Route<Uri>) -> Self {
        for target in route.targets() {
            let base = target.data();
            assert!(
                base.scheme().is_some() && base.authority().is_some(),
                "the base URI of target `{}` has no scheme or no host: {base}",
                target.name(),
            );
        }
        Self {
            route,
            check: HttpCheck,
            key: IdempotencyHeader::DEFAULT,
        }
    }
}

impl<C, K> RouteLayer<C, K> {
    /// Checks responses with `check` (see [`RetryLayer::check`](crate::RetryLayer::check)).
    ///
    /// ```
    /// use http::Uri;
    /// use tenacious::HttpError;
    /// use tenacious::route::{Route, Target};
    /// use tenacious::tower::RouteLayer;
    ///
    /// let base = Uri::from_static("https://api.example/v1");
    /// let route = Route::builder("docs-tower-check").target(Target::new("docs-tower-check-0", base));
    /// // Only 5xx are failures: a 4xx goes to the caller as it is.
    /// let layer = RouteLayer::new(route.build().unwrap()).check(|response: &http::Response<String>| {
    ///     if response.status().is_server_error() {
    ///         Err(HttpError::from_response(response))
    ///     } else {
    ///         Ok(())
    ///     }
    /// });
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn check<C2>(self, check: C2) -> RouteLayer<C2, K> {
        RouteLayer {
            route: self.route,
            check,
            key: self.key,
        }
    }

    /// Puts the key into each attempt's request with `key` (see
    /// [`RetryLayer::key_with`](crate::RetryLayer::key_with)).
    ///
    /// ```
    /// use http::Uri;
    /// use tenacious::IdempotencyKey;
    /// use tenacious::route::{Route, Target};
    /// use tenacious::tower::RouteLayer;
    ///
    /// let base = Uri::from_static("https://api.example/v1");
    /// let route = Route::builder("docs-tower-keywith").target(Target::new("docs-tower-keywith-0", base));
    /// // The key in a header of the caller's own, in its own form.
    /// let layer = RouteLayer::new(route.build().unwrap()).key_with(
    ///     |request: &mut http::Request<String>, key: IdempotencyKey| {
    ///         let value = http::HeaderValue::try_from(format!("key={key}")).unwrap();
    ///         request.headers_mut().insert("x-dedup", value);
    ///     },
    /// );
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn key_with<K2>(self, key: K2) -> RouteLayer<C, K2> {
        RouteLayer {
            route: self.route,
            check: self.check,
            key,
        }
    }

    /// Sends no key ([`NoKey`]).
    ///
    /// ```
    /// use http::Uri;
    /// use tenacious::route::{Route, Target};
    /// use tenacious::tower::{NoKey, RouteLayer};
    ///
    /// let base = Uri::from_static("https://api.example/v1");
    /// let route = Route::builder("docs-tower-nokey").target(Target::new("docs-tower-nokey-0", base));
    /// let layer = RouteLayer::new(route.build().unwrap()).without_key();
    /// assert_eq!(*layer.get_key(), NoKey);
    /// assert_eq!(layer.get_route().name(), "docs-tower-nokey");
    /// ```
    #[must_use]
    pub fn without_key(self) -> RouteLayer<C, NoKey> {
        self.key_with(NoKey)
    }

    /// The route.
    #[must_use]
    pub const fn get_route(&self) -> &Route<Uri> {
        &self.route
    }

    /// The response check.
    #[must_use]
    pub const fn get_check(&self) -> &C {
        &self.check
    }

    /// Where the key goes.
    #[must_use]
    pub const fn get_key(&self) -> &K {
        &self.key
    }
}

impl<C> RouteLayer<C, IdempotencyHeader> {
    /// Sends the key in the header `name` instead of `Idempotency-Key`.
    ///
    /// ```
    /// use http::{HeaderName, Uri};
    /// use tenacious::route::{Route, Target};
    /// use tenacious::tower::RouteLayer;
    ///
    /// let base = Uri::from_static("https://api.example/v1");
    /// let route = Route::builder("docs-tower-header").target(Target::new("docs-tower-header-0", base));
    /// let layer = RouteLayer::new(route.build().unwrap())
    ///     .key_header(HeaderName::from_static("x-request-key"));
    /// assert_eq!(layer.get_key().name(), "x-request-key");
    /// ```
    #[must_use]
    pub fn key_header(self, name: http::HeaderName) -> Self {
        self.key_with(IdempotencyHeader::new(name))
    }
}

impl<S, C: Clone, K: Clone> Layer<S> for RouteLayer<C, K> {
    type Service = RouteService<S, C, K>;

    fn layer(&self, inner: S) -> Self::Service {
        RouteService {
            inner,
            route: self.route.clone(),
            check: self.check.clone(),
            key: self.key.clone(),
        }
    }
}

/// A tower [`Service`] that sends each `http::Request` through a
/// [`Route`] of base URIs (see [`RouteLayer`], which makes one in a
/// `ServiceBuilder`).
///
/// ```
/// use std::convert::Infallible;
/// use http::Uri;
/// use tenacious::route::{Route, Target};
/// use tenacious::tower::{RouteService, ServedBy};
/// use tower::{ServiceExt, service_fn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let echo = service_fn(|request: http::Request<String>| async move {
///     Ok::<_, Infallible>(http::Response::new(request.uri().to_string()))
/// });
/// let base = Uri::from_static("http://127.0.0.1:8080/v1");
/// let route = Route::builder("docs-tower-echo").target(Target::new("docs-tower-echo-0", base));
/// let service = RouteService::new(echo, route.build().unwrap());
/// let response = service.oneshot(http::Request::new(String::new())).await.unwrap();
/// assert_eq!(response.body(), "http://127.0.0.1:8080/v1/");
/// assert_eq!(response.extensions().get::<ServedBy>().unwrap().name(), "docs-tower-echo-0");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RouteService<S, C = HttpCheck, K = IdempotencyHeader> {
    inner: S,
    route: Route<Uri>,
    check: C,
    key: K,
}

impl<S> RouteService<S> {
    /// Sends each call to `inner` through `route`, with the defaults of
    /// [`RouteLayer::new`].
    ///
    /// # Panics
    ///
    /// When a target's base URI has no scheme or no host.
    #[must_use]
    pub fn new(inner: S, route: Route<Uri>) -> Self {
        RouteLayer::new(route).layer(inner)
    }
}

impl<S, C, K> RouteService<S, C, K> {
    /// The inner service.
    #[must_use]
    pub const fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The inner service, mutably.
    #[must_use]
    pub const fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The inner service, unwrapped.
    #[must_use]
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// The route.
    #[must_use]
    pub const fn get_route(&self) -> &Route<Uri> {
        &self.route
    }
}

impl<S, B, RB, C, K> Service<Request<B>> for RouteService<S, C, K>
where
    S: Service<Request<B>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Classify + Send + 'static,
    Request<B>: Resend,
    B: Send + 'static,
    RB: Send + 'static,
    C: CheckResponse<Response<RB>> + Clone + Send + 'static,
    C::Error: Send + 'static,
    K: StampKey<Request<B>> + Clone + Send + 'static,
{
    type Response = Response<RB>;
    type Error = RouteFailed<S::Error, Response<RB>, C::Error>;
    type Future = RouteFuture<Result<Response<RB>, Self::Error>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let route = self.route.clone();
        let mut source = Source {
            relative: Relative::of(request.uri(), route.targets()[0].data()),
            request,
            service: self.inner.clone(),
            check: self.check.clone(),
            key: self.key.clone(),
        };
        RouteFuture {
            inner: Box::pin(async move {
                let result = route
                    .call(|target| {
                        let (mut request, mut service, check, key) = source.next(target.data());
                        let throttle = target.get_policy().get_throttle();
                        async move {
                            if let Some(attempt) = Attempt::current() {
                                key.stamp(&mut request, || attempt.idempotency_key());
                            }
                            std::future::poll_fn(|cx| service.poll_ready(cx))
                                .await
                                .map_err(AttemptError::Service)?;
                            let response =
                                service.call(request).await.map_err(AttemptError::Service)?;
                            match check.check(&response) {
                                Ok(()) => {
                                    if let Some(throttle) = throttle {
                                        throttle.report(check.signals(&response));
                                    }
                                    Ok(response)
                                }
                                Err(bad) => Err(AttemptError::Response { response, bad }),
                            }
                        }
                    })
                    .await;
                match result {
                    Ok(routed) => {
                        let served = ServedBy {
                            name: routed.served_by(),
                            index: routed.index(),
                            attempts: routed.attempts(),
                        };
                        let mut response = routed.value;
                        response.extensions_mut().insert(served);
                        Ok(response)
                    }
                    Err(failure) => Err(RouteFailed {
                        failure,
                        deadline: route.get_deadline().map(Elapsed::new),
                    }),
                }
            }),
        }
    }
}

/// What each attempt of one call is made from. Taken by `&mut` (so only
/// `Send` is asked of what it holds, not `Sync`).
struct Source<S, B, C, K> {
    relative: Relative,
    request: Request<B>,
    service: S,
    check: C,
    key: K,
}

impl<S: Clone, B, C: Clone, K: Clone> Source<S, B, C, K>
where
    Request<B>: Resend,
{
    /// An attempt at the target of base `base`: its copy of the request,
    /// its URI rewritten, and its own clones of the service, the check and
    /// the key's stamp.
    fn next(&mut self, base: &Uri) -> (Request<B>, S, C, K) {
        let mut request = self.request.resend();
        *request.uri_mut() = self.relative.at(base);
        (
            request,
            self.service.clone(),
            self.check.clone(),
            self.key.clone(),
        )
    }
}

/// What of a request's URI goes after each target's base: the path after
/// the first target's base path, and the query.
#[derive(Debug)]
struct Relative {
    path: String,
    query: Option<String>,
}

impl Relative {
    /// The part of `uri` after the first target's base `first`.
    fn of(uri: &Uri, first: &Uri) -> Self {
        let base = first.path().trim_end_matches('/');
        let path = uri.path();
        let rest = match path.strip_prefix(base) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
            _ => path,
        };
        Self {
            path: rest.to_owned(),
            query: uri.query().map(str::to_owned),
        }
    }

    /// The URI a target of base `base` is sent.
    fn at(&self, base: &Uri) -> Uri {
        let mut path_and_query = base.path().trim_end_matches('/').to_owned();
        path_and_query.push_str(&self.path);
        if path_and_query.is_empty() {
            path_and_query.push('/');
        }
        let query = [base.query(), self.query.as_deref()]
            .into_iter()
            .flatten()
            .filter(|query| !query.is_empty())
            .collect::<Vec<_>>()
            .join("&");
        if !query.is_empty() {
            path_and_query.push('?');
            path_and_query.push_str(&query);
        }
        let mut parts = base.clone().into_parts();
        // Pieces of two valid URIs' paths and queries, joined: valid; a
        // base with a scheme and an authority (`RouteLayer::new`) gives a
        // valid absolute URI.
        parts.path_and_query = Some(
            PathAndQuery::try_from(path_and_query)
                .expect("the path and query of valid URIs, joined"),
        );
        Uri::from_parts(parts).expect("a base URI with a scheme and an authority")
    }
}

/// The future of [`RouteService::call`]: the call's answer once the
/// route is done with it. Boxed, `Send`; dropping it cancels the call.
///
/// ```
/// use std::convert::Infallible;
/// use http::Uri;
/// use tenacious::route::{Route, Target};
/// use tenacious::tower::{RouteFuture, RouteService};
/// use tower::{Service, service_fn};
///
/// fn spawnable<T: Send + 'static>(_: &T) {}
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let ok = service_fn(|_: http::Request<String>| async {
///     Ok::<_, Infallible>(http::Response::new(String::new()))
/// });
/// let base = Uri::from_static("https://api.example/v1");
/// let route = Route::builder("docs-tower-future").target(Target::new("docs-tower-future-0", base));
/// let mut service = RouteService::new(ok, route.build().unwrap());
/// let future: RouteFuture<_> = service.call(http::Request::new(String::new()));
/// spawnable(&future);
/// assert!(future.await.is_ok());
/// # }
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct RouteFuture<T> {
    inner: Pin<Box<dyn Future<Output = T> + Send>>,
}

impl<T> Future for RouteFuture<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        self.get_mut().inner.as_mut().poll(cx)
    }
}

impl<T> fmt::Debug for RouteFuture<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RouteFuture").finish_non_exhaustive()
    }
}

/// Which target of the route answered: put in the extensions of the
/// response a [`RouteService`] returns.
///
/// ```
/// use tenacious::tower::ServedBy;
///
/// fn served_by<B>(response: &http::Response<B>) -> Option<&'static str> {
///     response.extensions().get::<ServedBy>().map(|served| served.name())
/// }
/// assert_eq!(served_by(&http::Response::new(())), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ServedBy {
    name: &'static str,
    index: usize,
    attempts: u32,
}

impl ServedBy {
    /// The target's name.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Its place in the route, 0 for the first target.
    #[must_use]
    pub const fn index(&self) -> usize {
        self.index
    }

    /// The attempts the call took at it (those at the targets before it
    /// not counted).
    #[must_use]
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Whether a target other than the first served.
    #[must_use]
    pub const fn fell_back(&self) -> bool {
        self.index > 0
    }
}

/// How an attempt at a target failed: the error a [`RouteService`]'s
/// route is told (in each [`Tried`] of a [`RouteFailed`]): the inner
/// service's error `E`, or a response `R` the check called bad, with the
/// check's verdict `X` ([`HttpError`](tenacious_runtime::HttpError) for [`HttpCheck`]).
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

/// A call no target of a [`RouteService`]'s route served: its error.
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
    failure: RouteFailure<AttemptError<E, R, X>>,
    /// The route's deadline, what a route that tried no target failed by.
    deadline: Option<Elapsed>,
}

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
        match self.last()? {
            TargetError::Answer(error) => error.response(),
            _ => None,
        }
    }

    /// The last target's bad response, owned.
    #[must_use]
    pub fn into_last_response(self) -> Option<R> {
        let index = self
            .failure
            .tried()
            .iter()
            .rposition(|tried| has_error(tried.error()))?;
        match self
            .failure
            .into_tried()
            .into_iter()
            .nth(index)?
            .into_error()
        {
            TargetError::Answer(error) => error.into_response(),
            _ => None,
        }
    }

    /// The last error: that of the last target tried that has one.
    fn last(&self) -> Option<&TargetError<AttemptError<E, R, X>>> {
        self.failure
            .tried()
            .iter()
            .rev()
            .map(Tried::error)
            .find(|error| has_error(error))
    }
}

/// Whether a target's outcome has an error of its own: it made an
/// attempt, or its guards refused it (a target the route skipped has
/// none).
const fn has_error<E>(error: &TargetError<E>) -> bool {
    matches!(
        error,
        TargetError::Answer(_) | TargetError::Silent(_) | TargetError::GuardRefused(_)
    )
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
        match self.last() {
            Some(TargetError::Answer(error)) => Some(error),
            Some(TargetError::Silent(elapsed)) => Some(elapsed),
            Some(TargetError::GuardRefused(refused)) => Some(refused),
            _ => self
                .deadline
                .as_ref()
                .map(|elapsed| elapsed as &(dyn std::error::Error + 'static)),
        }
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
        match self.last() {
            Some(error) => Some(error),
            None => self
                .deadline
                .as_ref()
                .map(|elapsed| elapsed as &dyn Classify),
        }
    }
}
