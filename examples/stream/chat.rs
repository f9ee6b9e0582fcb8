//! The client: its error type ([`ChatError`], classified by
//! `#[derive(Classify)]`), the items of a completion's stream
//! ([`ChatEvent`], which tell content from preamble and keepalives), the
//! opener of one attempt ([`open_chat`]) and the two policies the demo
//! streams under ([`POLICY`], [`RESUMED`]).

use std::fmt;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use tenacious::sse::{SseError, SseItem, sse};
use tenacious::stats::CallStats;
use tenacious::stream::{ItemKind, ResumePoint, StreamItem};
use tenacious::{Classified, Elapsed, HttpError, Jitter, Policy, Signals};

/// The statistics of the streams without resume.
pub static CHAT: CallStats = CallStats::new("chat");
/// The statistics of the streams with resume.
pub static CHAT_RESUMED: CallStats = CallStats::new("chat_resumed");

/// Without resume: a failure before the first token is retried (4
/// attempts, backoff from 50 ms, at most 400 ms); one after it ends the
/// stream with what it delivered. A run sets the timers from its
/// [`Config`](super::cli::Config), whose defaults these are.
pub const POLICY: Policy = Policy::new()
    .max(4)
    .base(Duration::from_millis(50))
    .cap(Duration::from_millis(400))
    .jitter(Jitter::Full)
    .first_item(Duration::from_millis(150))
    .idle(Duration::from_millis(400))
    .deadline(Duration::from_secs(5))
    .stats(&CHAT);

/// With resume: a failure after the first token reconnects from the last
/// event id, and repeats are dropped by id.
pub const RESUMED: Policy = POLICY.resume(true).stats(&CHAT_RESUMED);

/// Why an attempt failed.
#[derive(Debug, tenacious::Classify)]
pub enum ChatError {
    /// The connection failed or was cut (refused, reset, a body dropped
    /// mid-way).
    #[classify(transient)]
    Transport(reqwest::Error),
    /// A status other than 200: 529 and 5xx are transient, 429 waits its
    /// `Retry-After`, other 4xx are invalid (401 and 403 fatal).
    #[classify(transparent)]
    Status(HttpError),
    /// The stream said so, on a 200: `event: error`, `overloaded_error`.
    /// Transient, and it says the provider is overloaded (a `Signals`
    /// matter, read by the guards: a breaker counts it, a throttle slows
    /// down), through `with`. `Status` says the same of a 529: `transparent`
    /// forwards the inner error's signals.
    #[classify(with = overloaded)]
    Overloaded {
        /// The server's message.
        message: String,
    },
    /// Any other in-band error: the request is wrong.
    #[classify(invalid, hint = "the server refused the request ({kind}): {message}")]
    Refused {
        /// The error's `type`.
        kind: String,
        /// The server's message.
        message: String,
    },
    /// The stream ended without `message_stop`: an answer cut short.
    #[classify(transient)]
    Cut,
    /// An event this client cannot read.
    #[classify(invalid)]
    Malformed(String),
    /// No token in time (`first_item`), no progress (`idle`), or past the
    /// stream's deadline: the wrapper's timers.
    #[classify(transparent)]
    Stalled(Elapsed),
}

/// How an in-band `overloaded_error` is classified: transient, with a hint
/// for the model, and the provider's overload told to the guards.
fn overloaded(_message: &String) -> Classified {
    Classified::transient()
        .with_hint("the model is overloaded: try again in a moment")
        .with_signals(Signals::NONE.overloaded(true))
}

impl From<Elapsed> for ChatError {
    fn from(elapsed: Elapsed) -> Self {
        Self::Stalled(elapsed)
    }
}

impl fmt::Display for ChatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Transport(error) => {
                write!(f, "connection: {error}")?;
                if let Some(source) = std::error::Error::source(error) {
                    write!(f, ": {source}")?;
                }
                Ok(())
            }
            // `http` knows no reason phrase for Anthropic's 529.
            Self::Status(error) if error.status().as_u16() == 529 => {
                f.write_str("HTTP 529 Overloaded")
            }
            Self::Status(error) => write!(f, "{error}"),
            Self::Overloaded { message } => write!(f, "in-band overloaded_error: {message}"),
            Self::Refused { kind, message } => write!(f, "in-band {kind}: {message}"),
            Self::Cut => f.write_str("the stream ended before message_stop"),
            Self::Malformed(what) => write!(f, "malformed event: {what}"),
            Self::Stalled(elapsed) => write!(f, "{elapsed}"),
        }
    }
}

impl std::error::Error for ChatError {}

