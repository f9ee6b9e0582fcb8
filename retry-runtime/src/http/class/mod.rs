//! HTTP status codes and responses as classified errors (feature `http`).
mod body;
mod status;

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use ::http::{HeaderMap, Response, StatusCode};

use crate::{Classify, ErrorClass, Signals, StopReason, rate_limits, retry_after};
use body::{Body, Preset};
use status::{is_retryable, should_retry};

/// A failed HTTP response, classified from its status, headers **and**
/// error body: use it as your error type, or as a `#[classify(transparent)]`
/// variant of it.
///
/// On top of the [status table](crate::Classify#impl-Classify-for-StatusCode):
///
/// - **Server hint.** `retry-after-ms`, else `Retry-After`, is read with
///   [`retry_after::from_headers`] and returned by
///   [`retry_after`](Classify::retry_after). A retryable response that
///   carries a hint is `RateLimited` (a 503 with `Retry-After` included), so
///   the retry layer waits at least the hint.
/// - **`x-should-retry`** (`true` or `false`, any case; other values are
///   ignored) overrules the status, as the OpenAI and Anthropic SDKs do:
///
/// | `x-should-retry` | status class | class |
/// |---|---|---|
/// | absent or unreadable | any | the status class |
/// | `true` | `Transient`, `RateLimited` | the status class |
/// | `true` | `Invalid`, `Fatal` | `Transient` (or `RateLimited` with a hint) |
/// | `false` | `Transient`, `RateLimited` | `Invalid` |
/// | `false` | `Invalid`, `Fatal` | the status class |
///
/// A server that says "do not retry" a 5xx is saying this request will keep
/// failing, not that a human must step in: that is `Invalid` (never retried
/// unchanged; an agent may try another route), not `Fatal`.
///
/// - **Signals** for the provider guards ([`Classify::signals`]): the
///   rate-limit window's requests left and reset, read with
///   [`rate_limits::from_headers`] (OpenAI's `x-ratelimit-*-requests`,
///   Anthropic's `anthropic-ratelimit-requests-*`), and overloaded for a
///   529 or an `overloaded_error` body. A 503 that says "overloaded" in
///   words of its own can be told so with
///   [`with_overloaded`](HttpError::with_overloaded).
/// - **The provider's error body**, when it was given
///   ([`from_parts_with_body`](HttpError::from_parts_with_body),
///   [`with_body`](HttpError::with_body), or with feature `reqwest`
///   `HttpError::read(response).await`): at most [`MAX_BODY`](HttpError::MAX_BODY)
///   bytes (64 KiB) are kept, and a whole body is parsed once, when the
///   error is made, as the JSON error object of OpenAI
///   (`{"error": {"message", "type", "param", "code"}}`), of Anthropic
///   (`{"type": "error", "error": {"type", "message", "details":
///   {"error_code"}}}`), or a flat `{"message", "type", "code"}` (Mistral,
///   vLLM). [`error_type`](HttpError::error_type),
///   [`error_code`](HttpError::error_code) and
///   [`error_message`](HttpError::error_message) give what it says, and
///   these presets classify by it:
///
/// | the body says (`error.code`, `error.type` or Anthropic's `error.details.error_code`) | typical status | class | hint |
/// |---|---|---|---|
/// | `insufficient_quota` (OpenAI: the account's credit is spent) | 429 | `Fatal` | "the account's quota is spent: a human must add credit or raise its plan; retrying will not help" |
/// | a spend limit: `enforced_spend_limit_reached` (Anthropic, the usage tier's monthly cap), `organization_spend_limit_exceeded`, `project_spend_limit_exceeded`, `billing_hard_limit_reached`, `billing_not_active` (OpenAI), `billing_error` (Anthropic); or an Anthropic `invalid_request_error` whose message starts "You have reached your specified API usage limits", "You have reached your specified workspace API usage limits" or "Your credit balance is too low" | 429, 400, 402 | `Fatal` | "the account reached its spending limit: a human must raise the limit or add credit; retrying will not help" |
/// | `context_length_exceeded` (OpenAI and OpenAI-compatible servers); or an Anthropic `invalid_request_error` whose message starts "prompt is too long" | 400 | `Invalid`, [`rejected`](crate::Classify::rejected) `ContextLength` | "the prompt is longer than the model's context window: shorten it or summarise earlier turns" |
/// | `content_filter` (OpenAI, Azure OpenAI), `content_policy_violation`: the provider's content policy refused the request | 400 | `Invalid`, [`rejected`](crate::Classify::rejected) `ContentFilter` | "the provider's content policy refused the request: change it; another model of the same provider will most likely refuse it too" |
/// | `overloaded_error` (Anthropic: the provider is short of capacity for everyone) | 529, 503, 500 | `Transient` (`RateLimited` with a server hint), signals overloaded | "the provider is overloaded; trying again later may succeed" |
/// | `rate_limit_exceeded` (OpenAI), `rate_limit_error` (Anthropic) | 429 | `RateLimited`, waiting its `Retry-After` | "the server is rate limiting; wait before trying again" |
/// | anything else, a body that is not JSON, a body over the bound | any | as without a body | as without a body |
///
/// The rows are tried in this order, so Anthropic's spend cap (a
/// `rate_limit_error` whose `details.error_code` is
/// `enforced_spend_limit_reached`) is `Fatal`, not a rate limit. A `Fatal`
/// or `Invalid` preset is final: the account or the prompt must change
/// before the request can succeed, whatever the status or
/// `x-should-retry: true` say. The `Transient` and `RateLimited` presets
/// replace the status's class and then go through the `x-should-retry`
/// and hint rules above, as the status's class would.
///
/// [`variant`](Classify::variant) is the status's (`"Status503"`), with a
/// body or without.
///
/// `Clone`, not `Copy`: the body is shared behind an `Arc`, so a clone
/// costs a reference count, never a copy of the body. For the same reason
/// the `with_*` builders are not `const` (a `const fn` cannot drop the
/// value it replaces); [`new`](HttpError::new) and
/// [`from_refused`](HttpError::from_refused) still are.
///
/// ```
/// use std::time::Duration;
/// use http::{HeaderMap, StatusCode};
/// use tenacious::{Classify, ErrorClass, HttpError};
///
/// let mut headers = HeaderMap::new();
/// headers.insert("retry-after", "3".parse().unwrap());
/// let error = HttpError::from_parts(StatusCode::SERVICE_UNAVAILABLE, &headers);
/// assert_eq!(error.classify(), ErrorClass::RateLimited);
/// assert_eq!(error.retry_after(), Some(Duration::from_secs(3)));
///
/// headers.insert("x-should-retry", "false".parse().unwrap());
/// let error = HttpError::from_parts(StatusCode::SERVICE_UNAVAILABLE, &headers);
/// assert_eq!(error.classify(), ErrorClass::Invalid);
///
/// let mut headers = HeaderMap::new();
/// headers.insert("x-ratelimit-remaining-requests", "0".parse().unwrap());
/// headers.insert("x-ratelimit-reset-requests", "6m0s".parse().unwrap());
/// let error = HttpError::from_parts(StatusCode::TOO_MANY_REQUESTS, &headers);
/// assert_eq!(error.signals().get_remaining(), Some(0));
/// assert_eq!(error.signals().get_reset(), Some(Duration::from_secs(360)));
/// let overloaded = HttpError::from_parts(StatusCode::from_u16(529).unwrap(), &HeaderMap::new());
/// assert!(overloaded.signals().is_overloaded());
///
/// // OpenAI's 429 for a spent account: not a rate limit.
/// let body = br#"{"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
///                 "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}"#;
/// let spent = HttpError::from_parts_with_body(StatusCode::TOO_MANY_REQUESTS, &HeaderMap::new(), body);
/// assert_eq!(spent.classify(), ErrorClass::Fatal);
/// assert_eq!(spent.error_code(), Some("insufficient_quota"));
/// assert!(spent.hint().unwrap().contains("quota is spent"));
/// ```
///
/// # Display
///
/// `HTTP <status>`, then the server's `Retry-After` if it sent one, then
/// what the error body says, if it was read and parsed: its code (or, for
/// want of one, its type) and its message, each after a colon. An error
/// made from a guard's refusal ([`HttpError::from_refused`]) says so
/// instead.
///
/// ```
/// use http::{HeaderMap, StatusCode};
/// use tenacious::HttpError;
///
/// let mut headers = HeaderMap::new();
/// headers.insert("retry-after", "2".parse().unwrap());
/// let body = br#"{"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}"#;
/// let error = HttpError::from_parts_with_body(StatusCode::TOO_MANY_REQUESTS, &headers, body);
/// assert_eq!(
///     error.to_string(),
///     "HTTP 429 Too Many Requests (retry after 2s): rate_limit_exceeded: Rate limit reached"
/// );
/// assert_eq!(HttpError::new(StatusCode::BAD_GATEWAY).to_string(), "HTTP 502 Bad Gateway");
/// ```
#[cfg(feature = "http")] // on the item too, for its feature badge where it is re-exported
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HttpError {
    status: StatusCode,
    retry_after: Option<Duration>,
    should_retry: Option<bool>,
    signals: Signals,
    /// Why a guard refused the call before its first attempt, for an
    /// error made from a [`Refused`](crate::Refused) (no response).
    refused: Option<StopReason>,
    /// The error body and what it says, when one was given.
    body: Option<Arc<Body>>,
}

