//! OpenAI's streamed chat completions (`"stream": true`) as typed items:
//! [`chunks`] reads the body of a `/v1/chat/completions` response
//! (reqwest's `bytes_stream()`, or any `Stream` of byte chunks) as a
//! stream of [`Chunk`]s, each of which tells a retried stream what it is
//! ([`StreamItem::kind`]) and its consumer the text it delivers and the
//! tokens it reports; and ends with an [`Error`] when the body fails, an
//! event cannot be read, the provider sends an error, or the stream ends
//! before `data: [DONE]`.
//!
//! | the event | [`kind`](StreamItem::kind) | what the [`Chunk`] says |
//! |---|---|---|
//! | a chunk whose delta carries output: `content`, `tool_calls`, `refusal`, or any field but `role` that is not empty | `Content` | [`text`](Chunk::text): the first choice's `delta.content` |
//! | a chunk of metadata: only a `role` (the first chunk), an empty delta, a `finish_reason` alone, no choices (the usage chunk of `stream_options.include_usage`, Azure's `prompt_filter_results`) | `Preamble` | [`role`](Chunk::role), [`finish_reason`](Chunk::finish_reason), [`usage`](Chunk::usage) |
//! | `data: [DONE]` | `Content` | [`is_finish`](Chunk::is_finish); the stream ends after it |
//! | an SSE comment (`: keep-alive`), an `event: ping` | `Keepalive` | nothing |
//! | `{"error": {...}}` as an event's data, or any `event: error` | — | [`Error::InBand`], classified by [`HttpError`]'s presets |
//! | data that is not a JSON object | — | [`Error::Malformed`], `Transient` |
//! | the end of the body before `[DONE]` | — | [`Error::Cut`], `Transient` |
//!
//! A chunk's [`model`](Chunk::model) and [`completion_id`](Chunk::completion_id)
//! are its `model` and `id`, and [`data`](Chunk::data) its JSON as sent,
//! for what the accessors do not read (a tool call's arguments, logprobs).
//!
//! Metadata is a preamble, so a retried stream (see
//! [`tenacious::stream`](crate::stream)) holds it until the first content
//! and shows it once: after content (the usual case) the finish and usage
//! chunks are delivered as they come; in an answer with no content at all
//! (a `content_filter` finish) they are held until `[DONE]`, which is
//! content: it completes the answer, so the consumer sees it, and a stream
//! cut before it is retried whole. After `[DONE]` the stream ends, without
//! reading the body further; after an error too, which is the last item.
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
//! use tenacious::sse::openai::{self, Chunk};
//! use tenacious::stream::{ItemKind, StreamItem, Usage};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let body = concat!(
//!     r#"data: {"id":"chatcmpl-1","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#, "\n\n",
//!     ": keep-alive\n\n",
//!     r#"data: {"id":"chatcmpl-1","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}],"usage":null}"#, "\n\n",
//!     r#"data: {"id":"chatcmpl-1","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}],"usage":null}"#, "\n\n",
//!     r#"data: {"id":"chatcmpl-1","model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}"#, "\n\n",
//!     r#"data: {"id":"chatcmpl-1","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#, "\n\n",
//!     "data: [DONE]\n\n",
//! );
//! let chunks: Vec<Chunk> = openai::chunks(futures_util::stream::iter([Ok::<_, Infallible>(body)]))
//!     .map(|chunk| chunk.unwrap())
//!     .collect()
//!     .await;
//! let kinds: Vec<ItemKind> = chunks.iter().map(StreamItem::kind).collect();
//! use ItemKind::{Content, Keepalive, Preamble};
//! assert_eq!(kinds, [Preamble, Keepalive, Content, Content, Preamble, Preamble, Content]);
//! assert_eq!(chunks[0].role(), Some("assistant"));
//! assert_eq!(chunks.iter().filter_map(Chunk::text).collect::<String>(), "Hello");
//! assert_eq!(chunks[4].finish_reason(), Some("stop"));
//! assert_eq!(chunks.iter().filter_map(Chunk::usage).sum::<Usage>(), Usage::new(9, 2));
//! assert_eq!(chunks[2].model(), Some("gpt-4o"));
//! assert!(chunks[6].is_finish());
//! # }
//! ```
//!
//! Under a retried stream: the provider's error type wrapped in one of
//! your own, which adds the stream's timers and what happens before the
//! body (a connection refused, a status other than 200).
//!
//! ```no_run
//! use std::time::Duration;
//! use futures_util::StreamExt;
//! use tenacious::sse::openai;
//! use tenacious::stream::{Stream, StreamItem};
//! use tenacious::{Classify, Elapsed, HttpError, Policy};
//!
//! #[derive(Debug, Classify)]
//! enum ChatError {
//!     #[classify(transparent)]
//!     Connect(reqwest::Error),                  // refused, reset before the head
//!     #[classify(transparent)]
//!     Status(HttpError),                        // 429, 529, a 400 with its body
//!     #[classify(transparent)]
//!     Stream(openai::Error<reqwest::Error>),    // a cut body, an error event, no [DONE]
//!     #[classify(transparent)]
//!     Stalled(Elapsed),                         // `first_item`, `idle`, the deadline
//! }
//! impl From<Elapsed> for ChatError {
//!     fn from(elapsed: Elapsed) -> Self { ChatError::Stalled(elapsed) }
//! }
//!
//! async fn open(client: &reqwest::Client, request: &str)
//!     -> Result<impl Stream<Item = Result<openai::Chunk, ChatError>> + use<>, ChatError> {
//!     let response = client
//!         .post("https://api.openai.com/v1/chat/completions")
//!         .body(request.to_owned())
//!         .send()
//!         .await
//!         .map_err(ChatError::Connect)?;
//!     if !response.status().is_success() {
//!         return Err(ChatError::Status(HttpError::read(response).await));
//!     }
//!     Ok(openai::chunks(response.bytes_stream()).map(|chunk| chunk.map_err(ChatError::Stream)))
//! }
//!
//! const POLICY: Policy = Policy::new().first_item(Duration::from_secs(20)).idle(Duration::from_secs(30));
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let client = reqwest::Client::new();
//! let request = r#"{"model": "gpt-4o", "stream": true, "stream_options": {"include_usage": true},
//!                   "messages": [{"role": "user", "content": "Hello"}]}"#;
//! let mut chunks = std::pin::pin!(POLICY.stream(|_| open(&client, request)));
//! while let Some(chunk) = chunks.next().await {
//!     match chunk {
//!         Ok(chunk) => print!("{}", chunk.text().unwrap_or_default()),
//!         Err(failure) => eprintln!("{failure:?}"), // its last error, a cut or an error event
//!     }
//! }
//! # }
//! ```
use std::borrow::Cow;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use ::http::StatusCode;
use futures_core::Stream;
use pin_project_lite::pin_project;
use serde_json::{Map, Value};

