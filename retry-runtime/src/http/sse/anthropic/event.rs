//! [`Event`], an item of Anthropic's stream, and how an SSE event reads as
//! one.
use serde_json::Value;

use super::super::SseEvent;
use super::super::provider::{self, Decode, carries_output, count, json_object};
use super::error::{Error, in_band};
use crate::stream::{ItemKind, StreamItem, Usage};

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

/// One event of Anthropic's messages stream (see the [module docs](super)
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
    /// `message_delta`'s output tokens (see the [module docs](super),
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
    /// item of [`Events`](super::Events).
    #[must_use]
    pub fn is_finish(&self) -> bool {
        self.event_type == "message_stop"
    }
}

/// Its kind as the [module docs](super) say; its SSE id; its text and
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

impl Decode for Event {
    type Error<E> = Error<E>;

    fn keepalive() -> Self {
        Self::bare(String::new(), ItemKind::Keepalive, None, String::new())
    }

    fn cut<E>() -> Error<E> {
        Error::Cut
    }

    fn is_last(&self) -> bool {
        self.is_finish()
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
        let index = provider::index(root.get("index"));
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
                event.stop_reason =
                    text(root.get("delta").and_then(|delta| delta.get("stop_reason")));
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
}