/// Anthropic's (and others') "overloaded": the provider as a whole is
/// refusing work.
const OVERLOADED: u16 = 529;

impl HttpError {
    /// A failure known only by its status: no hint, no `x-should-retry`,
    /// no rate-limit window; overloaded for a 529.
    #[must_use]
    pub const fn new(status: StatusCode) -> Self {
        Self {
            status,
            retry_after: None,
            should_retry: None,
            signals: Signals::NONE.overloaded(status.as_u16() == OVERLOADED),
            refused: None,
            body: None,
        }
    }

    /// The most bytes of an error body kept: 64 KiB. A provider's JSON
    /// error is a few hundred bytes; a longer body is an HTML error page
    /// or a proxy's, kept cut at this bound (and then not parsed) so an
    /// error costs bounded memory.
    ///
    /// ```
    /// use tenacious::HttpError;
    ///
    /// assert_eq!(HttpError::MAX_BODY, 65_536);
    /// ```
    pub const MAX_BODY: usize = 64 * 1024;

    /// The error of a call a guard stopped before its first attempt (an
    /// open circuit, a cooldown it cannot wait for): no request was sent.
    /// Its status is 503 Service Unavailable, as a gateway would answer;
    /// [`refused`](Self::refused) says why; `Transient`, with the
    /// refusal's hint. What `Classify::refused` makes for `HttpError`.
    ///
    /// ```
    /// use tenacious::{Classify, ErrorClass, HttpError, Refused, StopReason};
    ///
    /// let error = HttpError::from_refused(Refused::new(StopReason::CircuitOpen));
    /// assert_eq!(error.refused(), Some(StopReason::CircuitOpen));
    /// assert_eq!(error.classify(), ErrorClass::Transient);
    /// assert_eq!(error.to_string(), "refused before the first attempt (circuit open)");
    /// ```
    #[must_use]
    pub const fn from_refused(refused: crate::Refused) -> Self {
        // Written out, not `..Self::new(..)`: a `const fn` cannot drop the
        // rest of a value whose type owns a body.
        Self {
            status: StatusCode::SERVICE_UNAVAILABLE,
            // When the guard would admit again: the error's wait.
            retry_after: refused.retry_in(),
            should_retry: None,
            signals: Signals::NONE,
            refused: Some(refused.reason()),
            body: None,
        }
    }