use super::{SseError, SseEvent, SseItem, SseStream, sse};
use crate::stream::{ItemKind, StreamItem, Usage};
use crate::{Classify, ErrorClass, HttpError};

/// The data of the event that ends the stream.
const DONE: &str = "[DONE]";

/// One item of OpenAI's chat-completions stream: a chunk of the
/// completion, the `[DONE]` that ends it, or a keepalive (see the
/// [module docs](self) for what each is).
///
/// ```
/// use std::convert::Infallible;
/// use futures_util::StreamExt;
/// use tenacious::sse::openai;
/// use tenacious::stream::{ItemKind, StreamItem};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let body = "id: 7\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n";
/// let mut chunks = openai::chunks(futures_util::stream::iter([Ok::<_, Infallible>(body)]));
/// let chunk = chunks.next().await.unwrap().unwrap();
/// assert_eq!((chunk.kind(), chunk.text(), chunk.id()), (ItemKind::Content, Some("Hi"), Some("7")));
/// assert_eq!(chunk.index(), Some(0));
/// assert_eq!(chunk.finish_reason(), None);
/// assert!(!chunk.is_finish());
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    kind: ItemKind,
    finish: bool,
    /// The SSE id.
    event_id: Option<String>,
    /// The event's data, as sent.
    data: String,
    text: Option<String>,
    role: Option<String>,
    finish_reason: Option<String>,
    model: Option<String>,
    completion_id: Option<String>,
    index: Option<u64>,
    usage: Option<Usage>,
}

