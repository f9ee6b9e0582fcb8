//! Anthropic's streamed messages (`"stream": true`) as typed items:
//! [`events`] reads the body of a `/v1/messages` response (reqwest's
//! `bytes_stream()`, or any `Stream` of byte chunks) as a stream of
//! [`Event`]s, each of which tells a retried stream what it is
//! ([`StreamItem::kind`]) and its consumer the text it delivers and the
//! tokens it reports; and ends with an [`Error`] when the body fails, an
//! event cannot be read, the provider sends an error, or the stream ends
//! before `message_stop`.
//!
//! | the event | [`kind`](StreamItem::kind) | what the [`Event`] says |
//! |---|---|---|
//! | `message_start` | `Preamble` | [`model`](Event::model), [`message_id`](Event::message_id), [`usage`](Event::usage): the input tokens |
//! | `content_block_start` | `Preamble` (`Content` for a text block that starts with text) | [`index`](Event::index) |
//! | `content_block_delta` | `Content` (`Preamble` for an empty delta: a tool call's first `"partial_json": ""`) | [`text`](Event::text) of a `text_delta`; a `thinking_delta`, `input_json_delta`, `signature_delta` is content without text |
//! | `content_block_stop` | `Preamble` | [`index`](Event::index) |
//! | `message_delta` | `Preamble` | [`stop_reason`](Event::stop_reason), [`usage`](Event::usage): the output tokens |
//! | `message_stop` | `Content` | [`is_finish`](Event::is_finish); the stream ends after it |
//! | `ping`, an SSE comment | `Keepalive` | nothing |
//! | an event of a type not listed here (Anthropic adds some) | `Preamble` | [`event_type`](Event::event_type), [`data`](Event::data) |
//! | `error` (`{"type": "error", "error": {"type": "overloaded_error", ...}}`) | — | [`Error::InBand`], classified by [`HttpError`]'s presets: `overloaded_error` is `Transient` and says the provider is overloaded |
//! | a listed event whose data is not a JSON object | — | [`Error::Malformed`], `Transient` |
//! | the end of the body before `message_stop` | — | [`Error::Cut`], `Transient` |
//!
//! An event's type is its SSE `event` field, else (a server that names
//! none) its data's `type`.
//!
//! **Usage**: `message_start` reports the input tokens, all of them
//! (`input_tokens` + `cache_creation_input_tokens` +
//! `cache_read_input_tokens`, as OpenAI's `prompt_tokens` counts cached
//! ones), with an output of 0; `message_delta` reports the output tokens
//! (its `output_tokens`, the answer's total), with an input of 0. So the
//! [sum](Usage::add) of a message's usages is its usage.
//!
//! Metadata is a preamble, so a retried stream (see
//! [`tenacious::stream`](crate::stream)) holds it until the first content
//! and shows it once: `message_start` and the first `content_block_start`
//! reach the consumer with the first delta, and after content the rest
//! are delivered as they come. In an answer with no content at all (a
//! refusal before the first token) they are held until `message_stop`,
//! which is content: it completes the answer, so the consumer sees it,
//! and a stream cut before it is retried whole. After `message_stop` the
//! stream ends, without reading the body further; after an error too,
//! which is the last item.
//!
//! A hostile or broken server cannot make it panic: counts past `u64`
//! saturate (a negative one is 0), a missing or mistyped field is `None`
//! (or 0 in a [`Usage`]), bytes that are not UTF-8 are replaced (see
//! [`sse`](super::sse)), and a JSON number past what an `f64` holds
//! (`1e400`) makes its event [`Malformed`](Error::Malformed).
//!
//! ```
//! use std::convert::Infallible;
//! use futures_util::StreamExt;
//! use tenacious::sse::anthropic::{self, Event};
//! use tenacious::stream::{ItemKind, StreamItem, Usage};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let body = concat!(
//!     "event: message_start\n",
//!     r#"data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"usage":{"input_tokens":25,"cache_read_input_tokens":100,"output_tokens":1}}}"#, "\n\n",
//!     "event: content_block_start\n",
//!     r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#, "\n\n",
//!     "event: ping\ndata: {\"type\": \"ping\"}\n\n",
//!     "event: content_block_delta\n",
//!     r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#, "\n\n",
//!     "event: content_block_delta\n",
//!     r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}"#, "\n\n",
//!     "event: content_block_stop\n",
//!     r#"data: {"type":"content_block_stop","index":0}"#, "\n\n",
//!     "event: message_delta\n",
//!     r#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}"#, "\n\n",
//!     "event: message_stop\n",
//!     r#"data: {"type":"message_stop"}"#, "\n\n",
//! );
//! let events: Vec<Event> = anthropic::events(futures_util::stream::iter([Ok::<_, Infallible>(body)]))
//!     .map(|event| event.unwrap())
//!     .collect()
//!     .await;
//! let kinds: Vec<ItemKind> = events.iter().map(StreamItem::kind).collect();
//! use ItemKind::{Content, Keepalive, Preamble};
//! assert_eq!(kinds, [Preamble, Preamble, Keepalive, Content, Content, Preamble, Preamble, Content]);
//! assert_eq!(events.iter().filter_map(Event::text).collect::<String>(), "Hello");
//! assert_eq!(events.iter().filter_map(Event::usage).sum::<Usage>(), Usage::new(125, 2));
//! assert_eq!(events[0].model(), Some("claude-sonnet-4-5"));
//! assert_eq!(events[6].stop_reason(), Some("end_turn"));
//! assert!(events[7].is_finish());
//! # }
//! ```
//!
//! Under a retried stream, an in-band `overloaded_error` before the first
//! token is retried as a 529 would be:
//!
//! ```no_run
//! use std::time::Duration;
//! use futures_util::StreamExt;
//! use tenacious::sse::anthropic;
//! use tenacious::stream::{Stream, StreamItem};
//! use tenacious::{Classify, Elapsed, HttpError, Policy};
//!
//! #[derive(Debug, Classify)]
//! enum ChatError {
//!     #[classify(transparent)]
//!     Connect(reqwest::Error),                   // refused, reset before the head
//!     #[classify(transparent)]
//!     Status(HttpError),                         // 429, 529, a 400 with its body
//!     #[classify(transparent)]
//!     Stream(anthropic::Error<reqwest::Error>),  // a cut body, `event: error`, no message_stop
//!     #[classify(transparent)]
//!     Stalled(Elapsed),                          // `first_item`, `idle`, the deadline
//! }
//! impl From<Elapsed> for ChatError {
//!     fn from(elapsed: Elapsed) -> Self { ChatError::Stalled(elapsed) }
//! }
//!
//! async fn open(client: &reqwest::Client, request: &str)
//!     -> Result<impl Stream<Item = Result<anthropic::Event, ChatError>> + use<>, ChatError> {
//!     let response = client
//!         .post("https://api.anthropic.com/v1/messages")
//!         .header("anthropic-version", "2023-06-01")
//!         .body(request.to_owned())
//!         .send()
//!         .await
//!         .map_err(ChatError::Connect)?;
//!     if !response.status().is_success() {
//!         return Err(ChatError::Status(HttpError::read(response).await));
//!     }
//!     Ok(anthropic::events(response.bytes_stream()).map(|event| event.map_err(ChatError::Stream)))
//! }
//!
//! const POLICY: Policy = Policy::new().first_item(Duration::from_secs(20)).idle(Duration::from_secs(30));
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let client = reqwest::Client::new();
//! let request = r#"{"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": true,
//!                   "messages": [{"role": "user", "content": "Hello"}]}"#;
//! let mut events = std::pin::pin!(POLICY.stream(|_| open(&client, request)));
//! while let Some(event) = events.next().await {
//!     match event {
//!         Ok(event) => print!("{}", event.text().unwrap_or_default()),
//!         Err(failure) => eprintln!("{failure:?}"),
//!     }
//! }
//! # }
//! ```
use std::borrow::Cow;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_core::Stream;
use pin_project_lite::pin_project;
use serde_json::{Map, Value};

