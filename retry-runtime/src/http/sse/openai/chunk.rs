//! [`Chunk`], an item of OpenAI's stream, and how an event reads as one.
use serde_json::Value;

use super::super::SseEvent;
use super::super::provider::{self, Decode, carries_output, count, json_object};
use super::error::{Error, in_band};
use crate::stream::{ItemKind, StreamItem, Usage};

/// The data of the event that ends the stream.
const DONE: &str = "[DONE]";

/// One item of OpenAI's chat-completions stream: a chunk of the
/// completion, the `[DONE]` that ends it, or a keepalive (see the
/// [module docs](super) for what each is).
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
    /// item of [`Chunks`](super::Chunks).
    #[must_use]
    pub fn is_finish(&self) -> bool {
        self.finish
    }
}

/// Its kind as the [module docs](super) say; its SSE id; its text and
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

impl Decode for Chunk {
    type Error<E> = Error<E>;

    fn keepalive() -> Self {
        Self::bare(ItemKind::Keepalive, None)
    }

    fn cut<E>() -> Error<E> {
        Error::Cut
    }

    fn is_last(&self) -> bool {
        self.finish
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
            text: text(delta.and_then(|delta| delta.get("content")))
                .filter(|text| !text.is_empty()),
            role: text(delta.and_then(|delta| delta.get("role"))),
            finish_reason: text(first.and_then(|choice| choice.get("finish_reason"))),
            model: text(root.get("model")),
            completion_id: text(root.get("id")),
            index: provider::index(first.and_then(|choice| choice.get("index"))),
            usage,
            data,
        })
    }
}
