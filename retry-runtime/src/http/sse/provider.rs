//! What the providers' streams ([`openai`](super::openai),
//! [`anthropic`](super::anthropic)) share: the poll loop of their adaptors
//! ([`poll_next`], over a [`Decode`] item), what their errors say and how
//! they classify ([`ErrorView`]), and the helpers that read their events'
//! JSON.
use std::borrow::Cow;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use ::http::StatusCode;
use futures_core::Stream;
use serde_json::{Map, Value};

use super::{SseError, SseEvent, SseItem};
use crate::{Classify, ErrorClass, HttpError};

/// An item of a provider's stream, as its adaptor reads it from the
/// events of [`sse`](super::sse).
pub(super) trait Decode: Sized {
    /// The provider's error, over the body's error `E`.
    type Error<E>: From<SseError<E>>;

    /// The item of an SSE comment: a keepalive.
    fn keepalive() -> Self;

    /// One event as an item, or as the error it is.
    fn decode<E>(event: SseEvent) -> Result<Self, Self::Error<E>>;

    /// The error of a body that ends, cleanly, before the stream's last
    /// item.
    fn cut<E>() -> Self::Error<E>;

    /// Whether this is the stream's last item (`[DONE]`, `message_stop`).
    fn is_last(&self) -> bool;
}

/// The next item of a provider's adaptor, from `items`: an event decoded,
/// a comment as a keepalive, the body's error, or the cut of a body that
/// ends too soon. After the last item or an error, `done` is set and
/// nothing more is read.
pub(super) fn poll_next<S, E, T>(
    items: Pin<&mut S>,
    done: &mut bool,
    cx: &mut Context<'_>,
) -> Poll<Option<Result<T, T::Error<E>>>>
where
    S: Stream<Item = Result<SseItem, SseError<E>>>,
    T: Decode,
{
    if *done {
        return Poll::Ready(None);
    }
    let item = match ready!(items.poll_next(cx)) {
        None => Err(T::cut()),
        Some(Err(error)) => Err(error.into()),
        Some(Ok(SseItem::Comment(_))) => Ok(T::keepalive()),
        Some(Ok(SseItem::Event(event))) => T::decode(event),
    };
    *done = !matches!(&item, Ok(item) if !item.is_last());
    Poll::Ready(Some(item))
}