use super::openai::{MALFORMED, carries_output, count, in_band_display, json_object, status};
use super::{SseError, SseEvent, SseItem, SseStream, sse};
use crate::stream::{ItemKind, StreamItem, Usage};
use crate::{Classify, ErrorClass, HttpError};

/// The event types this module reads, whose data must be a JSON object.
const KNOWN: [&str; 7] = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "error",
];

/// One event of Anthropic's messages stream (see the [module docs](self)
/// for what each is).
///
/// ```
/// use std::convert::Infallible;
/// use futures_util::StreamExt;
/// use tenacious::sse::anthropic;
/// use tenacious::stream::{ItemKind, StreamItem};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let body = concat!(
///     "id: 4\nevent: content_block_delta\n",
///     r#"data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#,
///     "\n\n",
/// );
/// let mut events = anthropic::events(futures_util::stream::iter([Ok::<_, Infallible>(body)]));
/// let event = events.next().await.unwrap().unwrap();
/// assert_eq!((event.kind(), event.text(), event.id()), (ItemKind::Content, Some("Hi"), Some("4")));
/// assert_eq!((event.event_type(), event.index()), ("content_block_delta", Some(1)));
/// assert!(!event.is_finish());
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    event_type: String,
    kind: ItemKind,
    /// The SSE id.
    event_id: Option<String>,
    /// The event's data, as sent.
    data: String,
    text: Option<String>,
    stop_reason: Option<String>,
    model: Option<String>,
    message_id: Option<String>,
    index: Option<u64>,
    usage: Option<Usage>,
}

