//! [`RouteService`], each call through the route, and its
//! [`RouteFuture`].
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response, Uri};
use tower_layer::Layer;
use tower_service::Service;

use tenacious_runtime::__route_http::Relative;
use tenacious_runtime::route::Route;
use tenacious_runtime::{Attempt, Classify, Elapsed};

use super::{AttemptError, RouteFailed, RouteLayer, ServedBy, rewrite};
use crate::{CheckResponse, HttpCheck, IdempotencyHeader, Resend, StampKey};

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
    pub(super) inner: S,
    pub(super) route: Route<Uri>,
    pub(super) check: C,
    pub(super) key: K,
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
            relative: rewrite::relative(request.uri(), route.targets()[0].data()),
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
        *request.uri_mut() = rewrite::at(&self.relative, base);
        (
            request,
            self.service.clone(),
            self.check.clone(),
            self.key.clone(),
        )
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
