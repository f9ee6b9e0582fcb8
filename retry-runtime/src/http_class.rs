//! HTTP status codes and responses as classified errors (feature `http`).
use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, SystemTime};

use ::http::{HeaderMap, Response, StatusCode};

use crate::{Classify, ErrorClass, Signals, StopReason, rate_limits, retry_after};

/// The header some APIs (OpenAI, Anthropic) send to overrule the status code's
/// usual retry advice.
const SHOULD_RETRY: &str = "x-should-retry";

/// Classifies a status code on its own; see [`HttpError`] to take the
/// response's headers into account as well.
///
/// | status | class | why |
/// |---|---|---|
/// | 408 Request Timeout | `Transient` | the server gave up waiting for the request |
/// | 421 Misdirected Request | `Transient` | RFC 9110: retry, possibly over another connection |
/// | 423 Locked | `Transient` | another client holds the lock; it may be released |
/// | 425 Too Early | `Transient` | RFC 8470: retry once the handshake is complete |
/// | 429 Too Many Requests | `RateLimited` | wait as long as the server asks |
/// | 401 Unauthorized, 403 Forbidden | `Fatal` | the credentials are wrong or lack rights |
/// | 402 Payment Required, 407 Proxy Authentication Required | `Fatal` | an account or proxy a human must fix |
/// | 400, 404, 409, 422 and every other 4xx | `Invalid` | the same request gets the same answer |
/// | 501 Not Implemented, 505 HTTP Version Not Supported | `Invalid` | the server never supports this request as sent |
/// | 511 Network Authentication Required | `Fatal` | a captive portal: a human must sign in |
/// | 500, 502, 503, 504 and every other 5xx (e.g. 529 Overloaded) | `Transient` | the server failed; it may recover |
/// | 1xx, 2xx, 3xx, 600–999 | `Invalid` | not an error HTTP defines: treating it as one is the caller's choice, and asking again unchanged gets the same answer |
///
/// A 503 with `Retry-After` is `RateLimited`, but a bare status has no
/// headers: [`HttpError`] makes that distinction.
///
/// [`variant`](Classify::variant) is `"Status"` followed by the three digits
/// (`"Status429"`): a stable, bounded label for the error distribution.
/// [`hint`](Classify::hint) gives advice for the common codes and `None` for
/// the rest. [`retry_after`](Classify::retry_after) is `None`.
///
/// ```
/// use http::StatusCode;
/// use tenacious::{Classify, ErrorClass};
///
/// assert_eq!(StatusCode::TOO_MANY_REQUESTS.classify(), ErrorClass::RateLimited);
/// assert_eq!(StatusCode::BAD_GATEWAY.classify(), ErrorClass::Transient);
/// assert_eq!(StatusCode::NOT_FOUND.classify(), ErrorClass::Invalid);
/// assert_eq!(StatusCode::UNAUTHORIZED.classify(), ErrorClass::Fatal);
/// assert_eq!(StatusCode::TOO_MANY_REQUESTS.variant(), "Status429");
/// ```
impl Classify for StatusCode {
    fn classify(&self) -> ErrorClass {
        match self.as_u16() {
            408 | 421 | 423 | 425 => ErrorClass::Transient,
            429 => ErrorClass::RateLimited,
            401 | 402 | 403 | 407 | 511 => ErrorClass::Fatal,
            501 | 505 => ErrorClass::Invalid,
            500..=599 => ErrorClass::Transient,
            _ => ErrorClass::Invalid,
        }
    }