impl Chunk {
    /// A chunk with nothing but its kind and SSE id.
    fn bare(kind: ItemKind, event_id: Option<String>) -> Self {
        Self {
            kind,
            finish: false,
            event_id,
            data: String::new(),
            text: None,
            role: None,
            finish_reason: None,
            model: None,
            completion_id: None,
            index: None,
            usage: None,
        }
    }

    /// The text this chunk delivers: its first choice's `delta.content`,
    /// when it is a string and not empty.
    #[must_use]
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The tokens this chunk reports: its `usage` object, `prompt_tokens`
    /// as [`input`](Usage::input) and `completion_tokens` as
    /// [`output`](Usage::output) (a count missing or not a number is 0).
    /// OpenAI sends it once, in the chunk before `[DONE]`, when the request
    /// asks for it (`"stream_options": {"include_usage": true}`); `None`
    /// in every other chunk (`"usage": null`).
    #[must_use]
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// Why the first choice ended (`"stop"`, `"length"`, `"tool_calls"`,
    /// `"content_filter"`): its `finish_reason`, in the last chunk of the
    /// choice; `None` before.
    #[must_use]
    pub fn finish_reason(&self) -> Option<&str> {
        self.finish_reason.as_deref()
    }

    /// The first choice's `delta.role` (`"assistant"`), in the first
    /// chunk of the answer.
    #[must_use]
    pub fn role(&self) -> Option<&str> {
        self.role.as_deref()
    }

    /// The model that answers (`"gpt-4o-2024-08-06"`): the chunk's `model`.
    #[must_use]
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The completion's id (`"chatcmpl-..."`): the chunk's `id`, the same
    /// in every chunk of one completion. Not its SSE id, which is
    /// [`StreamItem::id`].
    #[must_use]
    pub fn completion_id(&self) -> Option<&str> {
        self.completion_id.as_deref()
    }

    /// The index of the chunk's first choice (0 unless the request asked
    /// for `n` > 1 choices).
    #[must_use]
    pub fn index(&self) -> Option<u64> {
        self.index
    }

    /// The event's data as sent: the chunk's JSON (`"[DONE]"` for the
    /// finish, empty for a keepalive), for what the accessors do not read.
    #[must_use]
    pub fn data(&self) -> &str {
        &self.data
    }

    /// Whether this is `data: [DONE]`, the end of the stream: the last
    /// item of [`Chunks`].
    #[must_use]
    pub fn is_finish(&self) -> bool {
        self.finish
    }
}

/// Its kind as the [module docs](self) say; its SSE id; its text and
/// usage; its size counts its strings.
impl StreamItem for Chunk {
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
            &self.role,
            &self.finish_reason,
            &self.model,
            &self.completion_id,
        ]
        .into_iter()
        .flatten()
        .fold(self.data.len(), |sum, text| sum.saturating_add(text.len()));
        std::mem::size_of_val(self).saturating_add(strings)
    }

    fn usage(&self) -> Option<Usage> {
        self.usage
    }

    fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }
}

/// Why a stream of [`Chunks`] ended with an error: its last item.
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
/// own that does (see the [module docs](self)).
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

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sse(error) => write!(f, "OpenAI stream: {error}"),
            Self::Malformed { event, reason } => {
                write!(f, "OpenAI stream: a malformed `{event}` event: {reason}")
            }
            Self::InBand(error) => {
                f.write_str("OpenAI stream: an error event")?;
                in_band_display(error, f)
            }
            Self::Cut => f.write_str("OpenAI stream: the body ended before `data: [DONE]`"),
        }
    }
}

/// What an in-band error says: its code (or type) and message, each after
/// a colon.
pub(super) fn in_band_display(error: &HttpError, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if let Some(name) = error.error_code().or(error.error_type()) {
        write!(f, ": {name}")?;
    }
    if let Some(message) = error.error_message() {
        write!(f, ": {message}")?;
    }
    Ok(())
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

/// Hint of a malformed event, shared with the Anthropic stream.
pub(super) const MALFORMED: &str =
    "the provider sent an event this client cannot read; trying again may get one it can";

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
                "the stream ended before `[DONE]`: the answer is incomplete; trying again may \
                 complete it",
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
    /// The stream of [`chunks`]: `Result<Chunk, Error<E>>`, ending after
    /// `[DONE]` or after its first error.
    #[derive(Debug)]
    #[must_use = "streams do nothing unless polled"]
    pub struct Chunks<S> {
        #[pin]
        items: S,
        done: bool,
    }
}

