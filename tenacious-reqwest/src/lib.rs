//! A [`reqwest_middleware::Middleware`] that retries with a [`Policy`]
//! (feature `reqwest-middleware`): [`RetryMiddleware`], in place of
//! reqwest-retry's `RetryTransientMiddleware`, on the engine of `#[retry]`,
//! so a `ClientWithMiddleware` gets its classes, server hints, guards,
//! budget, timeout, deadline, statistics and idempotency keys.
//!
//! ```
//! use std::sync::atomic::{AtomicU32, Ordering};
//! use std::time::Duration;
//!
//! use http::Extensions;
//! use reqwest::{Request, Response};
//! use reqwest_middleware::{ClientBuilder, Middleware, Next};
//! use tenacious::Policy;
//! use tenacious::reqwest_middleware::RetryMiddleware;
//! use tenacious::stats::CallStats;
//!
//! static CHAT: CallStats = CallStats::new("openai.chat");
//! const POLICY: Policy = Policy::new().max(4).base(Duration::from_millis(100)).stats(&CHAT);
//!
//! /// Stands for the network: a provider that is down for two requests.
//! struct Provider(AtomicU32);
//!
//! #[async_trait::async_trait]
//! impl Middleware for Provider {
//!     async fn handle(&self, request: Request, _: &mut Extensions, _: Next<'_>)
//!         -> reqwest_middleware::Result<Response> {
//!         assert!(request.headers().contains_key("idempotency-key"));
//!         let status = if self.0.fetch_add(1, Ordering::Relaxed) < 2 { 503 } else { 200 };
//!         Ok(http::Response::builder().status(status).body("{}").unwrap().into())
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let client = ClientBuilder::new(reqwest::Client::new())
//!     .with(RetryMiddleware::new(POLICY))
//!     .with(Provider(AtomicU32::new(0)))
//!     .build();
//! let response = client.post("https://api.openai.com/v1/chat/completions").send().await.unwrap();
//! assert_eq!(response.status(), 200);
//! assert_eq!(CHAT.snapshot().retries(), 2);
//! # }
//! ```
//!
//! # What is retried
//!
//! Each attempt sends a copy of the request ([`Request::try_clone`]) down
//! the rest of the chain, and the policy decides on what comes back as
//! `#[retry]` decides on a fn's result, in the same engine:
//!
//! - an answer with a 4xx or 5xx status, classified by [`HttpError`](tenacious_runtime::HttpError) from
//!   its status, its headers and its error body (the first 64 KiB are
//!   read, and handed back with the rest): a `Retry-After` (or
//!   `retry-after-ms`) is waited at least, and closes the policy's
//!   [`Cooldown`](tenacious_runtime::Cooldown); `x-should-retry` overrules the status;
//!   OpenAI's 429 `insufficient_quota` is `Fatal`, never retried; the
//!   rate-limit headers (`x-ratelimit-*`) reach the policy's
//!   [`Throttle`], a good answer's too;
//! - an error of the client or of a later middleware, classified by
//!   [`impl Classify for reqwest_middleware::Error`](tenacious_runtime::Classify#impl-Classify-for-Error-2):
//!   timeouts, connect errors and a connection cut mid-way are
//!   `Transient`, a connect error proves the request was never sent
//!   ([`Policy::idempotent`]);
//! - an attempt that runs out of the policy's
//!   [`timeout`](Policy::timeout), or of what its
//!   [`deadline`](Policy::deadline) leaves: [`Elapsed`](tenacious_runtime::Elapsed),
//!   `Transient`, and its retry costs the budget a timeout's 10 tokens.
//!   Reading the error body counts in the attempt's time; it is read for
//!   at most [`body_timeout`](RetryMiddleware::body_timeout) (1 s) and
//!   [`HttpError::MAX_BODY`](tenacious_runtime::HttpError::MAX_BODY) bytes, after
//!   which the response is classified by its status and headers.
//!
//! The policy's guards ([`Breaker`](tenacious_runtime::Breaker),
//! [`Cooldown`](tenacious_runtime::Cooldown), [`Throttle`], a
//! [`Guard`](tenacious_runtime::Guard) of its own) are asked before every attempt,
//! the first included, and told every outcome; its
//! [`RetryBudget`](tenacious_runtime::RetryBudget) pays for each retry; its
//! [`stats`](Policy::stats) record counts each request under the record's
//! name (and, with the features `tracing` and `metrics`, emits their
//! events and metrics). Inside an attempt of another retried call (a
//! `#[retry]` fn sending through the client), the request is nested and
//! makes one attempt (see [`Nested`](tenacious_runtime::Nested)).
//!
//! A request whose body cannot be cloned (a stream, `Body::wrap_stream`)
//! is sent once, through the guards and into the statistics as any, and
//! not retried: there is nothing to send again.
//!
//! # What the request returns
//!
//! - the first good answer (a status below 400);
//! - when the policy gives up on an answer with a 4xx or 5xx status (a
//!   `400` at once, a `503` after the last attempt, a `429` whose
//!   `Retry-After` is longer than `max_retry_after`): **that response, as
//!   `Ok`**, body whole, as reqwest-retry returns it: the caller reads what
//!   the server said;
//! - when it gives up on an error: that error as the chain returned it
//!   (`Error::Reqwest` for the client's own, so `is_timeout()`,
//!   `is_connect()` and `url()` still answer; reqwest-retry wraps it in
//!   its `RetryError`); [`Elapsed`](tenacious_runtime::Elapsed) in `Error::Middleware`
//!   when the last attempt ran out of time; [`Refused`](tenacious_runtime::Refused) in
//!   `Error::Middleware` when a guard refused the request before anything
//!   was sent.
//!
//! Each attempt runs the rest of the chain with its own copy of the
//! request's extensions, so one attempt's leftovers never reach the next;
//! the request's own map ends as the returned attempt's.
//!
//! # Idempotency keys
//!
//! Every attempt of one request carries the request's
//! [`IdempotencyKey`](tenacious_runtime::IdempotencyKey), the same on each, in the
//! `Idempotency-Key` header, unless the request has that header already:
//! the caller's key wins. Name another header with
//! [`key_header`](RetryMiddleware::key_header), or send none with
//! [`without_key`](RetryMiddleware::without_key). A request nested in
//! another retried call sends the key derived from the outer call's, so
//! an outer retry resends it too.
//!
//! # Defaults
//!
//! | setting | default | builder |
//! |---|---|---|
//! | policy (attempts, backoff, classes, timeout, deadline, guards, budget, statistics) | the one given | [`RetryMiddleware::new`] |
//! | the header carrying the key | `Idempotency-Key` | [`key_header`](RetryMiddleware::key_header), [`without_key`](RetryMiddleware::without_key) |
//!
//! # From reqwest-retry
//!
//! | reqwest-retry | here |
//! |---|---|
//! | `RetryTransientMiddleware::new_with_policy(ExponentialBackoff::builder().build_with_max_retries(3))` | `RetryMiddleware::new(Policy::new().max(4))` (`max` counts the first attempt) |
//! | `.retry_bounds(min, max)`, `.base(2)` | `.base(min).cap(max)`, doubling |
//! | `Jitter::Full`, `Jitter::Bounded`, `Jitter::None` | [`Jitter::Full`](tenacious_runtime::Jitter::Full) (the default), [`Jitter::Equal`](tenacious_runtime::Jitter::Equal), [`Jitter::None`](tenacious_runtime::Jitter::None) |
//! | `build_with_total_retry_duration(d)` | `.deadline(d)`: no wait or attempt starts that would end past it |
//! | 5xx, 408, 429, timeouts, connect errors and reset connections retried, each after its backoff | the same, less 501, 505 and 511 (a captive portal: `Fatal`, a human must sign in) and what `x-should-retry: false` or an error body (`insufficient_quota`) rules out, plus 421, 423, 425 and a body cut mid-way; a `Retry-After` is waited at least |
//! | a request that cannot be cloned: an error, nothing sent | sent once, not retried |
//! | `RetryableStrategy` | the [`HttpError`](tenacious_runtime::HttpError) table (no predicate of your own: the attribute's `when`, `check` and `fallback` have no counterpart here) |
//!
//! # This crate
//!
//! `tenacious-reqwest` is the `tenacious` facade's
//! `tenacious::reqwest_middleware`, with its feature `reqwest-middleware`:
//! depend on the facade. It runs each request through the runtime's
//! [`Policy::retry_timed_with`] and reaches nothing private of it; `impl
//! Classify for reqwest_middleware::Error` stays in the runtime, behind
//! the runtime's feature of the same name, as the orphan rule requires.
//!
//! [`Request::try_clone`]: reqwest::Request::try_clone
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod body;
mod failed;
mod route;

