//! HTTP status codes and responses as classified errors (feature `http`).
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
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
            429 => RATE_LIMITED,
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
/// | `context_length_exceeded` (OpenAI and OpenAI-compatible servers); or an Anthropic `invalid_request_error` whose message starts "prompt is too long" | 400 | `Invalid` | "the prompt is longer than the model's context window: shorten it or summarise earlier turns" |
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

/// The kept error body, parsed once.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Body {
    /// At most [`HttpError::MAX_BODY`] bytes.
    bytes: Box<[u8]>,
    /// The body was longer than `bytes` (cut at the bound, or the
    /// connection failed while it was read): it is not parsed.
    truncated: bool,
    error: ProviderError,
    preset: Option<Preset>,
}

/// Bytes in a body's `Debug`: enough to recognise it, never 64 KiB of log.
const DEBUG_BYTES: usize = 256;

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = &self.bytes[..self.bytes.len().min(DEBUG_BYTES)];
        f.debug_struct("Body")
            .field("len", &self.bytes.len())
            .field("truncated", &self.truncated)
            .field("text", &String::from_utf8_lossy(shown))
            .field("error", &self.error)
            .field("preset", &self.preset)
            .finish()
    }
}

/// What a provider's JSON error object says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
struct ProviderError {
    kind: Option<Box<str>>,
    code: Option<Box<str>>,
    message: Option<Box<str>>,
}

/// The classifications the body presets give: see the table on
/// [`HttpError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Preset {
    Quota,
    SpendLimit,
    ContextLength,
    Overloaded,
    RateLimit,
}

/// Codes and types of each preset, in the order they are tried.
const PRESETS: [(Preset, &[&str]); 5] = [
    (Preset::Quota, &["insufficient_quota"]),
    (
        Preset::SpendLimit,
        &[
            "enforced_spend_limit_reached",
            "organization_spend_limit_exceeded",
            "project_spend_limit_exceeded",
            "billing_hard_limit_reached",
            "billing_not_active",
            "billing_error",
        ],
    ),
    (Preset::ContextLength, &["context_length_exceeded"]),
    (Preset::Overloaded, &["overloaded_error"]),
    (
        Preset::RateLimit,
        &["rate_limit_exceeded", "rate_limit_error"],
    ),
];

/// Anthropic's `invalid_request_error` says these in its message only.
const ANTHROPIC_INVALID_REQUEST: &str = "invalid_request_error";
const SPEND_LIMIT_MESSAGES: [&str; 3] = [
    "You have reached your specified API usage limits",
    "You have reached your specified workspace API usage limits",
    "Your credit balance is too low",
];
const CONTEXT_LENGTH_MESSAGE: &str = "prompt is too long";

impl Preset {
    /// The preset a provider's error object calls for, if any.
    fn of(error: &ProviderError) -> Option<Self> {
        let says = |names: &[&str]| {
            [&error.code, &error.kind]
                .into_iter()
                .flatten()
                .any(|value| names.contains(&&**value))
        };
        let by_name = PRESETS
            .iter()
            .find(|(_, names)| says(names))
            .map(|(preset, _)| *preset);
        // A code or type wins over words; words only in Anthropic's
        // invalid request, where they are all it says.
        if by_name.is_some() || error.kind.as_deref() != Some(ANTHROPIC_INVALID_REQUEST) {
            return by_name;
        }
        let message = error.message.as_deref()?;
        if SPEND_LIMIT_MESSAGES
            .iter()
            .any(|start| message.starts_with(start))
        {
            Some(Self::SpendLimit)
        } else if message.starts_with(CONTEXT_LENGTH_MESSAGE) {
            Some(Self::ContextLength)
        } else {
            None
        }
    }

    const fn class(self) -> ErrorClass {
        match self {
            Self::Quota | Self::SpendLimit => ErrorClass::Fatal,
            Self::ContextLength => ErrorClass::Invalid,
            Self::Overloaded => ErrorClass::Transient,
            Self::RateLimit => ErrorClass::RateLimited,
        }
    }

    const fn hint(self) -> &'static str {
        match self {
            Self::Quota => {
                "the account's quota is spent: a human must add credit or raise its plan; \
                 retrying will not help"
            }
            Self::SpendLimit => {
                "the account reached its spending limit: a human must raise the limit or add \
                 credit; retrying will not help"
            }
            Self::ContextLength => {
                "the prompt is longer than the model's context window: shorten it or summarise \
                 earlier turns"
            }
            Self::Overloaded => "the provider is overloaded; trying again later may succeed",
            Self::RateLimit => RATE_LIMITED,
        }
    }

    /// Whether the preset decides alone: the account or the prompt must
    /// change, whatever the status and headers say.
    const fn is_final(self) -> bool {
        !self.class().is_retryable()
    }
}

/// The status table's hint for a 429, shared by the rate-limit preset.
const RATE_LIMITED: &str = "the server is rate limiting; wait before trying again";

