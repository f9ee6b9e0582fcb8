//! [`Error`], why OpenAI's stream ended with an error, and the in-band
//! error an event sends.
use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value};

use super::super::SseError;
use super::super::provider::{ErrorView, in_band_error};
use crate::{Classify, ErrorClass, HttpError};

/// Why a stream of [`Chunks`](super::Chunks) ended with an error: its
/// last item.
///
/// | variant | class | [`variant`](Classify::variant) |
/// |---|---|---|
/// | [`Sse`](Error::Sse): the body's own error, or a line over the bound | as [`SseError`] says: the body's error's own, `Fatal` for `TooLong` | the body error's |
/// | [`Malformed`](Error::Malformed) | `Transient` | `"Malformed"` |
/// | [`InBand`](Error::InBand) | by [`HttpError`]'s presets (`insufficient_quota`: `Fatal`; `context_length_exceeded`: `Invalid`, [`Reject::ContextLength`](crate::Reject::ContextLength); `rate_limit_exceeded`: `RateLimited`), else by the status the error's type stands for (`server_error` and unknown types: 500, `Transient`) | `"InBand"` |
/// | [`Cut`](Error::Cut) | `Transient` | `"Cut"` |
///
/// A malformed event from a provider that works is rare, and the next
/// attempt (or another route) most likely reads well: `Transient`, so a
/// retried stream tries again before its first content and a route moves
/// on, rather than giving up on a stream it could have read.
///
/// It does not implement `From<Elapsed>`: wrap it in an error type of your
/// own that does (see the [module docs](super)).
///
/// ```
/// use std::convert::Infallible;
/// use futures_util::StreamExt;
/// use tenacious::sse::openai;
/// use tenacious::{Classify, ErrorClass};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let body = r#"data: {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}}"#;
/// let mut chunks = openai::chunks(futures_util::stream::iter([Ok::<_, Infallible>(format!("{body}\n\n"))]));
/// let Some(Err(openai::Error::InBand(error))) = chunks.next().await else { panic!() };
/// assert_eq!(error.classify(), ErrorClass::Fatal);
/// assert_eq!(error.error_code(), Some("insufficient_quota"));
/// assert!(chunks.next().await.is_none());
///
/// // A body that ends before `[DONE]`: cut, never a clean end.
/// let cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n";
/// let mut chunks = openai::chunks(futures_util::stream::iter([Ok::<_, Infallible>(cut)]));
/// assert!(chunks.next().await.unwrap().is_ok());
/// let Some(Err(error)) = chunks.next().await else { panic!() };
/// assert!(matches!(error, openai::Error::Cut));
/// assert_eq!((error.classify(), error.variant()), (ErrorClass::Transient, "Cut"));
/// assert_eq!(error.to_string(), "OpenAI stream: the body ended before `data: [DONE]`");
/// # }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error<E> {
    /// The event stream's error: the body's own (a connection cut, a
    /// timeout of the client's), or a line over its bound.
    Sse(SseError<E>),
    /// An event whose data is not a chunk: not JSON, or not a JSON
    /// object.
    Malformed {
        /// The event's type (`message`, unless the server named it).
        event: String,
        /// What is wrong with it, and how its data begins.
        reason: String,
    },
    /// The provider's error, sent as an event of the stream (on a `200`):
    /// its data (`{"error": {"message", "type", "code"}}`) as the body of
    /// an [`HttpError`] whose status is the one OpenAI answers that error
    /// with as a response (a `type` or `code` of rate limit or quota: 429;
    /// `invalid_request_error`: 400; `authentication_error`: 401;
    /// `permission_error`: 403; `not_found_error`: 404; `server_error` and
    /// any other: 500). [`error_type`](HttpError::error_type),
    /// [`error_code`](HttpError::error_code) and
    /// [`error_message`](HttpError::error_message) say what it says.
    InBand(HttpError),
    /// The body ended, cleanly, before `data: [DONE]`: the answer is
    /// incomplete, whatever came before (a proxy or a load balancer closed
    /// the stream).
    Cut,
}

impl<E> From<SseError<E>> for Error<E> {
    fn from(error: SseError<E>) -> Self {
        Self::Sse(error)
    }
}

impl<E> Error<E> {
    /// What it is, as every provider's error says it.
    fn view(&self) -> ErrorView<'_, E> {
        match self {
            Self::Sse(error) => ErrorView::Sse(error),
            Self::Malformed { event, reason } => ErrorView::Malformed { event, reason },
            Self::InBand(error) => ErrorView::InBand(error),
            Self::Cut => ErrorView::Cut,
        }
    }
}

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.view().fmt("OpenAI", "`data: [DONE]`", f)
    }
}

impl<E: std::error::Error + 'static> std::error::Error for Error<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.view().source()
    }
}

/// As the table on [`Error`] says; every method not written here is the
/// body's error's (for [`Sse`](Error::Sse)) or the [`HttpError`]'s (for
/// [`InBand`](Error::InBand)): its hint, signals (an overloaded provider),
/// [`rejected`](Classify::rejected).
impl<E: Classify> Classify for Error<E> {
    fn classify(&self) -> ErrorClass {
        self.view().classify()
    }

    fn hint(&self) -> Option<Cow<'static, str>> {
        self.view().hint(
            "the stream ended before `[DONE]`: the answer is incomplete; trying again may \
             complete it",
        )
    }

    fn variant(&self) -> &'static str {
        self.view().variant()
    }

    fn inner(&self) -> Option<&dyn Classify> {
        self.view().inner()
    }
}

/// The in-band error of `root`, whose text is `data`: an [`HttpError`]
/// with the status OpenAI gives its type or code.
pub(super) fn in_band(root: &Map<String, Value>, data: &str) -> HttpError {
    // `{"error": {...}}`, or a flat object under `event: error`.
    let error = match root.get("error") {
        Some(Value::Object(error)) => error,
        _ => root,
    };
    let says = |names: &[&str]| {
        ["code", "type"]
            .into_iter()
            .filter_map(|key| error.get(key).and_then(Value::as_str))
            .any(|value| names.contains(&value))
    };
    let code = if says(&[
        "rate_limit_exceeded",
        "insufficient_quota",
        "requests",
        "tokens",
    ]) {
        429
    } else if says(&["authentication_error", "invalid_api_key"]) {
        401
    } else if says(&["permission_error"]) {
        403
    } else if says(&["not_found_error", "model_not_found"]) {
        404
    } else if says(&["invalid_request_error"]) {
        400
    } else {
        500
    };
    in_band_error(code, data)
}