use http::{Extensions, HeaderName, HeaderValue};
use reqwest::{Request, Response};
use reqwest_middleware::{Error, Middleware, Next};

use failed::{Cause, Failed};
pub use route::{AttemptError, RouteFailed, RouteMiddleware, ServedBy};
use tenacious_runtime::{Attempt, Policy, RetryEvent, Throttle, rate_limits};

/// The default header of the idempotency key (the IETF draft's name,
/// which Stripe and others read).
const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// A [`Middleware`] that retries each request with a [`Policy`]: see the
/// [module docs](self) for what it retries, what a request returns, and
/// how it differs from reqwest-retry's `RetryTransientMiddleware`.
///
/// ```
/// use std::time::Duration;
/// use reqwest_middleware::ClientBuilder;
/// use tenacious::reqwest_middleware::RetryMiddleware;
/// use tenacious::stats::CallStats;
/// use tenacious::{Breaker, Policy, RetryBudget};
///
/// static GITHUB: CallStats = CallStats::new("github");
/// static HEALTH: Breaker = Breaker::new();
/// static BUDGET: RetryBudget = RetryBudget::new();
///
/// const POLICY: Policy = Policy::new()
///     .max(4)
///     .base(Duration::from_millis(250))
///     .timeout(Duration::from_secs(10))
///     .deadline(Duration::from_secs(30))
///     .breaker(&HEALTH)
///     .budget(&BUDGET)
///     .stats(&GITHUB);
///
/// let retry = RetryMiddleware::new(POLICY);
/// assert_eq!(retry.get_key_header().map(|name| name.as_str()), Some("idempotency-key"));
/// assert_eq!(retry.get_policy().get_max(), 4);
/// let client = ClientBuilder::new(reqwest::Client::new()).with(retry).build();
/// # drop(client);
/// ```
#[derive(Debug, Clone)]
pub struct RetryMiddleware {
    policy: Policy,
    key_header: Option<HeaderName>,
    body_timeout: std::time::Duration,
}

