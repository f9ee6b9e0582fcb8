//! A tower [`Layer`] and [`Service`] that retry an inner service with a
//! [`Policy`] (feature `tower`): for `tower::ServiceBuilder` stacks, axum,
//! hyper and tonic clients, with the engine, the classes, the guards and
//! the statistics of `#[retry]`.
//!
//! ```
//! use std::convert::Infallible;
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::time::Duration;
//!
//! use http::{Request, Response, StatusCode};
//! use tenacious::stats::CallStats;
//! use tenacious::tower::RetryLayer;
//! use tenacious::Policy;
//! use tower::{ServiceBuilder, ServiceExt, service_fn};
//!
//! static CHAT: CallStats = CallStats::new("openai.chat");
//! static POLICY: Policy = Policy::new().max(4).base(Duration::from_millis(100)).stats(&CHAT);
//! static SENT: AtomicU32 = AtomicU32::new(0);
//!
//! // A provider that is down for two requests.
//! async fn provider(request: Request<String>) -> Result<Response<String>, Infallible> {
//!     assert!(request.headers().contains_key("idempotency-key"));
//!     let status = match SENT.fetch_add(1, Ordering::Relaxed) {
//!         0 | 1 => StatusCode::SERVICE_UNAVAILABLE,
//!         _ => StatusCode::OK,
//!     };
//!     Ok(Response::builder().status(status).body("{}".to_owned()).unwrap())
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let client = ServiceBuilder::new()
//!     .layer(RetryLayer::new(&POLICY))
//!     .service(service_fn(provider));
//! let response = client.oneshot(Request::new("{\"model\": \"o4\"}".to_owned())).await.unwrap();
//! assert_eq!(response.status(), StatusCode::OK);
//! assert_eq!(SENT.load(Ordering::Relaxed), 3);
//! assert_eq!(CHAT.snapshot().retries(), 2);
//! # }
//! ```
//!
//! # What is retried
//!
//! Each attempt sends a copy of the request ([`Resend`]: a `Clone`
//! request; an `http::Request` is one when its body is) to the inner
//! service, and the policy decides on what comes back as `#[retry]`
//! decides on a fn's result, in the same engine:
//!
//! - the inner service's error (from its call, or its readiness), which
//!   must be [`Classify`]; map one that is not with tower's `map_err`;
//! - a response the [`CheckResponse`] calls bad: by default
//!   ([`HttpCheck`]) an `http::Response` with a 4xx or 5xx status,
//!   classified by [`HttpError`](tenacious_runtime::HttpError) from its status and
//!   headers, so a `Retry-After` is waited (at least), `x-should-retry`
//!   overrules the status, and the rate-limit headers reach the
//!   [`Throttle`](tenacious_runtime::Throttle);
//! - an attempt that runs out of the policy's
//!   [`timeout`](Policy::timeout), or of what its
//!   [`deadline`](Policy::deadline) leaves: [`Elapsed`](tenacious_runtime::Elapsed),
//!   transient, and its retry costs the budget a timeout's 10 tokens. The
//!   limit counts from the attempt's start, its wait for the inner
//!   service's readiness included; an attempt that ran out before the
//!   service was ready sent nothing, which a policy with
//!   [`idempotent(false)`](Policy::idempotent) may retry.
//!
//! The policy's guards ([`Breaker`](tenacious_runtime::Breaker),
//! [`Cooldown`](tenacious_runtime::Cooldown), [`Throttle`](tenacious_runtime::Throttle), a
//! [`Guard`](tenacious_runtime::Guard) of its own) are asked before every attempt,
//! the first included, and told every outcome; its
//! [`RetryBudget`](tenacious_runtime::RetryBudget) pays for each retry; its
//! [`stats`](Policy::stats) record counts each call under the record's
//! name (and, with the features, emits the `tracing` events and
//! `metrics`). Inside an attempt of another retried call (a `#[retry]` fn
//! calling the service), the call is nested and makes one attempt (see
//! [`Nested`](tenacious_runtime::Nested)), and [`Attempt::current`](tenacious_runtime::Attempt::current)
//! works in the inner service's `call` and future.
//!
//! # What the call returns
//!
//! - the first good response;
//! - when the policy gives up on a bad response (a `400` at once, a `503`
//!   after the last attempt, a `429` whose `Retry-After` is longer than
//!   `max_retry_after`): **that response, as `Ok`**, body untouched, as
//!   tower's own retry and `reqwest-retry` do, and as a proxy built on
//!   axum or hyper expects: the caller sees what the server said. With
//!   [`HttpCheck`] its extensions hold a [`GaveUp`] (the attempts, the
//!   [`StopReason`](tenacious_runtime::StopReason), the class);
//! - when it gives up on an error: [`Error::Service`] with the inner
//!   service's last error, [`Error::TimedOut`] when the last attempt ran
//!   out of time, [`Error::GuardRefused`] when a guard refused the call before
//!   it sent anything.
//!
//! # Idempotency keys
//!
//! Every attempt of one call carries the call's
//! [`IdempotencyKey`](tenacious_runtime::IdempotencyKey), the same on each: by default
//! ([`IdempotencyHeader`]) in the `Idempotency-Key` header of an
//! `http::Request`, unless the request has that header already. Name
//! another header with [`RetryLayer::key_header`], put the key elsewhere
//! with [`RetryLayer::key_with`], or send none with
//! [`RetryLayer::without_key`]. A call nested in another retried call
//! sends the key derived from the outer call's, so an outer retry resends
//! it too.
//!
//! # Readiness
//!
//! [`RetryService::poll_ready`](Service::poll_ready) is the inner
//! service's. `call` takes the inner service its caller drove ready into
//! the call's future, leaving a clone in its place (as tower's docs
//! advise, so a service that reserves capacity when ready, such as a
//! `ConcurrencyLimit` or a `Buffer`, lends that capacity to this call),
//! and the future drives it ready again before every attempt. So a
//! concurrency limit inside the retry layer bounds the attempts in
//! flight, each waiting its turn, and none is held through a backoff
//! (only a wait the guards ask for before the first attempt keeps what
//! its caller's readiness reserved).
//!
//! # Defaults
//!
//! | setting | default | builder |
//! |---|---|---|
//! | policy (attempts, backoff, timeout, deadline, guards, budget, statistics) | the one given | [`RetryLayer::new`] |
//! | which responses are failures | [`HttpCheck`]: 4xx and 5xx, by the [`HttpError`](tenacious_runtime::HttpError) table | [`RetryLayer::check`] |
//! | where the key goes | [`IdempotencyHeader::DEFAULT`]: `Idempotency-Key` | [`RetryLayer::key_header`], [`RetryLayer::key_with`], [`RetryLayer::without_key`] |
//!
//! The attribute's `when`, `notify` and `fallback` have no counterpart
//! here: the check decides what is bad, and tower's own combinators
//! (`map_result`, `or_else`) answer after a give-up.
//!
//! # This crate
//!
//! `tenacious-tower` is the `tenacious` facade's `tenacious::tower`, with
//! its feature `tower`: depend on the facade. It is built on the runtime's
//! public poll driver ([`tenacious_runtime::poll`]), as the next adapters
//! are, and reaches nothing private of it.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod check;
mod error;
mod future;
mod key;
mod route;