    fn hint(&self) -> Option<Cow<'static, str>> {
        let hint = match self.as_u16() {
            400 => "the request was malformed; fix the arguments before trying again",
            401 => "the credentials were rejected; a human must fix them",
            402 => "payment is required; a human must fix the account",
            403 => "these credentials may not do this; a human must grant access",
            404 => "the resource does not exist; check the identifier or path",
            407 => "the proxy rejected the credentials; a human must fix them",
            408 => "the server timed out waiting for the request; trying again may succeed",
            409 => {
                "the request conflicts with the resource's current state; read it again before changing it"
            }
            413 => "the request is too large; send less",
            422 => "the request was understood but its content was rejected; fix the arguments",
            429 => "the server is rate limiting; wait before trying again",
            501 => "the server does not support this request",
            503 => "the service is unavailable; trying again later may succeed",
            511 => "the network requires sign-in; a human must authenticate",
            500..=599 => "the server failed; trying again later may succeed",
            _ => return None,
        };
        Some(Cow::Borrowed(hint))
    }

    fn variant(&self) -> &'static str {
        // `StatusCode` only holds 100..=999, so the lookup cannot miss; the
        // fallback keeps this total without a panic path.
        usize::from(self.as_u16())
            .checked_sub(100)
            .and_then(|i| VARIANT_NAMES.get(i))
            .and_then(|name| std::str::from_utf8(name).ok())
            .unwrap_or("Status")
    }
}

/// `"Status100"` to `"Status999"`, built at compile time so `variant` can hand
/// out a `&'static str` for every code without allocating.
static VARIANT_NAMES: [[u8; 9]; 900] = variant_names();

const fn variant_names() -> [[u8; 9]; 900] {
    let mut names = [*b"Status000"; 900];
    let mut i = 0;
    while i < names.len() {
        let code = i + 100;
        names[i][6] = b'0' + (code / 100) as u8;
        names[i][7] = b'0' + (code / 10 % 10) as u8;
        names[i][8] = b'0' + (code % 10) as u8;
        i += 1;
    }
    names
}

/// A failed HTTP response, classified from its status **and** headers: use it
/// as your error type, or as a `#[classify(transparent)]` variant of it.
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
///   529. A 503 that says "overloaded" says it in its body, which is left
///   alone: set it with [`with_overloaded`](HttpError::with_overloaded).
///
/// [`variant`](Classify::variant) is the status's (`"Status503"`).
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
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HttpError {
    status: StatusCode,
    retry_after: Option<Duration>,
    should_retry: Option<bool>,
    signals: Signals,
    /// Why a guard refused the call before its first attempt, for an
    /// error made from a [`Refused`](crate::Refused) (no response).
    refused: Option<StopReason>,
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
        }
    }

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
        Self {
            refused: Some(refused.reason()),
            ..Self::new(StatusCode::SERVICE_UNAVAILABLE)
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
        }
    }

    /// Reads a response's status and headers; the body is left alone.
    #[must_use]
    pub fn from_response<B>(response: &Response<B>) -> Self {
        Self::from_parts(response.status(), response.headers())
    }

    /// Sets the server's hint, replacing any read from headers.
    #[must_use]
    pub const fn with_retry_after(self, retry_after: Option<Duration>) -> Self {
        Self {
            retry_after,
            ..self
        }
    }

    /// Sets the `x-should-retry` verdict, replacing any read from headers.
    #[must_use]
    pub const fn with_should_retry(self, should_retry: Option<bool>) -> Self {
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
    pub const fn with_signals(self, signals: Signals) -> Self {
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
    pub const fn with_overloaded(self, overloaded: bool) -> Self {
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

    fn server_refused_retry(&self) -> bool {
        self.should_retry == Some(false) && is_retryable(self.status.classify())
    }
}

impl Classify for HttpError {
    fn classify(&self) -> ErrorClass {
        if self.refused.is_some() {
            return ErrorClass::Transient;
        }
        let class = match (self.should_retry, self.status.classify()) {
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
        self.status.hint()
    }

    fn variant(&self) -> &'static str {
        self.status.variant()
    }

    fn signals(&self) -> Signals {
        self.signals
    }

    /// [`HttpError::from_refused`].
    fn refused() -> Option<fn(crate::Refused) -> Self> {
        Some(Self::from_refused)
    }
}

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
        Ok(())
    }
}

impl std::error::Error for HttpError {}

const fn is_retryable(class: ErrorClass) -> bool {
    matches!(class, ErrorClass::Transient | ErrorClass::RateLimited)
}

fn should_retry(headers: &HeaderMap) -> Option<bool> {
    let value = headers
        .get(SHOULD_RETRY)?
        .to_str()
        .ok()?
        .trim_matches([' ', '\t']);
    if value.eq_ignore_ascii_case("true") {
        Some(true)
    } else if value.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}
