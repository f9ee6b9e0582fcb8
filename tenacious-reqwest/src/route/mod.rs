//! [`RouteMiddleware`]: each request through a [`Route`] of base URLs, the
//! next target serving when one cannot; [`ServedBy`], the target that
//! answered; [`RouteFailed`] and [`AttemptError`], what a route that no
//! target served returns.
mod error;
mod rewrite;
mod served;

use std::borrow::Cow;
use std::time::Duration;

use http::{Extensions, HeaderName};
use reqwest::{Request, Response, Url};
use reqwest_middleware::{Error, Middleware, Next};
use tenacious_runtime::__route_http::Relative;
use tenacious_runtime::route::Route;
use tenacious_runtime::{Elapsed, RetryEvent};

pub use error::{AttemptError, RouteFailed};
pub use served::ServedBy;

use crate::failed::{Cause, Failed};
use crate::{Answer, IDEMPOTENCY_KEY, RetryMiddleware, Source, attempt};

/// A [`Middleware`] that sends each request through a [`Route`] of base
/// URLs: to the first target, retried there under the target's policy,
/// then, when the route's [`Rules`](tenacious_runtime::route::Rules) allow,
/// to the next target, and so on until one serves.
///
/// ```
/// use http::Extensions;
/// use reqwest::{Request, Response, Url};
/// use reqwest_middleware::{ClientBuilder, Middleware, Next};
/// use tenacious::Policy;
/// use tenacious::reqwest_middleware::{RouteMiddleware, ServedBy};
/// use tenacious::route::{Route, Target};
///
/// /// Stands for the network: the primary is down, the fallback answers.
/// struct Network;
///
/// #[async_trait::async_trait]
/// impl Middleware for Network {
///     async fn handle(&self, request: Request, _: &mut Extensions, _: Next<'_>)
///         -> reqwest_middleware::Result<Response> {
///         let status = match request.url().as_str() {
///             "https://fallback.example/openai/v1/chat/completions" => 200,
///             _ => 503,
///         };
///         Ok(http::Response::builder().status(status).body("{}").unwrap().into())
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let route = Route::builder("docs-reqwest-chat")
///     .target(
///         Target::new("docs-reqwest-primary", Url::parse("https://primary.example/v1").unwrap())
///             .policy(Policy::new().max(2)),
///     )
///     .target(Target::new(
///         "docs-reqwest-fallback",
///         Url::parse("https://fallback.example/openai/v1").unwrap(),
///     ))
///     .build()
///     .unwrap();
/// let client = ClientBuilder::new(reqwest::Client::new())
///     .with(RouteMiddleware::new(route))
///     .with(Network)
///     .build();
/// // Written against the first target's base: `/chat/completions` goes
/// // after each target's own.
/// let response = client.post("https://primary.example/v1/chat/completions").send().await.unwrap();
/// assert_eq!(response.status(), 200);
/// let served = response.extensions().get::<ServedBy>().unwrap();
/// assert_eq!(served.name(), "docs-reqwest-fallback");
/// assert!(served.fell_back());
/// # }
/// ```
///
/// # Where each target's request goes
///
/// Each target's data is its base URL (`Route<Url>`, [`reqwest::Url`]):
/// `https://api.openai.com/v1`, `https://my-proxy.internal/openai/v1`.
/// A request is written against the first target's base, and what
/// follows that base goes after each target's own:
///
/// - the request's path less the first target's base path, when it
///   starts with it on a `/` boundary (a base `http://a:1/v1` and a
///   request to `http://a:1/v1/chat` give `/chat`), else the whole path
///   (a request to `http://a:1/chat` gives `/chat` too): so a request may
///   name the path after the base on any host;
/// - each target is sent that path after its base's path (a base
///   `http://b:2/openai/v1` is sent `http://b:2/openai/v1/chat`), with its
///   base's scheme, host, port and credentials, and the request's query
///   after the base's own, if it has one (`?api-version=…`).
///
/// Headers and body go to every target as they are, a `Host` header of
/// the caller's own included.
///
/// # What is retried, and where
///
/// Each attempt sends a copy of the request ([`Request::try_clone`]) down
/// the rest of the chain, with its own copy of the extensions, and the
/// target's policy decides on what comes back as [`RetryMiddleware`]
/// does: an answer with a 4xx or 5xx status is classified by
/// [`HttpError`](tenacious_runtime::HttpError) (status, `Retry-After`,
/// `x-should-retry`, the error body's first 64 KiB, read for at most
/// [`body_timeout`](RouteMiddleware::body_timeout)), an error of the
/// chain by `impl Classify for reqwest_middleware::Error`, so a `503` is
/// retried at the target, a `429`'s `Retry-After` is waited there up to
/// the policy's `max_retry_after`, and a connect error proves nothing was
/// sent. When the target's policy gives up, the route's rules decide: a
/// target that is down, overloaded or out of attempts, a `Retry-After`
/// longer than the policy waits, an open breaker: the next target; a
/// request the caller must fix (a `400`, a content filter's refusal), a
/// request that may have been applied (a policy with
/// [`idempotent(false)`](tenacious_runtime::Policy::idempotent)): the
/// route stops, and no other target is sent it. A target's policy
/// `timeout` is its [silence limit](tenacious_runtime::route::Target::silence):
/// an attempt without an answer within it leaves the target.
///
/// Every attempt carries its call's
/// [`IdempotencyKey`](tenacious_runtime::IdempotencyKey) in the
/// `Idempotency-Key` header, unless the request has it already: the
/// attempts at one target share one key, another target is sent its own.
/// Name another header with [`key_header`](RouteMiddleware::key_header),
/// or send none with [`without_key`](RouteMiddleware::without_key).
///
/// # What the request returns
///
/// - the first good answer (a status below 400), with a [`ServedBy`] in
///   its extensions: the target that answered, its place in the route,
///   the attempts it took there. The request's extensions end as that
///   attempt's;
/// - when no target served: `Error::Middleware` holding a
///   [`RouteFailed`], every target's outcome and why the route stopped.
///   It is classified as the last target's error (through
///   `impl Classify for reqwest_middleware::Error`, which finds that error
///   in its source chain: the [`HttpError`](tenacious_runtime::HttpError)
///   of a `400`, the client's error of a refused connection), so a
///   `#[retry]` fn around the client decides on it as on the target's
///   own; the last bad answer, body whole, is
///   [`RouteFailed::last_response`]. The request's extensions are left as
///   they were.
///
/// # A body that cannot be cloned
///
/// A request whose body cannot be cloned (a stream, `Body::wrap_stream`)
/// is sent once, to the first target alone: through its guards and into
/// its statistics, as [`RetryMiddleware`] sends one, and neither retried
/// nor sent to another target. A good answer comes back with its
/// [`ServedBy`]; a 4xx or 5xx as `Error::Middleware` holding an
/// [`AttemptError::Status`] (the response in it); the chain's error as it
/// returned it; a refusal of the target's guards as `Error::Middleware`
/// holding the [`Refused`](tenacious_runtime::Refused).
#[derive(Debug, Clone)]
pub struct RouteMiddleware {
    route: Route<Url>,
    key_header: Option<HeaderName>,
    body_timeout: Duration,
}