/// Reads OpenAI's chat-completions stream from `body`, a stream of byte
/// chunks (reqwest's `bytes_stream()`): the events of [`sse`] as
/// [`Chunk`]s (see the [module docs](self)).
pub fn chunks<S, B, E>(body: S) -> Chunks<SseStream<S>>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    Chunks::from_sse(sse(body))
}

impl<S> Chunks<S> {
    /// Reads OpenAI's chat-completions stream from `items`, a stream of
    /// parsed events: [`sse`]'s, with a bound of its own
    /// ([`SseStream::max_len`]), or any stream of the same items.
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use futures_util::StreamExt;
    /// use tenacious::sse::{openai, sse, SseError};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let body = futures_util::stream::iter([Ok::<_, Infallible>(&[b'x'; 100][..])]);
    /// let mut chunks = openai::Chunks::from_sse(sse(body).max_len(64));
    /// let Some(Err(openai::Error::Sse(SseError::TooLong { limit: 64 }))) = chunks.next().await else {
    ///     panic!()
    /// };
    /// assert!(chunks.next().await.is_none());
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

impl<S, E> Stream for Chunks<S>
where
    S: Stream<Item = Result<SseItem, SseError<E>>>,
{
    type Item = Result<Chunk, Error<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.project();
        if *this.done {
            return Poll::Ready(None);
        }
        let item = match ready!(this.items.poll_next(cx)) {
            None => Err(Error::Cut),
            Some(Err(error)) => Err(Error::Sse(error)),
            Some(Ok(SseItem::Comment(_))) => Ok(Chunk::bare(ItemKind::Keepalive, None)),
            Some(Ok(SseItem::Event(event))) => decode(event),
        };
        // After `[DONE]` or an error, nothing more is read.
        *this.done = !matches!(&item, Ok(chunk) if !chunk.is_finish());
        Poll::Ready(Some(item))
    }
}

/// One event as a chunk, or as the error it is.
fn decode<E>(event: SseEvent) -> Result<Chunk, Error<E>> {
    let SseEvent {
        event: name,
        data,
        id,
        ..
    } = event;
    if name == "ping" {
        return Ok(Chunk::bare(ItemKind::Keepalive, id));
    }
    if data.trim() == DONE {
        return Ok(Chunk {
            finish: true,
            data,
            ..Chunk::bare(ItemKind::Content, id)
        });
    }
    let root = match json_object(&data) {
        Ok(root) => root,
        Err(reason) => {
            return Err(Error::Malformed {
                event: name,
                reason,
            });
        }
    };
    if name == "error" || root.get("error").is_some_and(|error| !error.is_null()) {
        return Err(Error::InBand(in_band(&root, &data)));
    }
    let choices = root
        .get("choices")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let first = choices.first();
    let delta = first.and_then(|choice| choice.get("delta"));
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_owned);
    let progress = choices
        .iter()
        .any(|choice| choice.get("delta").is_some_and(carries_output));
    let usage = root.get("usage").and_then(Value::as_object).map(|usage| {
        Usage::new(
            count(usage.get("prompt_tokens")),
            count(usage.get("completion_tokens")),
        )
    });
    Ok(Chunk {
        kind: if progress {
            ItemKind::Content
        } else {
            ItemKind::Preamble
        },
        finish: false,
        event_id: id,
        text: text(delta.and_then(|delta| delta.get("content"))).filter(|text| !text.is_empty()),
        role: text(delta.and_then(|delta| delta.get("role"))),
        finish_reason: text(first.and_then(|choice| choice.get("finish_reason"))),
        model: text(root.get("model")),
        completion_id: text(root.get("id")),
        index: first
            .and_then(|choice| choice.get("index"))
            .filter(|index| index.is_number())
            .map(|index| count(Some(index))),
        usage,
        data,
    })
}

/// The in-band error of `root`, whose text is `data`: an [`HttpError`]
/// with the status OpenAI gives its type or code.
fn in_band(root: &Map<String, Value>, data: &str) -> HttpError {
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
    HttpError::new(status(code)).with_body(data.as_bytes())
}

