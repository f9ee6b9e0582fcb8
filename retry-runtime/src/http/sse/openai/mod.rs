//! OpenAI's streamed chat completions (`"stream": true`) as typed items:
//! [`chunks`] reads the body of a `/v1/chat/completions` response
//! (reqwest's `bytes_stream()`, or any `Stream` of byte chunks) as a
//! stream of [`Chunk`]s, each of which tells a retried stream what it is
//! ([`StreamItem::kind`](crate::stream::StreamItem::kind)) and its
//! consumer the text it delivers and the
//! tokens it reports; and ends with an [`Error`] when the body fails, an
//! event cannot be read, the provider sends an error, or the stream ends
//! before `data: [DONE]`.
//!
//! | the event | [`kind`](crate::stream::StreamItem::kind) | what the [`Chunk`] says |
//! |---|---|---|
//! | a chunk whose delta carries output: `content`, `tool_calls`, `refusal`, or any field but `role` that is not empty | `Content` | [`text`](Chunk::text): the first choice's `delta.content` |
//! | a chunk of metadata: only a `role` (the first chunk), an empty delta, a `finish_reason` alone, no choices (the usage chunk of `stream_options.include_usage`, Azure's `prompt_filter_results`) | `Preamble` | [`role`](Chunk::role), [`finish_reason`](Chunk::finish_reason), [`usage`](Chunk::usage) |
//! | `data: [DONE]` | `Content` | [`is_finish`](Chunk::is_finish); the stream ends after it |
//! | an SSE comment (`: keep-alive`), an `event: ping` | `Keepalive` | nothing |
//! | `{"error": {...}}` as an event's data, or any `event: error` | — | [`Error::InBand`], classified by [`HttpError`](crate::HttpError)'s presets |
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
//! (or 0 in a [`Usage`](crate::stream::Usage)), bytes that are not UTF-8
//! are replaced (see
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
mod chunk;
mod error;
#[cfg(test)]
mod tests;

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use pin_project_lite::pin_project;

use super::{SseError, SseItem, SseStream, provider, sse};
pub use chunk::Chunk;
pub use error::Error;

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
        // After `[DONE]` or an error, nothing more is read.
        let this = self.project();
        provider::poll_next(this.items, this.done, cx)
    }
}