impl Event {
    /// An event with nothing but its type, kind, SSE id and data.
    fn bare(event_type: String, kind: ItemKind, event_id: Option<String>, data: String) -> Self {
        Self {
            event_type,
            kind,
            event_id,
            data,
            text: None,
            stop_reason: None,
            model: None,
            message_id: None,
            index: None,
            usage: None,
        }
    }

    /// The event's type: `message_start`, `content_block_delta`, `ping`,
    /// ... (its SSE `event` field, else its data's `type`); empty for an
    /// SSE comment.
    #[must_use]
    pub fn event_type(&self) -> &str {
        &self.event_type
    }

    /// The text this event delivers: a `text_delta`'s `text` (or a text
    /// block's that starts with some), when it is not empty.
    #[must_use]
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The tokens this event reports (a count missing or not a number is
    /// 0): `message_start`'s input tokens, cached or not, and
    /// `message_delta`'s output tokens (see the [module docs](self),
    /// "Usage"); `None` for every other event.
    #[must_use]
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// Why the message ended (`"end_turn"`, `"max_tokens"`,
    /// `"stop_sequence"`, `"tool_use"`, `"refusal"`): `message_delta`'s
    /// `delta.stop_reason`.
    #[must_use]
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }

    /// The model that answers (`"claude-sonnet-4-5-20250929"`):
    /// `message_start`'s `message.model`.
    #[must_use]
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The message's id (`"msg_..."`): `message_start`'s `message.id`.
    /// Not its SSE id, which is [`StreamItem::id`].
    #[must_use]
    pub fn message_id(&self) -> Option<&str> {
        self.message_id.as_deref()
    }

    /// The content block a `content_block_*` event is about: its `index`.
    #[must_use]
    pub fn index(&self) -> Option<u64> {
        self.index
    }

    /// The event's data as sent (its JSON; empty for an SSE comment), for
    /// what the accessors do not read (a tool call's `partial_json`, a
    /// thinking block).
    #[must_use]
    pub fn data(&self) -> &str {
        &self.data
    }

    /// Whether this is `message_stop`, the end of the message: the last
    /// item of [`Events`].
    #[must_use]
    pub fn is_finish(&self) -> bool {
        self.event_type == "message_stop"
    }
}

/// Its kind as the [module docs](self) say; its SSE id; its text and
/// usage; its size counts its strings.
impl StreamItem for Event {
    fn kind(&self) -> ItemKind {
        self.kind
    }

    fn id(&self) -> Option<&str> {
        self.event_id.as_deref()
    }

    fn size(&self) -> usize {
        let strings = [
            &self.event_id,
            &self.text,
            &self.stop_reason,
            &self.model,
            &self.message_id,
        ]
        .into_iter()
        .flatten()
        .fold(
            self.data.len().saturating_add(self.event_type.len()),
            |sum, text| sum.saturating_add(text.len()),
        );
        std::mem::size_of_val(self).saturating_add(strings)
    }

    fn usage(&self) -> Option<Usage> {
        self.usage
    }

    fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }
}

/// Why a stream of [`Events`] ended with an error: its last item.
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
/// own that does (see the [module docs](self)).
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

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sse(error) => write!(f, "Anthropic stream: {error}"),
            Self::Malformed { event, reason } => {
                write!(f, "Anthropic stream: a malformed `{event}` event: {reason}")
            }
            Self::InBand(error) => {
                f.write_str("Anthropic stream: an error event")?;
                in_band_display(error, f)
            }
            Self::Cut => f.write_str("Anthropic stream: the body ended before `message_stop`"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for Error<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Sse(error) => Some(error),
            Self::InBand(error) => Some(error),
            Self::Malformed { .. } | Self::Cut => None,
        }
    }
}