    /// Why a guard refused the call before its first attempt, if this
    /// error says so (see [`from_refused`](Self::from_refused)).
    #[must_use]
    pub const fn refused(&self) -> Option<StopReason> {
        self.refused
    }

    /// Reads a response's status and headers, taking an HTTP-date
    /// `Retry-After` relative to the system clock now.
    #[must_use]
    pub fn from_parts(status: StatusCode, headers: &HeaderMap) -> Self {
        Self::from_parts_at(status, headers, SystemTime::now())
    }

    /// [`from_parts`](Self::from_parts) with an HTTP-date `Retry-After`, and
    /// an RFC 3339 rate-limit reset, taken relative to `now` (the response's
    /// arrival, or a fixed instant in tests).
    #[must_use]
    pub fn from_parts_at(status: StatusCode, headers: &HeaderMap, now: SystemTime) -> Self {
        Self {
            status,
            retry_after: retry_after::from_headers(headers, now),
            should_retry: should_retry(headers),
            signals: rate_limits::from_headers_at(headers, now)
                .overloaded(status.as_u16() == OVERLOADED),
            refused: None,
            body: None,
        }
    }

    /// Reads a response's status, headers **and** error body (see
    /// [`with_body`](Self::with_body)), taking an HTTP-date `Retry-After`
    /// relative to the system clock now.
    ///
    /// ```
    /// use http::{HeaderMap, StatusCode};
    /// use tenacious::{Classify, ErrorClass, HttpError, Reject};
    ///
    /// let body = br#"{"error": {"message": "This model's maximum context length is 8192 tokens.",
    ///                 "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}"#;
    /// let error = HttpError::from_parts_with_body(StatusCode::BAD_REQUEST, &HeaderMap::new(), body);
    /// assert_eq!(error.classify(), ErrorClass::Invalid);
    /// assert_eq!(
    ///     error.hint().as_deref(),
    ///     Some("the prompt is longer than the model's context window: shorten it or summarise earlier turns"),
    /// );
    /// // A larger model may serve it; a content filter's 400 is another matter.
    /// assert_eq!(error.rejected(), Some(Reject::ContextLength));
    /// let body = br#"{"error": {"message": "The response was filtered.",
    ///                 "type": null, "param": "prompt", "code": "content_filter"}}"#;
    /// let filtered = HttpError::from_parts_with_body(StatusCode::BAD_REQUEST, &HeaderMap::new(), body);
    /// assert_eq!(filtered.classify(), ErrorClass::Invalid);
    /// assert_eq!(filtered.rejected(), Some(Reject::ContentFilter));
    /// assert_eq!(HttpError::new(StatusCode::BAD_REQUEST).rejected(), None);
    /// ```
    #[must_use]
    pub fn from_parts_with_body(status: StatusCode, headers: &HeaderMap, body: &[u8]) -> Self {
        Self::from_parts(status, headers).with_body(body)
    }