use std::task::{Context, Poll};

use http::HeaderName;
use tower_layer::Layer;
use tower_service::Service;

pub use check::{CheckResponse, GaveUp, HttpCheck, NoCheck};
pub use error::Error;
pub use future::ResponseFuture;
pub use key::{IdempotencyHeader, NoKey, StampKey};
pub use route::{AttemptError, RouteFailed, RouteFuture, RouteLayer, RouteService, ServedBy};

use tenacious_runtime::{Classify, Policy};

/// A request each attempt of a retried call sends a copy of: any `Clone`
/// type. An `http::Request<B>` is one when its body `B` is: `String`,
/// `Vec<u8>`, `Bytes`, `http_body_util::Full<Bytes>` are; a streaming
/// body (`axum::body::Body`, `hyper::body::Incoming`) is not, and can be
/// read into one of those first (`http_body_util::BodyExt::collect`).
///
/// A retried stack of requests that are not is no `Service` of them: one
/// error, with the advice below, where it is taken as one (boxed into a
/// `BoxCloneService`, handed to a server or a client). Called with a
/// method of `ServiceExt` (`oneshot`, `ready`), rustc says instead that
/// the method's trait bounds are not satisfied, `RetryService<..>:
/// Service<_>`: this bound is the one that fails.
///
/// ```
/// use tenacious::tower::Resend;
///
/// let request = http::Request::new("{\"query\": \"rust\"}".to_owned());
/// assert_eq!(request.resend().body(), request.body());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent again: a retried request is copied for each attempt, so it must be `Clone`",
    label = "the request of a retried call",
    note = "an `http::Request<B>` is `Clone` when its body `B` is: read a streaming body (`axum::body::Body`, `hyper::body::Incoming`) into `Bytes`, a `String` or `http_body_util::Full<Bytes>` before the retry layer, with `http_body_util::BodyExt::collect`",
    note = "a request type of your own needs `#[derive(Clone)]`"
)]
pub trait Resend: Sized {
    /// The copy an attempt sends.
    #[must_use]
    fn resend(&self) -> Self;
}