/// One item of a completion's stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatEvent {
    /// `message_start`: metadata before the answer (a preamble: shown once,
    /// with the first token).
    Start {
        /// The message's id.
        message: String,
    },
    /// `content_block_delta`: a token, with its SSE id.
    Delta {
        /// The SSE id (1, 2, ...), what `Last-Event-ID` resumes after.
        id: String,
        /// The token's text.
        text: String,
    },
    /// `message_stop`: the answer is complete.
    Stop,
    /// A `ping` event or a comment: the connection is alive (never
    /// delivered to the consumer of a retried stream).
    Ping,
    /// Another event, such as `content_block_start` or `message_delta`:
    /// metadata, held before the first token, delivered as it comes after.
    Other(String),
}

impl StreamItem for ChatEvent {
    fn kind(&self) -> ItemKind {
        match self {
            Self::Start { .. } | Self::Other(_) => ItemKind::Preamble,
            Self::Delta { .. } | Self::Stop => ItemKind::Content,
            Self::Ping => ItemKind::Keepalive,
        }
    }

    fn id(&self) -> Option<&str> {
        match self {
            Self::Delta { id, .. } => Some(id),
            _ => None,
        }
    }
}

/// The client of the chat server.
#[derive(Debug, Clone)]
pub struct ChatClient {
    http: reqwest::Client,
    url: String,
}

impl ChatClient {
    /// A client of the server at `base` (`http://127.0.0.1:port`).
    ///
    /// # Panics
    ///
    /// If reqwest cannot build a client (no TLS is asked for: it can).
    pub fn new(base: &str) -> Self {
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("a plain HTTP client builds");
        Self {
            http,
            url: format!("{base}/v1/messages"),
        }
    }
}

/// One attempt of a streamed completion: sends `prompt` (with
/// `Last-Event-ID` when `resume` has one) and returns its stream of
/// events, or the error that stopped it before the first byte of a 200.
pub async fn open_chat(
    client: &ChatClient,
    prompt: &str,
    resume: ResumePoint,
) -> Result<impl Stream<Item = Result<ChatEvent, ChatError>>, ChatError> {
    let body = serde_json::json!({
        "model": "mock-1",
        "max_tokens": 256,
        "stream": true,
        "messages": [{"role": "user", "content": prompt}],
    });
    let mut request = client
        .http
        .post(&client.url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .body(body.to_string());
    if let Some(id) = resume.last_event_id() {
        request = request.header("last-event-id", id);
    }
    let response = request.send().await.map_err(ChatError::Transport)?;
    if !response.status().is_success() {
        return Err(ChatError::Status(HttpError::from(&response)));
    }
    Ok(events(sse(response.bytes_stream())))
}

/// The parsed stream as [`ChatEvent`]s; an end without `message_stop`
/// is [`ChatError::Cut`], and nothing is read after an error.
fn events<S>(items: S) -> impl Stream<Item = Result<ChatEvent, ChatError>>
where
    S: Stream<Item = Result<SseItem, SseError<reqwest::Error>>>,
{
    let state = (Box::pin(items), false);
    futures_util::stream::unfold(state, |(mut items, done)| async move {
        if done {
            return None;
        }
        let event = match items.next().await {
            None => Err(ChatError::Cut),
            Some(Err(SseError::Body(error))) => Err(ChatError::Transport(error)),
            Some(Err(error)) => Err(ChatError::Malformed(error.to_string())),
            Some(Ok(SseItem::Comment(_))) => Ok(ChatEvent::Ping),
            Some(Ok(SseItem::Event(event))) => parse(&event.event, &event.data, event.id),
        };
        let done = !matches!(event, Ok(ref event) if *event != ChatEvent::Stop);
        Some((event, (items, done)))
    })
}

/// One event, from its type, data and SSE id.
fn parse(kind: &str, data: &str, id: Option<String>) -> Result<ChatEvent, ChatError> {
    let json = |data: &str| {
        serde_json::from_str::<serde_json::Value>(data)
            .map_err(|e| ChatError::Malformed(format!("{kind}: {e}")))
    };
    match kind {
        "ping" => Ok(ChatEvent::Ping),
        "message_start" => {
            let start = json(data)?;
            let message = start["message"]["id"].as_str().unwrap_or_default();
            Ok(ChatEvent::Start {
                message: message.to_owned(),
            })
        }
        "content_block_delta" => {
            let delta = json(data)?;
            let (Some(text), Some(id)) = (delta["delta"]["text"].as_str(), id) else {
                return Err(ChatError::Malformed(format!(
                    "a delta without text or id: {data}"
                )));
            };
            Ok(ChatEvent::Delta {
                id,
                text: text.to_owned(),
            })
        }
        "message_stop" => Ok(ChatEvent::Stop),
        "error" => {
            let error = json(data)?;
            let kind = error["error"]["type"].as_str().unwrap_or("error");
            let message = error["error"]["message"].as_str().unwrap_or_default();
            Err(match kind {
                "overloaded_error" => ChatError::Overloaded {
                    message: message.to_owned(),
                },
                _ => ChatError::Refused {
                    kind: kind.to_owned(),
                    message: message.to_owned(),
                },
            })
        }
        other => Ok(ChatEvent::Other(other.to_owned())),
    }
}