/// A provider's error, whichever provider: each has an `Error` of its own
/// with these four variants, which reads as this view to say what it is.
pub(super) enum ErrorView<'a, E> {
    /// The event stream's error.
    Sse(&'a SseError<E>),
    /// An event that cannot be read: its type, and what is wrong with it.
    Malformed { event: &'a str, reason: &'a str },
    /// The provider's error, sent as an event.
    InBand(&'a HttpError),
    /// The body ended before the stream's last event.
    Cut,
}

/// Hint of a malformed event.
const MALFORMED: &str =
    "the provider sent an event this client cannot read; trying again may get one it can";

impl<'a, E> ErrorView<'a, E> {
    /// What the error says, as `{provider} stream: ...`; a cut says the
    /// body ended before `end`, the stream's last event.
    pub(super) fn fmt(&self, provider: &str, end: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result
    where
        E: fmt::Display,
    {
        write!(f, "{provider} stream: ")?;
        match self {
            Self::Sse(error) => write!(f, "{error}"),
            Self::Malformed { event, reason } => {
                write!(f, "a malformed `{event}` event: {reason}")
            }
            Self::InBand(error) => {
                // Its code (or type) and message, each after a colon.
                f.write_str("an error event")?;
                if let Some(name) = error.error_code().or(error.error_type()) {
                    write!(f, ": {name}")?;
                }
                if let Some(message) = error.error_message() {
                    write!(f, ": {message}")?;
                }
                Ok(())
            }
            Self::Cut => write!(f, "the body ended before {end}"),
        }
    }

    /// The error's source: the event stream's error, or the in-band one.
    pub(super) fn source(&self) -> Option<&'a (dyn std::error::Error + 'static)>
    where
        E: std::error::Error + 'static,
    {
        match *self {
            Self::Sse(error) => Some(error),
            Self::InBand(error) => Some(error),
            Self::Malformed { .. } | Self::Cut => None,
        }
    }

    /// The class of the body's error or the in-band one; a malformed event
    /// and a cut are `Transient`.
    pub(super) fn classify(&self) -> ErrorClass
    where
        E: Classify,
    {
        match self {
            Self::Sse(error) => error.classify(),
            Self::InBand(error) => error.classify(),
            Self::Malformed { .. } | Self::Cut => ErrorClass::Transient,
        }
    }

    /// The hint of the body's error or the in-band one; `cut` for a cut.
    pub(super) fn hint(&self, cut: &'static str) -> Option<Cow<'static, str>>
    where
        E: Classify,
    {
        match self {
            Self::Sse(error) => error.hint(),
            Self::InBand(error) => error.hint(),
            Self::Malformed { .. } => Some(Cow::Borrowed(MALFORMED)),
            Self::Cut => Some(Cow::Borrowed(cut)),
        }
    }

    /// The body error's variant, else the view's own.
    pub(super) fn variant(&self) -> &'static str
    where
        E: Classify,
    {
        match self {
            Self::Sse(error) => error.variant(),
            Self::Malformed { .. } => "Malformed",
            Self::InBand(_) => "InBand",
            Self::Cut => "Cut",
        }
    }

    /// The error every method not written is forwarded to: the event
    /// stream's, or the in-band one.
    pub(super) fn inner(&self) -> Option<&'a dyn Classify>
    where
        E: Classify,
    {
        match *self {
            Self::Sse(error) => Some(error),
            Self::InBand(error) => Some(error),
            Self::Malformed { .. } | Self::Cut => None,
        }
    }
}

/// An in-band error whose text is `data`, as the body of an [`HttpError`]
/// whose status is `code` (one `http` holds).
pub(super) fn in_band_error(code: u16, data: &str) -> HttpError {
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    HttpError::new(status).with_body(data.as_bytes())
}

/// `data` as a JSON object, or what is wrong with it (and how it begins).
pub(super) fn json_object(data: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(data) {
        Ok(Value::Object(root)) => Ok(root),
        Ok(_) => Err(format!("not a JSON object: {}", quoted(data))),
        Err(error) => Err(format!("not JSON ({error}): {}", quoted(data))),
    }
}

/// The first bytes of `data`, quoted, cut at a character's boundary: what
/// an error says of an event, never all of a large one.
fn quoted(data: &str) -> String {
    const SHOWN: usize = 64;
    let mut end = data.len().min(SHOWN);
    while !data.is_char_boundary(end) {
        end -= 1;
    }
    let more = if end < data.len() { "..." } else { "" };
    format!("{:?}{more}", &data[..end])
}

/// Whether a delta (OpenAI's, or Anthropic's) carries output: a field
/// other than its `role` or `type` that is a string, array or object
/// and not empty.
pub(super) fn carries_output(delta: &Value) -> bool {
    let Some(delta) = delta.as_object() else {
        return false;
    };
    delta
        .iter()
        .filter(|(key, _)| !matches!(key.as_str(), "role" | "type"))
        .any(|(_, value)| match value {
            Value::String(text) => !text.is_empty(),
            Value::Array(items) => !items.is_empty(),
            Value::Object(fields) => !fields.is_empty(),
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        })
}

/// A token count: a JSON number as a `u64`, saturating (a negative count
/// is 0, one past `u64::MAX` is `u64::MAX`, a fraction is cut); anything
/// else, or nothing, 0.
pub(super) fn count(value: Option<&Value>) -> u64 {
    let Some(Value::Number(number)) = value else {
        return 0;
    };
    number
        .as_u64()
        // `as` saturates, from a float to an integer.
        .or_else(|| number.as_f64().map(|float| float as u64))
        // A number no `f64` holds, with serde_json's `arbitrary_precision`.
        .unwrap_or_else(|| {
            if number.to_string().starts_with('-') {
                0
            } else {
                u64::MAX
            }
        })
}

/// A count of an event's JSON, present and a number: an `index`.
pub(super) fn index(value: Option<&Value>) -> Option<u64> {
    value
        .filter(|index| index.is_number())
        .map(|index| count(Some(index)))
}
