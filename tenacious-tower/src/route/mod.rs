//! [`RouteLayer`] and [`RouteService`]: each `http::Request` through a
//! [`Route`] of base URIs, the next target serving when one cannot;
//! [`ServedBy`], the target that answered; [`RouteFailed`] and
//! [`AttemptError`], what a call no target served returns.
mod error;
mod rewrite;
mod served;
mod service;

use http::Uri;
use tower_layer::Layer;

use tenacious_runtime::route::Route;

pub use error::{AttemptError, RouteFailed};
pub use served::ServedBy;
pub use service::{RouteFuture, RouteService};

use crate::{HttpCheck, IdempotencyHeader, NoKey};

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
/// Each attempt sends a copy of the request ([`Resend`](crate::Resend): an
/// `http::Request<B>` whose body `B` is `Clone`) to a clone of the inner
/// service, and the target's policy decides on what comes back as
/// [`RetryLayer`](crate::RetryLayer) does: the inner service's error (from
/// its readiness or its call), which must be
/// [`Classify`](tenacious_runtime::Classify), and a response the check
/// calls bad — by default ([`HttpCheck`]) a 4xx or 5xx status, classified
/// by [`HttpError`](tenacious_runtime::HttpError) from its status and
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
/// [`RouteService::poll_ready`](tower_service::Service::poll_ready) is
/// always ready: each attempt takes its own clone of the inner service and
/// drives it ready itself, so a concurrency limit inside the route bounds the
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