impl RouteMiddleware {
    /// Sends each request through `route`, its key in `Idempotency-Key`.
    ///
    /// # Panics
    ///
    /// When a target's base URL cannot be a base (`mailto:`, `data:`).
    ///
    /// ```should_panic
    /// use reqwest::Url;
    /// use tenacious::reqwest_middleware::RouteMiddleware;
    /// use tenacious::route::{Route, Target};
    ///
    /// let mail = Url::parse("mailto:ops@example.com").unwrap();
    /// let route = Route::builder("docs-reqwest-mail").target(Target::new("docs-reqwest-mail-0", mail));
    /// RouteMiddleware::new(route.build().unwrap());
    /// ```
    #[must_use]
    pub fn new(route: Route<Url>) -> Self {
        for target in route.targets() {
            assert!(
                !target.data().cannot_be_a_base(),
                "the base URL of target `{}` cannot be a base: {}",
                target.name(),
                target.data()
            );
        }
        Self {
            route,
            key_header: Some(IDEMPOTENCY_KEY),
            body_timeout: RetryMiddleware::BODY_TIMEOUT,
        }
    }

    /// Sends the key in the header `name` instead (leaving a request that
    /// has it already alone).
    ///
    /// ```
    /// use http::HeaderName;
    /// use reqwest::Url;
    /// use tenacious::reqwest_middleware::RouteMiddleware;
    /// use tenacious::route::{Route, Target};
    ///
    /// let base = Url::parse("https://api.example/v1").unwrap();
    /// let route = Route::builder("docs-reqwest-key").target(Target::new("docs-reqwest-key-0", base));
    /// let routed = RouteMiddleware::new(route.build().unwrap())
    ///     .key_header(HeaderName::from_static("x-request-id"));
    /// assert_eq!(routed.get_key_header().unwrap(), "x-request-id");
    /// assert_eq!(routed.without_key().get_key_header(), None);
    /// ```
    #[must_use]
    pub fn key_header(self, name: HeaderName) -> Self {
        Self {
            key_header: Some(name),
            ..self
        }
    }