// Not recommended, so that a request that is not `Clone` is reported as
// not `Resend`, with the advice above, rather than as not `Clone`.
#[diagnostic::do_not_recommend]
impl<T: Clone> Resend for T {
    fn resend(&self) -> Self {
        self.clone()
    }
}

/// A tower [`Layer`] that wraps a service in a [`RetryService`]: each
/// call retried under the policy, its responses checked by `C`, its key
/// put in each attempt's request by `K` (see the [module docs](self)).
///
/// The policy is a `&'static`: a `static` or `const` one, or one read
/// from config (`tenacious::config::policy("openai")`), as `#[retry]`
/// names them; its guards, budget and statistics record are `static`s,
/// shared by every call that names them.
///
/// ```
/// use http::HeaderName;
/// use tenacious::Policy;
/// use tenacious::tower::{NoCheck, RetryLayer};
///
/// static POLICY: Policy = Policy::new().max(5);
///
/// let layer = RetryLayer::new(&POLICY);
/// assert_eq!(layer.get_policy().get_max(), 5);
/// assert_eq!(layer.get_key().name(), "idempotency-key");
///
/// let stripe = RetryLayer::new(&POLICY).key_header(HeaderName::from_static("x-idempotency-key"));
/// assert_eq!(stripe.get_key().name(), "x-idempotency-key");
///
/// // A service whose answers are no `http::Response`, and whose requests carry no key.
/// let plain = RetryLayer::new(&POLICY).check(NoCheck).without_key();
/// # let _ = plain;
/// ```
#[derive(Debug, Clone)]
pub struct RetryLayer<C = HttpCheck, K = IdempotencyHeader> {
    policy: &'static Policy,
    check: C,
    key: K,
}

impl RetryLayer {
    /// Retries under `policy`, checking `http::Response`s with
    /// [`HttpCheck`] and sending the key as `Idempotency-Key`.
    #[must_use]
    pub const fn new(policy: &'static Policy) -> Self {
        Self {
            policy,
            check: HttpCheck,
            key: IdempotencyHeader::DEFAULT,
        }
    }
}

impl<C, K> RetryLayer<C, K> {
    /// Checks responses with `check`: a [`CheckResponse`], such as a
    /// `Fn(&Response) -> Result<(), E>` with `E: Classify`, or
    /// [`NoCheck`].
    ///
    /// ```
    /// use tenacious::tower::RetryLayer;
    /// use tenacious::{HttpError, Policy};
    ///
    /// static POLICY: Policy = Policy::new();
    ///
    /// // Only 5xx and 429 are failures; a 4xx goes to the caller as it is.
    /// let layer = RetryLayer::new(&POLICY).check(|response: &http::Response<String>| {
    ///     let status = response.status();
    ///     if status.is_server_error() || status == http::StatusCode::TOO_MANY_REQUESTS {
    ///         Err(HttpError::from_response(response))
    ///     } else {
    ///         Ok(())
    ///     }
    /// });
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn check<C2>(self, check: C2) -> RetryLayer<C2, K> {
        RetryLayer {
            policy: self.policy,
            check,
            key: self.key,
        }
    }