impl ProviderError {
    /// Reads a JSON error object; anything else says nothing. The body is
    /// bounded before it gets here, and `serde_json` bounds its nesting,
    /// so hostile input costs little and never panics.
    fn parse(bytes: &[u8]) -> Self {
        use serde_json::Value;

        let Ok(Value::Object(root)) = serde_json::from_slice::<Value>(bytes) else {
            return Self::default();
        };
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(Box::<str>::from);
        match root.get("error") {
            // OpenAI, Anthropic, and servers copying either.
            Some(Value::Object(error)) => Self {
                kind: text(error.get("type")),
                code: text(error.get("code")).or_else(|| {
                    text(
                        error
                            .get("details")
                            .and_then(|details| details.get("error_code")),
                    )
                }),
                message: text(error.get("message")),
            },
            // `{"error": "..."}`: a message alone.
            Some(Value::String(message)) => Self {
                message: Some(message.as_str().into()),
                ..Self::default()
            },
            // A flat error object (Mistral, vLLM).
            _ => Self {
                kind: text(root.get("type")),
                code: text(root.get("code")),
                message: text(root.get("message")),
            },
        }
    }
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
    /// use tenacious::{Classify, ErrorClass, HttpError};
    ///
    /// let body = br#"{"error": {"message": "This model's maximum context length is 8192 tokens.",
    ///                 "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}"#;
    /// let error = HttpError::from_parts_with_body(StatusCode::BAD_REQUEST, &HeaderMap::new(), body);
    /// assert_eq!(error.classify(), ErrorClass::Invalid);
    /// assert_eq!(
    ///     error.hint().as_deref(),
    ///     Some("the prompt is longer than the model's context window: shorten it or summarise earlier turns"),
    /// );
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

    /// Keeps the response's error body, at most [`MAX_BODY`](Self::MAX_BODY)
    /// bytes of it, replacing any given before, and classifies by what it
    /// says (the presets in the [type's docs](Self)). A body over the bound
    /// is kept cut and not parsed; one that is not a JSON error object is
    /// kept and says nothing. An `overloaded_error` sets the overloaded
    /// signal.
    ///
    /// ```
    /// use http::StatusCode;
    /// use tenacious::{Classify, ErrorClass, HttpError};
    ///
    /// let body = br#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
    /// let error = HttpError::new(StatusCode::INTERNAL_SERVER_ERROR).with_body(body);
    /// assert_eq!(error.classify(), ErrorClass::Transient);
    /// assert!(error.signals().is_overloaded());
    /// assert_eq!(error.error_type(), Some("overloaded_error"));
    /// assert_eq!(error.body(), Some(&body[..]));
    ///
    /// let page = HttpError::new(StatusCode::BAD_GATEWAY).with_body(b"<html>502 Bad Gateway</html>");
    /// assert_eq!(page.error_type(), None);
    /// assert_eq!(page.classify(), ErrorClass::Transient);
    /// ```
    #[must_use]
    pub fn with_body(self, body: &[u8]) -> Self {
        let kept = &body[..body.len().min(Self::MAX_BODY)];
        self.with_kept_body(kept.into(), body.len() > Self::MAX_BODY)
    }

    /// Keeps a body that is not the whole one — the connection failed or
    /// stalled while it was read, or it was cut at a bound — at most
    /// [`MAX_BODY`](Self::MAX_BODY) bytes of it, replacing any given
    /// before: marked [truncated](Self::is_body_truncated), it is not
    /// parsed, so the error is classified by its status and headers alone
    /// (a JSON error cut mid-way says nothing whole). For a reader of its
    /// own that stops early; [`with_body`](Self::with_body) takes a whole
    /// body.
    ///
    /// ```
    /// use http::StatusCode;
    /// use tenacious::{Classify, ErrorClass, HttpError};
    ///
    /// // An `insufficient_quota` cut before its end: not read as one.
    /// let cut = br#"{"error": {"code": "insufficient_quota", "mess"#;
    /// let error = HttpError::new(StatusCode::TOO_MANY_REQUESTS).with_partial_body(cut);
    /// assert!(error.is_body_truncated());
    /// assert_eq!(error.body(), Some(&cut[..]));
    /// assert_eq!(error.error_code(), None);
    /// assert_eq!(error.classify(), ErrorClass::RateLimited);
    /// ```
    #[must_use]
    pub fn with_partial_body(self, body: &[u8]) -> Self {
        let kept = &body[..body.len().min(Self::MAX_BODY)];
        self.with_kept_body(kept.into(), true)
    }

