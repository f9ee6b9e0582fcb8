//! [`Error`], why Anthropic's stream ended with an error, and the in-band
//! error an `error` event sends.
use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value};

use super::super::SseError;
use super::super::provider::{ErrorView, in_band_error};
use crate::{Classify, ErrorClass, HttpError};

/// Why a stream of [`Events`](super::Events) ended with an error: its
/// last item.
///
/// | variant | class | [`variant`](Classify::variant) |
/// |---|---|---|
/// | [`Sse`](Error::Sse): the body's own error, or a line over the bound | as [`SseError`] says: the body's error's own, `Fatal` for `TooLong` | the body error's |
/// | [`Malformed`](Error::Malformed) | `Transient` | `"Malformed"` |
/// | [`InBand`](Error::InBand) | by [`HttpError`]'s presets (`overloaded_error`: `Transient`, overloaded; `rate_limit_error`: `RateLimited`; a spend limit: `Fatal`; "prompt is too long": `Invalid`, [`Reject::ContextLength`](crate::Reject::ContextLength)), else by the status the error's type stands for (`api_error` and unknown types: 500, `Transient`; `invalid_request_error`: 400, `Invalid`; `authentication_error`: 401, `Fatal`) | `"InBand"` |
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
/// use tenacious::sse::anthropic;
/// use tenacious::{Classify, ErrorClass};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let body = concat!(
///     "event: error\n",
///     r#"data: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
///     "\n\n",
/// );
/// let mut events = anthropic::events(futures_util::stream::iter([Ok::<_, Infallible>(body)]));
/// let Some(Err(error)) = events.next().await else { panic!() };
/// assert_eq!(error.classify(), ErrorClass::Transient);
/// assert!(error.signals().is_overloaded());
/// assert_eq!(error.to_string(), "Anthropic stream: an error event: overloaded_error: Overloaded");
/// assert!(events.next().await.is_none());
///
/// // A body that ends before `message_stop`: cut, never a clean end.
/// let mut events = anthropic::events(futures_util::stream::iter([Ok::<_, Infallible>("")]));
/// let Some(Err(error)) = events.next().await else { panic!() };
/// assert!(matches!(error, anthropic::Error::Cut));
/// assert_eq!((error.classify(), error.variant()), (ErrorClass::Transient, "Cut"));
/// # }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error<E> {
    /// The event stream's error: the body's own (a connection cut, a
    /// timeout of the client's), or a line over its bound.
    Sse(SseError<E>),
    /// An event of a type this module reads whose data is not JSON, or
    /// not a JSON object.
    Malformed {
        /// The event's type.
        event: String,
        /// What is wrong with it, and how its data begins.
        reason: String,
    },
    /// The provider's error, sent as an `error` event of the stream (on a
    /// `200`): its data (`{"type": "error", "error": {"type", "message"}}`)
    /// as the body of an [`HttpError`] whose status is the one Anthropic
    /// answers that error type with as a response (`invalid_request_error`:
    /// 400; `authentication_error`: 401; `billing_error`: 402;
    /// `permission_error`: 403; `not_found_error`: 404;
    /// `request_too_large`: 413; `rate_limit_error`: 429; `timeout_error`:
    /// 504; `overloaded_error`: 529; `api_error` and any other: 500).
    /// [`error_type`](HttpError::error_type) and
    /// [`error_message`](HttpError::error_message) say what it says.
    InBand(HttpError),
    /// The body ended, cleanly, before `message_stop`: the answer is
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
        self.view().fmt("Anthropic", "`message_stop`", f)
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
            "the stream ended before `message_stop`: the answer is incomplete; trying again \
             may complete it",
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
/// with the status Anthropic gives its type.
pub(super) fn in_band(root: &Map<String, Value>, data: &str) -> HttpError {
    let kind = match root.get("error") {
        Some(Value::Object(error)) => error.get("type"),
        _ => root.get("type"),
    };
    let code = match kind.and_then(Value::as_str) {
        Some("invalid_request_error") => 400,
        Some("authentication_error") => 401,
        Some("billing_error") => 402,
        Some("permission_error") => 403,
        Some("not_found_error") => 404,
        Some("request_too_large") => 413,
        Some("rate_limit_error") => 429,
        Some("timeout_error") => 504,
        Some("overloaded_error") => 529,
        _ => 500,
    };
    in_band_error(code, data)
}