    /// Reads a response's status and headers; the body is left alone (give
    /// it with [`with_body`](Self::with_body)).
    #[must_use]
    pub fn from_response<B>(response: &Response<B>) -> Self {
        Self::from_parts(response.status(), response.headers())
    }

    /// Sets the server's hint, replacing any read from headers.
    #[must_use]
    pub fn with_retry_after(self, retry_after: Option<Duration>) -> Self {
        Self {
            retry_after,
            ..self
        }
    }

    /// Sets the `x-should-retry` verdict, replacing any read from headers.
    #[must_use]
    pub fn with_should_retry(self, should_retry: Option<bool>) -> Self {
        Self {
            should_retry,
            ..self
        }
    }

    /// Sets what it says to the provider guards, replacing what was read
    /// from the status and headers.
    ///
    /// ```
    /// use std::time::Duration;
    /// use http::StatusCode;
    /// use tenacious::{Classify, HttpError, Signals};
    ///
    /// let window = Signals::NONE.remaining(0).reset(Duration::from_secs(20));
    /// let error = HttpError::new(StatusCode::TOO_MANY_REQUESTS).with_signals(window);
    /// assert_eq!(error.signals(), window);
    /// ```
    #[must_use]
    pub fn with_signals(self, signals: Signals) -> Self {
        Self { signals, ..self }
    }

