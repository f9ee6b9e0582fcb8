//! What a failed response's body says: the provider's JSON error object
//! (type, code, message), the presets it is classified by, and the body
//! kept on an [`HttpError`](crate::HttpError).
use std::fmt;
use std::sync::Arc;

use super::HttpError;
use crate::ErrorClass;

/// The kept error body, parsed once.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct Body {
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
pub(super) struct ProviderError {
    pub(super) kind: Option<Box<str>>,
    pub(super) code: Option<Box<str>>,
    pub(super) message: Option<Box<str>>,
}

/// The classifications the body presets give: see the table on
/// [`HttpError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Preset {
    Quota,
    SpendLimit,
    ContextLength,
    ContentFilter,
    Overloaded,
    RateLimit,
}

/// Codes and types of each preset, in the order they are tried.
const PRESETS: [(Preset, &[&str]); 6] = [
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
    (
        Preset::ContentFilter,
        &["content_filter", "content_policy_violation"],
    ),
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

    pub(super) const fn class(self) -> ErrorClass {
        match self {
            Self::Quota | Self::SpendLimit => ErrorClass::Fatal,
            Self::ContextLength | Self::ContentFilter => ErrorClass::Invalid,
            Self::Overloaded => ErrorClass::Transient,
            Self::RateLimit => ErrorClass::RateLimited,
        }
    }

    pub(super) const fn hint(self) -> &'static str {
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
            Self::ContentFilter => {
                "the provider's content policy refused the request: change it; another model of \
                 the same provider will most likely refuse it too"
            }
            Self::Overloaded => "the provider is overloaded; trying again later may succeed",
            Self::RateLimit => RATE_LIMITED,
        }
    }

    /// What the preset says of where else the request may go.
    pub(super) const fn rejected(self) -> Option<crate::Reject> {
        match self {
            Self::ContextLength => Some(crate::Reject::ContextLength),
            Self::ContentFilter => Some(crate::Reject::ContentFilter),
            _ => None,
        }
    }

    /// Whether the preset decides alone: the account or the prompt must
    /// change, whatever the status and headers say.
    pub(super) const fn is_final(self) -> bool {
        !self.class().is_retryable()
    }
}

/// The status table's hint for a 429, shared by the rate-limit preset.
pub(super) const RATE_LIMITED: &str = "the server is rate limiting; wait before trying again";

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

impl HttpError {
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

    pub(super) fn provider_error(&self) -> Option<&ProviderError> {
        self.body.as_ref().map(|body| &body.error)
    }

    pub(super) fn preset(&self) -> Option<Preset> {
        self.body.as_ref().and_then(|body| body.preset)
    }
}