/// As the table on [`Error`] says; every method not written here is the
/// body's error's (for [`Sse`](Error::Sse)) or the [`HttpError`]'s (for
/// [`InBand`](Error::InBand)): its hint, signals (an overloaded provider),
/// [`rejected`](Classify::rejected).
impl<E: Classify> Classify for Error<E> {
    fn classify(&self) -> ErrorClass {
        match self {
            Self::Sse(error) => error.classify(),
            Self::InBand(error) => error.classify(),
            Self::Malformed { .. } | Self::Cut => ErrorClass::Transient,
        }
    }

    fn hint(&self) -> Option<Cow<'static, str>> {
        match self {
            Self::Sse(error) => error.hint(),
            Self::InBand(error) => error.hint(),
            Self::Malformed { .. } => Some(Cow::Borrowed(MALFORMED)),
            Self::Cut => Some(Cow::Borrowed(
                "the stream ended before `message_stop`: the answer is incomplete; trying again \
                 may complete it",
            )),
        }
    }

    fn variant(&self) -> &'static str {
        match self {
            Self::Sse(error) => error.variant(),
            Self::Malformed { .. } => "Malformed",
            Self::InBand(_) => "InBand",
            Self::Cut => "Cut",
        }
    }

    fn inner(&self) -> Option<&dyn Classify> {
        match self {
            Self::Sse(error) => Some(error),
            Self::InBand(error) => Some(error),
            Self::Malformed { .. } | Self::Cut => None,
        }
    }
}

pin_project! {
    /// The stream of [`events`]: `Result<Event, Error<E>>`, ending after
    /// `message_stop` or after its first error.
    #[derive(Debug)]
    #[must_use = "streams do nothing unless polled"]
    pub struct Events<S> {
        #[pin]
        items: S,
        done: bool,
    }
}

/// Reads Anthropic's messages stream from `body`, a stream of byte chunks
/// (reqwest's `bytes_stream()`): the events of [`sse`] as [`Event`]s (see
/// the [module docs](self)).
pub fn events<S, B, E>(body: S) -> Events<SseStream<S>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    Events::from_sse(sse(body))
}

impl<S> Events<S> {
    /// Reads Anthropic's messages stream from `items`, a stream of parsed
    /// events: [`sse`]'s, with a bound of its own ([`SseStream::max_len`]),
    /// or any stream of the same items.
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use futures_util::StreamExt;
    /// use tenacious::sse::{anthropic, sse};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let body = futures_util::stream::iter([Ok::<_, Infallible>("event: message_stop\ndata: {}\n\n")]);
    /// let mut events = anthropic::Events::from_sse(sse(body).max_len(1 << 16));
    /// assert!(events.next().await.unwrap().unwrap().is_finish());
    /// assert!(events.next().await.is_none());
    /// # }
    /// ```
    pub fn from_sse(items: S) -> Self {
        Self { items, done: false }
    }

    /// The stream of events it reads (for [`SseStream::last_event_id`]).
    pub fn get_ref(&self) -> &S {
        &self.items
    }
}

impl<S, E> Stream for Events<S>
where
    S: Stream<Item = Result<SseItem, SseError<E>>>,
{
    type Item = Result<Event, Error<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.project();
        if *this.done {
            return Poll::Ready(None);
        }
        let item = match ready!(this.items.poll_next(cx)) {
            None => Err(Error::Cut),
            Some(Err(error)) => Err(Error::Sse(error)),
            Some(Ok(SseItem::Comment(_))) => Ok(Event::bare(
                String::new(),
                ItemKind::Keepalive,
                None,
                String::new(),
            )),
            Some(Ok(SseItem::Event(event))) => decode(event),
        };
        // After `message_stop` or an error, nothing more is read.
        *this.done = !matches!(&item, Ok(event) if !event.is_finish());
        Poll::Ready(Some(item))
    }
}