    /// Sends no key.
    #[must_use]
    pub fn without_key(self) -> Self {
        Self {
            key_header: None,
            ..self
        }
    }

    /// The longest an error response's body is read for its
    /// classification, as [`RetryMiddleware::body_timeout`]. Default
    /// [`RetryMiddleware::BODY_TIMEOUT`], 1 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// use reqwest::Url;
    /// use tenacious::reqwest_middleware::RouteMiddleware;
    /// use tenacious::route::{Route, Target};
    ///
    /// let base = Url::parse("https://api.example/v1").unwrap();
    /// let route = Route::builder("docs-reqwest-body").target(Target::new("docs-reqwest-body-0", base));
    /// let routed = RouteMiddleware::new(route.build().unwrap());
    /// assert_eq!(routed.get_body_timeout(), Duration::from_secs(1));
    /// let routed = routed.body_timeout(Duration::from_millis(200));
    /// assert_eq!(routed.get_body_timeout(), Duration::from_millis(200));
    /// assert_eq!(routed.get_route().name(), "docs-reqwest-body");
    /// ```
    #[must_use]
    pub fn body_timeout(self, body_timeout: Duration) -> Self {
        Self {
            body_timeout,
            ..self
        }
    }

    /// The route each request goes through.
    #[must_use]
    pub const fn get_route(&self) -> &Route<Url> {
        &self.route
    }

    /// The header the key is sent in, if one is.
    #[must_use]
    pub const fn get_key_header(&self) -> Option<&HeaderName> {
        self.key_header.as_ref()
    }

    /// The bound set by [`body_timeout`](RouteMiddleware::body_timeout).
    #[must_use]
    pub const fn get_body_timeout(&self) -> Duration {
        self.body_timeout
    }

    /// A request whose body cannot be cloned: one attempt at the first
    /// target, through its policy's guards and statistics.
    async fn once(
        &self,
        mut request: Request,
        relative: &Relative,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let first = &self.route.targets()[0];
        *request.url_mut() = rewrite::at(relative, first.data());
        let mut source = Source::new(request);
        let policy = first.get_policy();
        let throttle = policy.get_throttle();
        let key_header = self.key_header.as_ref();
        let template = &*extensions;
        let result = policy
            .retry_timed_with(
                || {
                    attempt(
                        source.next(),
                        template.clone(),
                        next.clone(),
                        key_header,
                        throttle,
                        self.body_timeout,
                    )
                },
                |_: &Failed| false,
                |_: &Failed, _: &RetryEvent| {},
            )
            .await;
        match result {
            Ok(answer) => {
                *extensions = answer.extensions;
                let mut response = answer.response;
                response.extensions_mut().insert(ServedBy {
                    name: Cow::Owned(first.name().to_owned()),
                    index: 0,
                    attempts: 1,
                });
                Ok(response)
            }
            Err(failed) => {
                if let Some(last) = failed.extensions {
                    *extensions = last;
                }
                match failed.cause {
                    Cause::Response { error, response } => {
                        Err(Error::middleware(AttemptError::Status { error, response }))
                    }
                    Cause::Sent(error) => Err(error),
                    Cause::Elapsed(elapsed) => Err(Error::middleware(elapsed)),
                    Cause::Refused(refused) => Err(Error::middleware(refused)),
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl Middleware for RouteMiddleware {
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let relative = rewrite::relative(request.url(), self.route.targets()[0].data());
        if request.try_clone().is_none() {
            return self.once(request, &relative, extensions, next).await;
        }
        let key_header = self.key_header.as_ref();
        let body_timeout = self.body_timeout;
        let template = &*extensions;
        let (request, relative) = (&request, &relative);
        let result = self
            .route
            .call(|target| {
                let copy = request.try_clone().map(|mut copy| {
                    *copy.url_mut() = rewrite::at(relative, target.data());
                    copy
                });
                let throttle = target.get_policy().get_throttle();
                let next = next.clone();
                async move {
                    attempt(
                        copy,
                        template.clone(),
                        next,
                        key_header,
                        throttle,
                        body_timeout,
                    )
                    .await
                    .map_err(AttemptError::from_failed)
                }
            })
            .await;
        match result {
            Ok(routed) => {
                let served = ServedBy {
                    name: Cow::Borrowed(routed.served_by()),
                    index: routed.index(),
                    attempts: routed.attempts(),
                };
                let Answer {
                    mut response,
                    extensions: last,
                } = routed.value;
                *extensions = last;
                response.extensions_mut().insert(served);
                Ok(response)
            }
            Err(failure) => Err(Error::middleware(RouteFailed {
                failure,
                deadline: self.route.get_deadline().map(Elapsed::new),
            })),
        }
    }
}