    /// [`with_body`](Self::with_body) of bytes already bounded;
    /// `truncated`: they are not the whole body.
    pub(crate) fn with_kept_body(self, bytes: Box<[u8]>, truncated: bool) -> Self {
        let error = if truncated {
            ProviderError::default()
        } else {
            ProviderError::parse(&bytes)
        };
        let preset = Preset::of(&error);
        let signals = if preset == Some(Preset::Overloaded) {
            self.signals.overloaded(true)
        } else {
            self.signals
        };
        Self {
            signals,
            body: Some(Arc::new(Body {
                bytes,
                truncated,
                error,
                preset,
            })),
            ..self
        }
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

    /// The error body kept (at most [`MAX_BODY`](Self::MAX_BODY) bytes),
    /// or `None` if none was given.
    ///
    /// ```
    /// use http::StatusCode;
    /// use tenacious::HttpError;
    ///
    /// assert_eq!(HttpError::new(StatusCode::BAD_GATEWAY).body(), None);
    /// let error = HttpError::new(StatusCode::BAD_GATEWAY).with_body(b"upstream reset");
    /// assert_eq!(error.body(), Some(&b"upstream reset"[..]));
    /// ```
    #[must_use]
    pub fn body(&self) -> Option<&[u8]> {
        self.body.as_ref().map(|body| &*body.bytes)
    }

    /// Whether the kept body is not the whole body: it was longer than
    /// [`MAX_BODY`](Self::MAX_BODY), or the connection failed while it was
    /// read. Such a body is not parsed. `false` without a body.
    ///
    /// ```
    /// use http::StatusCode;
    /// use tenacious::HttpError;
    ///
    /// let huge = vec![b' '; HttpError::MAX_BODY + 1];
    /// let error = HttpError::new(StatusCode::BAD_GATEWAY).with_body(&huge);
    /// assert!(error.is_body_truncated());
    /// assert_eq!(error.body().map(<[u8]>::len), Some(HttpError::MAX_BODY));
    /// ```
    #[must_use]
    pub fn is_body_truncated(&self) -> bool {
        self.body.as_ref().is_some_and(|body| body.truncated)
    }

    /// The provider's error type: `error.type` (`"insufficient_quota"`,
    /// `"invalid_request_error"` at OpenAI; `"overloaded_error"`,
    /// `"rate_limit_error"` at Anthropic), or a flat object's `type`.
    /// `None` without a body, or when the body does not say.
    ///
    /// ```
    /// use http::StatusCode;
    /// use tenacious::HttpError;
    ///
    /// let body = br#"{"type": "error", "error": {"type": "rate_limit_error", "message": "slow down",
    ///                 "details": {"error_code": "enforced_spend_limit_reached"}}}"#;
    /// let error = HttpError::new(StatusCode::TOO_MANY_REQUESTS).with_body(body);
    /// assert_eq!(error.error_type(), Some("rate_limit_error"));
    /// assert_eq!(error.error_code(), Some("enforced_spend_limit_reached"));
    /// assert_eq!(error.error_message(), Some("slow down"));
    /// ```
    #[must_use]
    pub fn error_type(&self) -> Option<&str> {
        self.provider_error()?.kind.as_deref()
    }

    /// The provider's error code: OpenAI's `error.code`
    /// (`"insufficient_quota"`, `"context_length_exceeded"`,
    /// `"rate_limit_exceeded"`), else Anthropic's `error.details.error_code`
    /// (`"enforced_spend_limit_reached"`), or a flat object's `code`. A code
    /// that is not a string (`"code": 400`) is not read. `None` without a
    /// body, or when the body does not say.
    ///
    /// ```
    /// use http::StatusCode;
    /// use tenacious::HttpError;
    ///
    /// let body = br#"{"error": {"message": "Rate limit reached", "type": "requests", "param": null,
    ///                 "code": "rate_limit_exceeded"}}"#;
    /// let error = HttpError::new(StatusCode::TOO_MANY_REQUESTS).with_body(body);
    /// assert_eq!(error.error_code(), Some("rate_limit_exceeded"));
    /// assert_eq!(error.error_type(), Some("requests"));
    /// ```
    #[must_use]
    pub fn error_code(&self) -> Option<&str> {
        self.provider_error()?.code.as_deref()
    }

    /// The provider's message (`error.message`), for the logs and for a
    /// model that can act on it ("maximum context length is 8192 tokens").
    /// `None` without a body, or when the body does not say.
    ///
    /// ```
    /// use http::StatusCode;
    /// use tenacious::HttpError;
    ///
    /// let error = HttpError::new(StatusCode::BAD_GATEWAY).with_body(br#"{"error": "upstream timed out"}"#);
    /// assert_eq!(error.error_message(), Some("upstream timed out"));
    /// assert_eq!(error.error_code(), None);
    /// ```
    #[must_use]
    pub fn error_message(&self) -> Option<&str> {
        self.provider_error()?.message.as_deref()
    }

    fn provider_error(&self) -> Option<&ProviderError> {
        self.body.as_ref().map(|body| &body.error)
    }

    fn preset(&self) -> Option<Preset> {
        self.body.as_ref().and_then(|body| body.preset)
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