/// The status `code`, which is one `http` holds.
pub(super) fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    /// Reads `body` to its end, synchronously (the stream never waits).
    fn read(body: &[u8]) -> Vec<Result<Chunk, Error<Infallible>>> {
        read_chunks(&[body])
    }

    fn read_chunks(body: &[&[u8]]) -> Vec<Result<Chunk, Error<Infallible>>> {
        let body = futures_util::stream::iter(body.iter().map(|chunk| Ok::<_, Infallible>(*chunk)));
        let mut stream = std::pin::pin!(chunks(body));
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

    fn ok(items: Vec<Result<Chunk, Error<Infallible>>>) -> Vec<Chunk> {
        items
            .into_iter()
            .map(|item| item.unwrap_or_else(|error| panic!("{error}")))
            .collect()
    }

    fn last_error(items: &[Result<Chunk, Error<Infallible>>]) -> &Error<Infallible> {
        match items.last() {
            Some(Err(error)) => error,
            other => panic!("not an error: {other:?}"),
        }
    }

    const ROLE: &str = r#"data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}"#;
    const FINISH: &str = r#"data: {"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}"#;
    const USAGE: &str = r#"data: {"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":0}}}"#;

    fn delta(text: &str) -> String {
        format!(
            r#"data: {{"id":"chatcmpl-9","model":"gpt-4o-mini","choices":[{{"index":0,"delta":{{"content":{text:?}}},"logprobs":null,"finish_reason":null}}],"usage":null}}"#
        )
    }

    fn body(events: &[&str]) -> Vec<u8> {
        events
            .iter()
            .flat_map(|event| [event.as_bytes(), b"\n\n"])
            .flatten()
            .copied()
            .collect()
    }

    #[test]
    fn a_whole_answer_its_kinds_text_usage_and_finish() {
        let (a, b, c) = (delta("The "), delta("answer"), delta("."));
        let chunks = ok(read(&body(&[
            ROLE,
            ": keep-alive",
            &a,
            &b,
            &c,
            FINISH,
            USAGE,
            "data: [DONE]",
        ])));
        let kinds: Vec<ItemKind> = chunks.iter().map(StreamItem::kind).collect();
        use ItemKind::{Content, Keepalive, Preamble};
        assert_eq!(
            kinds,
            [
                Preamble, Keepalive, Content, Content, Content, Preamble, Preamble, Content
            ]
        );
        let text: String = chunks.iter().filter_map(StreamItem::text).collect();
        assert_eq!(text, "The answer.");
        let usage: Usage = chunks.iter().filter_map(StreamItem::usage).sum();
        assert_eq!(usage, Usage::new(12, 3));
        assert_eq!(chunks[0].role(), Some("assistant"));
        assert_eq!(chunks[0].text(), None, "an empty content is no text");
        assert_eq!(chunks[0].model(), Some("gpt-4o-mini"));
        assert_eq!(chunks[0].completion_id(), Some("chatcmpl-9"));
        assert_eq!(chunks[2].index(), Some(0));
        assert_eq!(chunks[5].finish_reason(), Some("stop"));
        assert_eq!(chunks[6].index(), None, "no choices");
        assert!(chunks[7].is_finish() && chunks[7].data() == "[DONE]");
        assert_eq!(chunks.iter().filter(|chunk| chunk.is_finish()).count(), 1);
        assert!(chunks[2].data().starts_with("{\"id\""));
        assert!(chunks[2].size() > std::mem::size_of::<Chunk>() + chunks[2].data().len());
    }

    #[test]
    fn tool_calls_and_refusals_are_content_without_text() {
        let tool = r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}"#;
        let refusal =
            r#"data: {"choices":[{"index":0,"delta":{"refusal":"I can't"},"finish_reason":null}]}"#;
        let empty = r#"data: {"choices":[{"index":0,"delta":{"content":null,"tool_calls":[]},"finish_reason":null}]}"#;
        let chunks = ok(read(&body(&[tool, refusal, empty, "data: [DONE]"])));
        let kinds: Vec<ItemKind> = chunks.iter().map(StreamItem::kind).collect();
        assert_eq!(
            kinds,
            [
                ItemKind::Content,
                ItemKind::Content,
                ItemKind::Preamble,
                ItemKind::Content
            ]
        );
        assert!(chunks.iter().all(|chunk| chunk.text().is_none()));
    }

    #[test]
    fn the_stream_ends_after_done_without_reading_on() {
        let items = read(&body(&[&delta("a"), "data: [DONE]", "data: not even json"]));
        assert_eq!(items.len(), 2);
        assert!(ok(items)[1].is_finish());
    }

    #[test]
    fn an_end_without_done_is_a_cut_never_a_clean_end() {
        for events in [&[][..], &[ROLE][..], &[ROLE, FINISH, USAGE][..]] {
            let items = read(&body(events));
            assert_eq!(items.len(), events.len() + 1);
            let cut = last_error(&items);
            assert!(matches!(cut, Error::Cut), "{cut:?}");
            assert_eq!(cut.classify(), ErrorClass::Transient);
            assert_eq!(cut.variant(), "Cut");
            assert!(cut.hint().unwrap().contains("incomplete"));
        }
        // `[DONE]` cut before the blank line that dispatches it.
        let items = read(b"data: [DONE]");
        assert!(matches!(last_error(&items), Error::Cut));
    }

    #[test]
    fn in_band_errors_are_classified_by_the_presets() {
        let cases = [
            (
                r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#,
                ErrorClass::Transient,
                500,
            ),
            (
                r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
                ErrorClass::Fatal,
                429,
            ),
            (
                r#"{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
                ErrorClass::RateLimited,
                429,
            ),
            (
                r#"{"error":{"message":"maximum context length","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                ErrorClass::Invalid,
                400,
            ),
            (r#"{"error":"upstream failed"}"#, ErrorClass::Transient, 500),
        ];
        for (data, class, status) in cases {
            let items = read(format!("data: {data}\n\n").as_bytes());
            assert_eq!(items.len(), 1, "the error is the last item");
            let error = last_error(&items);
            let Error::InBand(http) = error else {
                panic!("{error:?}")
            };
            assert_eq!(http.status().as_u16(), status, "{data}");
            assert_eq!(error.classify(), class, "{data}");
            assert_eq!(error.variant(), "InBand");
        }
        let items = read(
            br#"data: {"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}

"#,
        );
        let error = last_error(&items);
        assert_eq!(error.rejected(), Some(crate::Reject::ContextLength));
        assert!(error.hint().unwrap().contains("context window"));
        assert_eq!(
            error.to_string(),
            "OpenAI stream: an error event: context_length_exceeded: too long"
        );
        // `"error": null` is no error; `event: error` is one, whatever its data.
        let items = read(b"data: {\"error\":null,\"choices\":[]}\n\nevent: error\ndata: {\"message\":\"boom\"}\n\n");
        assert!(items[0].is_ok());
        let error = last_error(&items);
        assert!(matches!(error, Error::InBand(_)), "{error:?}");
        assert_eq!(error.to_string(), "OpenAI stream: an error event: boom");
    }

    #[test]
    fn malformed_events_say_what_failed_and_are_transient() {
        for (data, says) in [
            ("{\"choices\": [", "not JSON"),
            ("not json at all", "not JSON"),
            ("[1, 2]", "not a JSON object"),
            ("\"text\"", "not a JSON object"),
            ("1e400", "not JSON"),
        ] {
            let items = read(format!("data: {data}\n\n").as_bytes());
            let error = last_error(&items);
            let Error::Malformed { event, reason } = error else {
                panic!("{error:?}")
            };
            assert_eq!(event, "message");
            assert!(reason.contains(says), "{reason}");
            assert_eq!(error.classify(), ErrorClass::Transient);
            assert_eq!(error.variant(), "Malformed");
            assert!(
                error
                    .to_string()
                    .starts_with("OpenAI stream: a malformed `message` event: ")
            );
        }
        // A long event is quoted in part.
        let long = format!("data: {}\n\n", "x".repeat(10_000));
        let items = read(long.as_bytes());
        assert!(last_error(&items).to_string().len() < 200);
        // Cut inside a multibyte character: never a panic.
        let wide = format!("data: {}\n\n", "é".repeat(100));
        let items = read(wide.as_bytes());
        assert!(last_error(&items).to_string().ends_with("..."));
    }

    #[test]
    fn hostile_numbers_and_missing_fields_never_panic() {
        let usage = |json: &str| {
            let items = read(format!("data: {{\"choices\":[],\"usage\":{json}}}\n\n").as_bytes());
            match &items[0] {
                Ok(chunk) => chunk.usage(),
                Err(error) => panic!("{error}"),
            }
        };
        assert_eq!(
            usage(r#"{"prompt_tokens":18446744073709551616,"completion_tokens":1e300}"#),
            Some(Usage::new(u64::MAX, u64::MAX))
        );
        assert_eq!(
            usage(&format!(
                r#"{{"prompt_tokens":{},"completion_tokens":-5}}"#,
                "9".repeat(300)
            )),
            Some(Usage::new(u64::MAX, 0))
        );
        assert_eq!(
            usage(r#"{"prompt_tokens":"12","completion_tokens":2.9}"#),
            Some(Usage::new(0, 2))
        );
        assert_eq!(usage("{}"), Some(Usage::default()));
        assert_eq!(usage("null"), None);
        assert_eq!(usage("[1]"), None);
        // No choices, choices of the wrong type, a delta that is no object.
        for data in [
            "{}",
            r#"{"choices":null}"#,
            r#"{"choices":{"0":1}}"#,
            r#"{"choices":[null, 3, "x"]}"#,
            r#"{"choices":[{"delta":"text","index":-1,"finish_reason":7}]}"#,
            r#"{"model":5,"id":[],"choices":[{"delta":{"content":5,"role":false}}]}"#,
        ] {
            let chunks = ok(read(format!("data: {data}\n\ndata: [DONE]\n\n").as_bytes()));
            let chunk = &chunks[0];
            assert_eq!(chunk.kind(), ItemKind::Preamble, "{data}");
            assert_eq!(
                (
                    chunk.text(),
                    chunk.role(),
                    chunk.finish_reason(),
                    chunk.model()
                ),
                (None, None, None, None)
            );
            assert!(chunk.completion_id().is_none() && chunk.usage().is_none());
        }
        let chunks = ok(read(
            b"data: {\"choices\":[{\"index\":1e30}]}\n\ndata: [DONE]\n\n",
        ));
        assert_eq!(chunks[0].index(), Some(u64::MAX));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_replaced_or_malformed() {
        // Inside a JSON string: replaced, and read.
        let chunks = ok(read(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\xFFb\"}}]}\n\ndata: [DONE]\n\n",
        ));
        assert_eq!(chunks[0].text(), Some("a\u{FFFD}b"));
        // Outside one: not JSON.
        let items = read(b"data: \xFE\xFF{}\n\n");
        assert!(matches!(last_error(&items), Error::Malformed { .. }));
    }

    #[test]
    fn ids_pings_and_the_body_s_errors() {
        let read_back = ok(read(
            b"id: 1\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\nevent: ping\ndata: {}\n\ndata: [DONE]\n\n",
        ));
        assert_eq!(read_back[0].id(), Some("1"));
        assert_eq!(read_back[1].kind(), ItemKind::Keepalive);
        assert_eq!(
            read_back[1].id(),
            Some("1"),
            "the last event id, as SSE says"
        );
        assert_eq!(read_back[2].id(), Some("1"));

        // The body's error: forwarded, and the last item.
        let body = futures_util::stream::iter([
            Ok(&b"data: {\"choices\":[]}\n\n"[..]),
            Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset)),
            Ok(&b"data: [DONE]\n\n"[..]),
        ]);
        let mut stream = std::pin::pin!(chunks(body));
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
        assert!(std::error::Error::source(&error).is_some());
        assert!(matches!(
            stream.as_mut().poll_next(&mut cx),
            Poll::Ready(None)
        ));
        assert_eq!(stream.as_ref().get_ref().get_ref().last_event_id(), None);
    }

    #[test]
    fn split_anywhere_the_same_chunks() {
        let a = delta("x");
        let whole = body(&[ROLE, &a, FINISH, USAGE, "data: [DONE]"]);
        let expected = ok(read(&whole));
        for at in 0..=whole.len() {
            assert_eq!(
                ok(read_chunks(&[&whole[..at], &whole[at..]])),
                expected,
                "at {at}"
            );
        }
    }
}