    /// Sets whether the provider said it is overloaded (a 503 whose body
    /// says so), keeping the rest of its signals.
    ///
    /// ```
    /// use http::StatusCode;
    /// use tenacious::{Classify, HttpError};
    ///
    /// let error = HttpError::new(StatusCode::SERVICE_UNAVAILABLE).with_overloaded(true);
    /// assert!(error.signals().is_overloaded());
    /// ```
    #[must_use]
    pub fn with_overloaded(self, overloaded: bool) -> Self {
        Self {
            signals: self.signals.overloaded(overloaded),
            ..self
        }
    }

    /// The response's status.
    #[must_use]
    pub const fn status(&self) -> StatusCode {
        self.status
    }

    /// The `x-should-retry` verdict, if the server sent a readable one.
    #[must_use]
    pub const fn should_retry(&self) -> Option<bool> {
        self.should_retry
    }

    /// The class before `x-should-retry` and the server's hint: the
    /// body's preset, else the status's.
    fn base_class(&self) -> ErrorClass {
        self.preset()
            .map_or_else(|| self.status.classify(), Preset::class)
    }

    fn server_refused_retry(&self) -> bool {
        self.should_retry == Some(false) && is_retryable(self.base_class())
    }
}

impl Classify for HttpError {
    fn classify(&self) -> ErrorClass {
        if self.refused.is_some() {
            return ErrorClass::Transient;
        }
        if let Some(preset) = self.preset().filter(|preset| preset.is_final()) {
            return preset.class();
        }
        let class = match (self.should_retry, self.base_class()) {
            (Some(false), class) if is_retryable(class) => ErrorClass::Invalid,
            (Some(true), class) if !is_retryable(class) => ErrorClass::Transient,
            (_, class) => class,
        };
        match (class, self.retry_after) {
            (ErrorClass::Transient, Some(_)) => ErrorClass::RateLimited,
            (class, _) => class,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    fn hint(&self) -> Option<Cow<'static, str>> {
        if let Some(reason) = self.refused {
            return crate::Refused::new(reason).hint();
        }
        if self.server_refused_retry() {
            return Some(Cow::Borrowed(
                "the server asked not to retry this request; change it or try another route",
            ));
        }
        match self.preset() {
            Some(preset) => Some(Cow::Borrowed(preset.hint())),
            None => self.status.hint(),
        }
    }

    fn variant(&self) -> &'static str {
        self.status.variant()
    }

    fn signals(&self) -> Signals {
        self.signals
    }

    /// [`Reject::ContextLength`](crate::Reject::ContextLength) or
    /// [`Reject::ContentFilter`](crate::Reject::ContentFilter) when the
    /// body says so (the presets table); else `None`.
    fn rejected(&self) -> Option<crate::Reject> {
        self.preset().and_then(|preset| preset.rejected())
    }

    /// [`HttpError::from_refused`].
    fn refused() -> Option<fn(crate::Refused) -> Self> {
        Some(Self::from_refused)
    }
}

impl crate::Refusable for HttpError {}

impl From<StatusCode> for HttpError {
    fn from(status: StatusCode) -> Self {
        Self::new(status)
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(reason) = self.refused {
            return write!(f, "refused before the first attempt ({reason})");
        }
        write!(f, "HTTP {}", self.status)?;
        if let Some(wait) = self.retry_after {
            write!(f, " (retry after {wait:?})")?;
        }
        if let Some(error) = self.provider_error() {
            if let Some(name) = error.code.as_deref().or(error.kind.as_deref()) {
                write!(f, ": {name}")?;
            }
            if let Some(message) = error.message.as_deref() {
                write!(f, ": {message}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for HttpError {}
