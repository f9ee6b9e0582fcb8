//! Anthropic's streamed messages (`"stream": true`) as typed items:
//! [`events`] reads the body of a `/v1/messages` response (reqwest's
//! `bytes_stream()`, or any `Stream` of byte chunks) as a stream of
//! [`Event`]s, each of which tells a retried stream what it is
//! ([`StreamItem::kind`](crate::stream::StreamItem::kind)) and its
//! consumer the text it delivers and the
//! tokens it reports; and ends with an [`Error`] when the body fails, an
//! event cannot be read, the provider sends an error, or the stream ends
//! before `message_stop`.
//!
//! | the event | [`kind`](crate::stream::StreamItem::kind) | what the [`Event`] says |
//! |---|---|---|
//! | `message_start` | `Preamble` | [`model`](Event::model), [`message_id`](Event::message_id), [`usage`](Event::usage): the input tokens |
//! | `content_block_start` | `Preamble` (`Content` for a text block that starts with text) | [`index`](Event::index) |
//! | `content_block_delta` | `Content` (`Preamble` for an empty delta: a tool call's first `"partial_json": ""`) | [`text`](Event::text) of a `text_delta`; a `thinking_delta`, `input_json_delta`, `signature_delta` is content without text |
//! | `content_block_stop` | `Preamble` | [`index`](Event::index) |
//! | `message_delta` | `Preamble` | [`stop_reason`](Event::stop_reason), [`usage`](Event::usage): the output tokens |
//! | `message_stop` | `Content` | [`is_finish`](Event::is_finish); the stream ends after it |
//! | `ping`, an SSE comment | `Keepalive` | nothing |
//! | an event of a type not listed here (Anthropic adds some) | `Preamble` | [`event_type`](Event::event_type), [`data`](Event::data) |
//! | `error` (`{"type": "error", "error": {"type": "overloaded_error", ...}}`) | — | [`Error::InBand`], classified by [`HttpError`](crate::HttpError)'s presets: `overloaded_error` is `Transient` and says the provider is overloaded |
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
//! [sum](crate::stream::Usage::add) of a message's usages is its usage.
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
//! (or 0 in a [`Usage`](crate::stream::Usage)), bytes that are not UTF-8
//! are replaced (see
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
mod error;
mod event;
#[cfg(test)]
mod tests;

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use pin_project_lite::pin_project;

use super::{SseError, SseItem, SseStream, provider, sse};
pub use error::Error;
pub use event::Event;

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
        // After `message_stop` or an error, nothing more is read.
        let this = self.project();
        provider::poll_next(this.items, this.done, cx)
    }
}