impl RetryMiddleware {
    /// Retries each request with `policy`, sending its key in
    /// `Idempotency-Key`.
    #[must_use]
    pub const fn new(policy: Policy) -> Self {
        Self {
            policy,
            key_header: Some(IDEMPOTENCY_KEY),
            body_timeout: Self::BODY_TIMEOUT,
        }
    }

    /// The default of [`body_timeout`](RetryMiddleware::body_timeout): 1 s.
    pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

    /// The longest an error response's body is read for its classification
    /// (its first [`HttpError::MAX_BODY`](tenacious_runtime::HttpError::MAX_BODY)
    /// bytes at most): a body that stalls past it is classified by the
    /// response's status and headers alone, and the response is handed on
    /// (to the next attempt's decision, or to the caller, who may read the
    /// rest) — a server that sends a `503`'s head and then nothing never
    /// holds the call. Default [`BODY_TIMEOUT`](RetryMiddleware::BODY_TIMEOUT),
    /// 1 s; the policy's `timeout`, when shorter, ends the attempt first.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Policy;
    /// use tenacious::reqwest_middleware::RetryMiddleware;
    ///
    /// let retry = RetryMiddleware::new(Policy::new()).body_timeout(Duration::from_millis(200));
    /// assert_eq!(retry.get_body_timeout(), Duration::from_millis(200));
    /// assert_eq!(RetryMiddleware::new(Policy::new()).get_body_timeout(), Duration::from_secs(1));
    /// ```
    #[must_use]
    pub fn body_timeout(self, body_timeout: std::time::Duration) -> Self {
        Self {
            body_timeout,
            ..self
        }
    }

    /// The bound set by [`body_timeout`](RetryMiddleware::body_timeout).
    #[must_use]
    pub const fn get_body_timeout(&self) -> std::time::Duration {
        self.body_timeout
    }

    /// Sends the key in the header `name` instead (leaving a request that
    /// has it already alone).
    ///
    /// ```
    /// use http::HeaderName;
    /// use tenacious::Policy;
    /// use tenacious::reqwest_middleware::RetryMiddleware;
    ///
    /// let retry = RetryMiddleware::new(Policy::new()).key_header(HeaderName::from_static("x-request-id"));
    /// assert_eq!(retry.get_key_header().unwrap(), "x-request-id");
    /// ```
    #[must_use]
    pub fn key_header(self, name: HeaderName) -> Self {
        Self {
            key_header: Some(name),
            ..self
        }
    }

    /// Sends no key.
    ///
    /// ```
    /// use tenacious::Policy;
    /// use tenacious::reqwest_middleware::RetryMiddleware;
    ///
    /// assert_eq!(RetryMiddleware::new(Policy::new()).without_key().get_key_header(), None);
    /// ```
    #[must_use]
    pub fn without_key(self) -> Self {
        Self {
            key_header: None,
            ..self
        }
    }