    /// Puts the key into each attempt's request with `key`: a
    /// [`StampKey`], such as a `Fn(&mut Request, IdempotencyKey)`.
    ///
    /// ```
    /// use tenacious::tower::RetryLayer;
    /// use tenacious::{IdempotencyKey, Policy};
    ///
    /// static POLICY: Policy = Policy::new();
    ///
    /// #[derive(Clone)]
    /// struct Job { payload: String, key: Option<IdempotencyKey> }
    ///
    /// let layer = RetryLayer::new(&POLICY).key_with(|job: &mut Job, key| job.key = Some(key));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn key_with<K2>(self, key: K2) -> RetryLayer<C, K2> {
        RetryLayer {
            policy: self.policy,
            check: self.check,
            key,
        }
    }

    /// Sends no key ([`NoKey`]).
    #[must_use]
    pub fn without_key(self) -> RetryLayer<C, NoKey> {
        self.key_with(NoKey)
    }

    /// The policy.
    #[must_use]
    pub const fn get_policy(&self) -> &'static Policy {
        self.policy
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

impl<C> RetryLayer<C, IdempotencyHeader> {
    /// Sends the key in the header `name` instead of `Idempotency-Key`.
    #[must_use]
    pub fn key_header(self, name: HeaderName) -> Self {
        self.key_with(IdempotencyHeader::new(name))
    }
}

impl<S, C: Clone, K: Clone> Layer<S> for RetryLayer<C, K> {
    type Service = RetryService<S, C, K>;

    fn layer(&self, inner: S) -> Self::Service {
        RetryService {
            inner,
            policy: self.policy,
            check: self.check.clone(),
            key: self.key.clone(),
        }
    }
}

/// A tower [`Service`] that retries each call to its inner service under a
/// [`Policy`] (see the [module docs](self)); [`RetryLayer`] makes one in a
/// `ServiceBuilder`.
///
/// The inner service must be `Clone` (the call's future takes it, see
/// [Readiness](self#readiness)), its error [`Classify`], its request
/// [`Resend`]; the response check `C` and the key's `K` are cloned into
/// each call.
///
/// ```
/// use std::convert::Infallible;
/// use tenacious::Policy;
/// use tenacious::tower::RetryService;
/// use tower::{ServiceExt, service_fn};
///
/// static POLICY: Policy = Policy::new();
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let echo = service_fn(|request: http::Request<String>| async move {
///     Ok::<_, Infallible>(http::Response::new(request.into_body()))
/// });
/// let service = RetryService::new(echo, &POLICY);
/// let response = service.oneshot(http::Request::new("hello".to_owned())).await.unwrap();
/// assert_eq!(response.body(), "hello");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RetryService<S, C = HttpCheck, K = IdempotencyHeader> {
    inner: S,
    policy: &'static Policy,
    check: C,
    key: K,
}

impl<S> RetryService<S> {
    /// Retries `inner` under `policy`, with the defaults of
    /// [`RetryLayer::new`].
    #[must_use]
    pub const fn new(inner: S, policy: &'static Policy) -> Self {
        Self {
            inner,
            policy,
            check: HttpCheck,
            key: IdempotencyHeader::DEFAULT,
        }
    }
}

impl<S, C, K> RetryService<S, C, K> {
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

    /// The policy.
    #[must_use]
    pub const fn get_policy(&self) -> &'static Policy {
        self.policy
    }
}

impl<S, Req, C, K> Service<Req> for RetryService<S, C, K>
where
    S: Service<Req> + Clone,
    S::Error: Classify,
    Req: Resend,
    C: CheckResponse<S::Response> + Clone,
    K: StampKey<Req> + Clone,
{
    type Response = S::Response;
    type Error = Error<S::Error>;
    type Future = ResponseFuture<S, Req, C, K>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Error::Service)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        // The service driven ready goes with the call; its clone stays,
        // to be driven ready for the next one.
        let clone = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, clone);
        ResponseFuture::new(
            self.policy,
            ready,
            request,
            self.check.clone(),
            self.key.clone(),
        )
    }
}