/// One event as an [`Event`], or as the error it is.
fn decode<E>(event: SseEvent) -> Result<Event, Error<E>> {
    let SseEvent {
        event: name,
        data,
        id,
        ..
    } = event;
    if name == "ping" {
        return Ok(Event::bare(name, ItemKind::Keepalive, id, data));
    }
    let parsed = json_object(&data);
    // Its type: the SSE event's, else (none named) its data's.
    let event_type = match &parsed {
        Ok(root) if name == "message" => root
            .get("type")
            .and_then(Value::as_str)
            .map_or(name, str::to_owned),
        _ => name,
    };
    if event_type == "ping" {
        return Ok(Event::bare(event_type, ItemKind::Keepalive, id, data));
    }
    let root = match parsed {
        Ok(root) => root,
        Err(reason) if event_type == "message" || KNOWN.contains(&event_type.as_str()) => {
            return Err(Error::Malformed {
                event: event_type,
                reason,
            });
        }
        // A type this module does not read: its data is its own affair.
        Err(_) => return Ok(Event::bare(event_type, ItemKind::Preamble, id, data)),
    };
    let text = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    };
    let index = root
        .get("index")
        .filter(|index| index.is_number())
        .map(|index| count(Some(index)));
    let mut event = Event::bare(String::new(), ItemKind::Preamble, id, String::new());
    match event_type.as_str() {
        "error" => return Err(Error::InBand(in_band(&root, &data))),
        "message_start" => {
            let message = root.get("message");
            let field = |key| message.and_then(|message| message.get(key));
            event.model = text(field("model"));
            event.message_id = text(field("id"));
            event.usage = field("usage").and_then(Value::as_object).map(|usage| {
                let input = [
                    "input_tokens",
                    "cache_creation_input_tokens",
                    "cache_read_input_tokens",
                ]
                .into_iter()
                .fold(0_u64, |sum, key| sum.saturating_add(count(usage.get(key))));
                Usage::new(input, 0)
            });
        }
        "content_block_start" => {
            event.index = index;
            let block = root.get("content_block");
            if block
                .and_then(|block| block.get("type"))
                .and_then(Value::as_str)
                == Some("text")
            {
                event.text = text(block.and_then(|block| block.get("text")));
            }
            if event.text.is_some() {
                event.kind = ItemKind::Content;
            }
        }
        "content_block_delta" => {
            event.index = index;
            let delta = root.get("delta");
            if delta
                .and_then(|delta| delta.get("type"))
                .and_then(Value::as_str)
                == Some("text_delta")
            {
                event.text = text(delta.and_then(|delta| delta.get("text")));
            }
            if delta.is_some_and(carries_output) {
                event.kind = ItemKind::Content;
            }
        }
        "content_block_stop" => event.index = index,
        "message_delta" => {
            event.stop_reason = text(root.get("delta").and_then(|delta| delta.get("stop_reason")));
            event.usage = root
                .get("usage")
                .and_then(Value::as_object)
                .map(|usage| Usage::new(0, count(usage.get("output_tokens"))));
        }
        "message_stop" => event.kind = ItemKind::Content,
        _ => {}
    }
    event.event_type = event_type;
    event.data = data;
    Ok(event)
}