    /// The policy each request is retried with.
    #[must_use]
    pub const fn get_policy(&self) -> &Policy {
        &self.policy
    }

    /// The header the key is sent in, if one is.
    #[must_use]
    pub const fn get_key_header(&self) -> Option<&HeaderName> {
        self.key_header.as_ref()
    }
}

#[async_trait::async_trait]
impl Middleware for RetryMiddleware {
    async fn handle(
        &self,
        request: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let mut source = Source::new(request);
        let resendable = source.is_resendable();
        let throttle = self.policy.get_throttle();
        let key_header = self.key_header.as_ref();
        let body_timeout = self.body_timeout;
        let template = &*extensions;
        let result = self
            .policy
            .retry_timed_with(
                || {
                    attempt(
                        source.next(),
                        template.clone(),
                        next.clone(),
                        key_header,
                        throttle,
                        body_timeout,
                    )
                },
                // A body that cannot be sent again ends the call after its
                // one attempt, as any error the policy does not retry.
                |_: &Failed| resendable,
                |_: &Failed, _: &RetryEvent| {},
            )
            .await;
        match result {
            Ok(answer) => {
                *extensions = answer.extensions;
                Ok(answer.response)
            }
            Err(failed) => {
                if let Some(last) = failed.extensions {
                    *extensions = last;
                }
                match failed.cause {
                    Cause::Response { response, .. } => Ok(response),
                    Cause::Sent(error) => Err(error),
                    Cause::Elapsed(elapsed) => Err(Error::middleware(elapsed)),
                    Cause::Refused(refused) => Err(Error::middleware(refused)),
                }
            }
        }
    }
}

/// Where each attempt's request comes from.
enum Source {
    /// A request whose body can be cloned: each attempt sends a copy.
    Resend(Request),
    /// A streaming body: sent once.
    Once(Option<Request>),
}

impl Source {
    fn new(request: Request) -> Self {
        // `try_clone` fails only for a streaming body; a body that can be
        // cloned is `Bytes`, whose clone shares the buffer.
        if request.try_clone().is_some() {
            Self::Resend(request)
        } else {
            Self::Once(Some(request))
        }
    }

    const fn is_resendable(&self) -> bool {
        matches!(self, Self::Resend(_))
    }

    /// The request the next attempt sends; `None` once a streaming body
    /// was sent (the policy makes no attempt after it).
    fn next(&mut self) -> Option<Request> {
        match self {
            Self::Resend(request) => request.try_clone(),
            Self::Once(request) => request.take(),
        }
    }
}

/// A good answer, with the extensions its attempt ended with.
struct Answer {
    response: Response,
    extensions: Extensions,
}

/// One attempt: `request` down the rest of the chain, with its own copy of
/// the extensions, and what came back sorted into a good answer or a
/// [`Failed`] for the engine.
async fn attempt(
    request: Option<Request>,
    mut extensions: Extensions,
    next: Next<'_>,
    key_header: Option<&HeaderName>,
    throttle: Option<&'static Throttle>,
    body_timeout: std::time::Duration,
) -> Result<Answer, Failed> {
    let Some(mut request) = request else {
        return Err(Failed {
            cause: Cause::Sent(Error::middleware(std::io::Error::other(
                "a request with a streaming body cannot be sent twice",
            ))),
            extensions: Some(extensions),
        });
    };
    if let Some(name) = key_header
        && !request.headers().contains_key(name)
        && let Some(attempt) = Attempt::current()
        && let Ok(key) = HeaderValue::try_from(attempt.idempotency_key().to_string())
    {
        request.headers_mut().insert(name.clone(), key);
    }
    match next.run(request, &mut extensions).await {
        Ok(response) if is_failure(response.status()) => {
            let (error, response) = body::read_failed(response, body_timeout).await;
            Err(Failed {
                cause: Cause::Response { error, response },
                extensions: Some(extensions),
            })
        }
        Ok(response) => {
            // A failure's rate-limit headers reach the guards through its
            // error (`HttpError::signals`); a good answer's, here.
            if let Some(throttle) = throttle {
                throttle.report(rate_limits::from_headers(response.headers()));
            }
            Ok(Answer {
                response,
                extensions,
            })
        }
        Err(error) => Err(Failed {
            cause: Cause::Sent(error),
            extensions: Some(extensions),
        }),
    }
}

/// A status [`HttpError`](tenacious_runtime::HttpError) classifies as a failure: 4xx and 5xx. (1xx, 2xx
/// and 3xx are answers, as reqwest-retry takes them.)
fn is_failure(status: http::StatusCode) -> bool {
    status.is_client_error() || status.is_server_error()
}