/// The in-band error of `root`, whose text is `data`: an [`HttpError`]
/// with the status Anthropic gives its type.
fn in_band(root: &Map<String, Value>, data: &str) -> HttpError {
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
    HttpError::new(status(code)).with_body(data.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Reject;
    use std::convert::Infallible;

    /// Reads `body` to its end, synchronously (the stream never waits).
    fn read(body: &[u8]) -> Vec<Result<Event, Error<Infallible>>> {
        let body = futures_util::stream::iter([Ok::<_, Infallible>(body)]);
        let mut stream = std::pin::pin!(events(body));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut items = Vec::new();
        loop {
            match stream.as_mut().poll_next(&mut cx) {
                Poll::Ready(Some(item)) => items.push(item),
                Poll::Ready(None) => return items,
                Poll::Pending => unreachable!("an iterator's stream never waits"),
            }
        }
    }

    fn ok(items: Vec<Result<Event, Error<Infallible>>>) -> Vec<Event> {
        items
            .into_iter()
            .map(|item| item.unwrap_or_else(|error| panic!("{error}")))
            .collect()
    }

    fn last_error(items: &[Result<Event, Error<Infallible>>]) -> &Error<Infallible> {
        match items.last() {
            Some(Err(error)) => error,
            other => panic!("not an error: {other:?}"),
        }
    }

    /// `(event, data)` pairs as a body.
    fn body(events: &[(&str, &str)]) -> Vec<u8> {
        events
            .iter()
            .map(|(event, data)| format!("event: {event}\ndata: {data}\n\n"))
            .collect::<String>()
            .into_bytes()
    }

    const START: (&str, &str) = (
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-opus-4-1","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":10,"cache_read_input_tokens":20,"output_tokens":2}}}"#,
    );
    const BLOCK: (&str, &str) = (
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    );
    const PING: (&str, &str) = ("ping", r#"{"type": "ping"}"#);
    const BLOCK_STOP: (&str, &str) = (
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#,
    );
    const DELTA_END: (&str, &str) = (
        "message_delta",
        r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}"#,
    );
    const STOP: (&str, &str) = ("message_stop", r#"{"type":"message_stop"}"#);

    fn text(text: &str) -> String {
        format!(
            r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{text:?}}}}}"#
        )
    }

    #[test]
    fn a_whole_message_its_kinds_text_usage_and_finish() {
        let (a, b) = (text("Hello"), text("!"));
        let events = ok(read(&body(&[
            START,
            BLOCK,
            PING,
            ("content_block_delta", &a),
            ("content_block_delta", &b),
            BLOCK_STOP,
            DELTA_END,
            STOP,
        ])));
        use ItemKind::{Content, Keepalive, Preamble};
        let kinds: Vec<ItemKind> = events.iter().map(StreamItem::kind).collect();
        assert_eq!(
            kinds,
            [
                Preamble, Preamble, Keepalive, Content, Content, Preamble, Preamble, Content
            ]
        );
        assert_eq!(
            events
                .iter()
                .filter_map(StreamItem::text)
                .collect::<String>(),
            "Hello!"
        );
        assert_eq!(events[0].usage(), Some(Usage::new(502, 0)));
        assert_eq!(events[6].usage(), Some(Usage::new(0, 15)));
        let usage: Usage = events.iter().filter_map(StreamItem::usage).sum();
        assert_eq!(usage, Usage::new(502, 15));
        assert_eq!(events[0].model(), Some("claude-opus-4-1"));
        assert_eq!(events[0].message_id(), Some("msg_01"));
        assert_eq!(events[3].index(), Some(0));
        assert_eq!(events[6].stop_reason(), Some("end_turn"));
        assert_eq!(events[7].event_type(), "message_stop");
        assert_eq!(events.iter().filter(|event| event.is_finish()).count(), 1);
        assert!(events[7].is_finish());
        assert!(events[2].data().contains("ping"));
        assert!(events[0].size() > std::mem::size_of::<Event>() + events[0].data().len());
    }

    #[test]
    fn tool_use_and_thinking_deltas_are_content_without_text() {
        let events = ok(read(&body(&[
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"San Fra"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me"}}"#,
            ),
            STOP,
        ])));
        let kinds: Vec<ItemKind> = events.iter().map(StreamItem::kind).collect();
        use ItemKind::{Content, Preamble};
        assert_eq!(kinds, [Preamble, Preamble, Content, Content, Content]);
        assert!(events.iter().all(|event| event.text().is_none()));
        assert_eq!(events[0].index(), Some(1));
    }

    #[test]
    fn the_stream_ends_after_message_stop_without_reading_on() {
        let items = read(&body(&[STOP, ("content_block_delta", "not json")]));
        assert_eq!(items.len(), 1);
        assert!(ok(items)[0].is_finish());
    }

    #[test]
    fn an_end_without_message_stop_is_a_cut_never_a_clean_end() {
        for events in [
            &[][..],
            &[START][..],
            &[START, BLOCK, BLOCK_STOP, DELTA_END][..],
        ] {
            let items = read(&body(events));
            assert_eq!(items.len(), events.len() + 1);
            let cut = last_error(&items);
            assert!(matches!(cut, Error::Cut), "{cut:?}");
            assert_eq!(cut.classify(), ErrorClass::Transient);
            assert_eq!(cut.variant(), "Cut");
            assert!(cut.hint().unwrap().contains("message_stop"));
            assert_eq!(
                cut.to_string(),
                "Anthropic stream: the body ended before `message_stop`"
            );
        }
    }

    #[test]
    fn in_band_errors_are_classified_by_the_presets() {
        let error_event = |kind: &str, message: &str| {
            format!(r#"{{"type": "error", "error": {{"type": {kind:?}, "message": {message:?}}}}}"#)
        };
        let cases = [
            ("overloaded_error", "Overloaded", ErrorClass::Transient, 529),
            (
                "api_error",
                "Internal server error",
                ErrorClass::Transient,
                500,
            ),
            (
                "rate_limit_error",
                "Number of requests",
                ErrorClass::RateLimited,
                429,
            ),
            (
                "invalid_request_error",
                "messages: bad",
                ErrorClass::Invalid,
                400,
            ),
            (
                "authentication_error",
                "invalid x-api-key",
                ErrorClass::Fatal,
                401,
            ),
            ("billing_error", "credit", ErrorClass::Fatal, 402),
            ("timeout_error", "timed out", ErrorClass::Transient, 504),
            ("something_new", "?", ErrorClass::Transient, 500),
        ];
        for (kind, message, class, status) in cases {
            let data = error_event(kind, message);
            let items = read(&body(&[START, ("error", &data), STOP]));
            assert_eq!(items.len(), 2, "the error is the last item");
            let error = last_error(&items);
            let Error::InBand(http) = error else {
                panic!("{error:?}")
            };
            assert_eq!(http.status().as_u16(), status, "{kind}");
            assert_eq!(http.error_type(), Some(kind));
            assert_eq!(error.classify(), class, "{kind}");
            assert_eq!(error.variant(), "InBand");
            assert_eq!(error.signals().is_overloaded(), kind == "overloaded_error");
            assert_eq!(
                error.to_string(),
                format!("Anthropic stream: an error event: {kind}: {message}")
            );
        }
        let data = error_event(
            "invalid_request_error",
            "prompt is too long: 201000 tokens > 200000 maximum",
        );
        let items = read(&body(&[("error", &data)]));
        let error = last_error(&items);
        assert_eq!(error.rejected(), Some(Reject::ContextLength));
        assert!(error.hint().unwrap().contains("context window"));
        // A stream whose events are unnamed: the data's type.
        let items = read(format!("data: {}\n\n", error_event("overloaded_error", "x")).as_bytes());
        assert!(matches!(last_error(&items), Error::InBand(_)));
    }

    #[test]
    fn malformed_events_say_what_failed_and_are_transient() {
        for (event, data, says) in [
            ("message_start", "{\"type\": \"message_start\"", "not JSON"),
            ("content_block_delta", "[]", "not a JSON object"),
            ("error", "overloaded", "not JSON"),
            ("message", "plain text", "not JSON"),
            (
                "message_delta",
                r#"{"usage":{"output_tokens":1e400}}"#,
                "not JSON",
            ),
        ] {
            let items = read(&body(&[(event, data)]));
            assert_eq!(items.len(), 1);
            let error = last_error(&items);
            let Error::Malformed {
                event: named,
                reason,
            } = error
            else {
                panic!("{error:?}")
            };
            assert_eq!(named, event);
            assert!(reason.contains(says), "{reason}");
            assert_eq!(error.classify(), ErrorClass::Transient);
            assert_eq!(error.variant(), "Malformed");
            assert!(error.hint().is_some());
        }
        // A type this module does not read passes, whatever its data.
        let events = ok(read(&body(&[
            ("brand_new_event", "not json"),
            ("ping", "no json either"),
            STOP,
        ])));
        assert_eq!(events[0].kind(), ItemKind::Preamble);
        assert_eq!(
            (events[0].event_type(), events[0].data()),
            ("brand_new_event", "not json")
        );
        assert_eq!(events[1].kind(), ItemKind::Keepalive);
    }

    #[test]
    fn hostile_numbers_and_missing_fields_never_panic() {
        let start = |usage: &str| {
            let data = format!(r#"{{"type":"message_start","message":{{"usage":{usage}}}}}"#);
            let events = ok(read(&body(&[("message_start", &data), STOP])));
            events[0].usage()
        };
        assert_eq!(
            start(
                r#"{"input_tokens":18446744073709551615,"cache_read_input_tokens":18446744073709551615}"#
            ),
            Some(Usage::new(u64::MAX, 0))
        );
        assert_eq!(
            start(r#"{"input_tokens":1e300,"cache_creation_input_tokens":-4}"#),
            Some(Usage::new(u64::MAX, 0))
        );
        assert_eq!(start(r#"{"input_tokens":"7"}"#), Some(Usage::default()));
        assert_eq!(start("null"), None);
        let delta = |usage: &str| {
            let data = format!(r#"{{"type":"message_delta","usage":{usage}}}"#);
            ok(read(&body(&[("message_delta", &data), STOP])))[0].usage()
        };
        assert_eq!(
            delta(&format!(r#"{{"output_tokens":{}}}"#, "9".repeat(300))),
            Some(Usage::new(0, u64::MAX))
        );
        assert_eq!(delta(r#"{"output_tokens":-1}"#), Some(Usage::new(0, 0)));
        // Every type with its fields missing or of the wrong type.
        for (event, data) in [
            ("message_start", "{}"),
            ("message_start", r#"{"message":"msg"}"#),
            (
                "message_start",
                r#"{"message":{"model":7,"id":null,"usage":[]}}"#,
            ),
            (
                "content_block_start",
                r#"{"index":"0","content_block":null}"#,
            ),
            (
                "content_block_start",
                r#"{"content_block":{"type":"text","text":5}}"#,
            ),
            ("content_block_delta", "{}"),
            ("content_block_delta", r#"{"delta":"text"}"#),
            (
                "content_block_delta",
                r#"{"delta":{"type":"text_delta","text":""}}"#,
            ),
            ("content_block_stop", "{}"),
            ("message_delta", r#"{"delta":null,"usage":"lots"}"#),
        ] {
            let events = ok(read(&body(&[(event, data), STOP])));
            let event_read = &events[0];
            assert_eq!(event_read.kind(), ItemKind::Preamble, "{event}: {data}");
            assert_eq!(
                (
                    event_read.text(),
                    event_read.usage(),
                    event_read.model(),
                    event_read.stop_reason(),
                    event_read.index()
                ),
                (None, None, None, None, None),
                "{event}: {data}"
            );
        }
        let index = ok(read(&body(&[
            ("content_block_stop", r#"{"index":1e30}"#),
            STOP,
        ])));
        assert_eq!(index[0].index(), Some(u64::MAX));
        // An error event of no known shape: a 500.
        let items = read(&body(&[("error", "{}")]));
        let Error::InBand(http) = last_error(&items) else {
            panic!()
        };
        assert_eq!(http.status().as_u16(), 500);
    }

    #[test]
    fn bytes_that_are_not_utf8_are_replaced_or_malformed() {
        let events = ok(read(
            b"event: content_block_delta\ndata: {\"delta\":{\"type\":\"text_delta\",\"text\":\"\xF0\x9F\"}}\n\nevent: message_stop\ndata: {}\n\n",
        ));
        assert_eq!(events[0].text(), Some("\u{FFFD}"));
        let items = read(b"event: message_start\ndata: \xC3{}\n\n");
        assert!(matches!(last_error(&items), Error::Malformed { .. }));
        // In the event's name.
        let items = read(b"event: \xFFping\ndata: {}\n\nevent: message_stop\ndata: {}\n\n");
        assert_eq!(ok(items)[0].event_type(), "\u{FFFD}ping");
    }

    #[test]
    fn ids_comments_and_the_body_s_errors() {
        let read_back = ok(read(
            b": hello\n\nid: 9\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ));
        assert_eq!(
            (
                read_back[0].kind(),
                read_back[0].event_type(),
                read_back[0].id()
            ),
            (ItemKind::Keepalive, "", None)
        );
        assert_eq!(read_back[1].id(), Some("9"));

        let body = futures_util::stream::iter([
            Ok(&b"event: ping\ndata: {}\n\n"[..]),
            Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
            Ok(&b"event: message_stop\ndata: {}\n\n"[..]),
        ]);
        let mut stream = std::pin::pin!(events(body));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        assert!(matches!(
            stream.as_mut().poll_next(&mut cx),
            Poll::Ready(Some(Ok(_)))
        ));
        let Poll::Ready(Some(Err(error))) = stream.as_mut().poll_next(&mut cx) else {
            panic!("not the body's error")
        };
        assert_eq!(error.classify(), ErrorClass::Transient);
        assert_eq!(error.variant(), "ConnectionReset");
        assert!(
            error
                .to_string()
                .starts_with("Anthropic stream: event stream: ")
        );
        assert!(matches!(
            stream.as_mut().poll_next(&mut cx),
            Poll::Ready(None)
        ));
    }
}
