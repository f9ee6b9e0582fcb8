//! `tenacious::sse::openai` and `tenacious::sse::anthropic` under
//! `Policy::stream`, over real HTTP: an axum `Sse` server on loopback,
//! started by each test and stopped at its end, read by reqwest's
//! `bytes_stream()` through `openai::chunks` and `anthropic::events`, with
//! no mapping of events by hand. The server counts its connections; the
//! tests assert on what it saw as much as on what the consumer got.
//!
//! Time: real. No test asserts on how long anything took; the timers that
//! must run out are short (a few hundred milliseconds), the backoff 10 ms,
//! and every stream is read under a bound of 30 s, past which its test
//! fails instead of hanging.
use std::fmt;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::stream::{self, BoxStream, Stream, StreamExt};
use tenacious::sse::{anthropic, openai};
use tenacious::stats::CallStats;
use tenacious::stream::{ItemKind, StreamItem, Usage};
use tenacious::{Classify, Elapsed, ErrorClass, Failure, Jitter, Limit, Policy, StopReason};
use tokio::task::JoinHandle;

// ---------------------------------------------------------------------
// The server

/// The body of one SSE response.
type Body = BoxStream<'static, Result<Event, io::Error>>;

/// How the server answers its `n`th request (from 0).
type Script = Arc<dyn Fn(usize) -> Body + Send + Sync>;

#[derive(Clone)]
struct App {
    requests: Arc<AtomicUsize>,
    script: Script,
}

async fn answer(State(app): State<App>) -> Response {
    let n = app.requests.fetch_add(1, Ordering::SeqCst);
    Sse::new((app.script)(n)).into_response()
}

/// An axum server on `127.0.0.1:0`; aborted when dropped.
struct Server {
    url: String,
    requests: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl Server {
    async fn start(script: impl Fn(usize) -> Body + Send + Sync + 'static) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicUsize::new(0));
        let app = Router::new().route("/stream", get(answer)).with_state(App {
            requests: Arc::clone(&requests),
            script: Arc::new(script),
        });
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            url: format!("http://{addr}/stream"),
            requests,
            task,
        }
    }

    /// The requests it answered.
    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `events`, sent at once, then the response ends (cleanly).
fn at_once(events: Vec<Event>) -> Body {
    stream::iter(events.into_iter().map(Ok)).boxed()
}

/// `events`, then the given event every `every`, forever.
fn then_every(events: Vec<Event>, every: Duration, event: Event) -> Body {
    let repeated = stream::unfold(event, move |event| async move {
        tokio::time::sleep(every).await;
        Some((Ok(event.clone()), event))
    });
    stream::iter(events.into_iter().map(Ok))
        .chain(repeated)
        .boxed()
}

// OpenAI's chat completions: unnamed events, `data: [DONE]` last.

fn openai_chunk(delta: &str, finish: Option<&str>) -> Event {
    let finish = finish.map_or("null".to_owned(), |reason| format!("{reason:?}"));
    Event::default().data(format!(
        r#"{{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{{"index":0,"delta":{delta},"logprobs":null,"finish_reason":{finish}}}],"usage":null}}"#
    ))
}

fn openai_role() -> Event {
    openai_chunk(r#"{"role":"assistant","content":"","refusal":null}"#, None)
}

fn openai_delta(text: &str) -> Event {
    openai_chunk(&format!(r#"{{"content":{text:?}}}"#), None)
}

fn openai_usage(input: u64, output: u64) -> Event {
    Event::default().data(format!(
        r#"{{"id":"chatcmpl-1","model":"gpt-4o-mini","choices":[],"usage":{{"prompt_tokens":{input},"completion_tokens":{output},"total_tokens":{}}}}}"#,
        input + output
    ))
}

fn openai_done() -> Event {
    Event::default().data("[DONE]")
}

/// Role, three deltas, finish, usage, `[DONE]`.
fn openai_answer() -> Vec<Event> {
    vec![
        openai_role(),
        openai_delta("Canberra"),
        openai_delta(" is the"),
        openai_delta(" capital."),
        openai_chunk("{}", Some("stop")),
        openai_usage(21, 3),
        openai_done(),
    ]
}

// Anthropic's messages: named events, `message_stop` last.

fn anthropic_event(name: &str, data: &str) -> Event {
    Event::default().event(name).data(data)
}

fn message_start() -> Event {
    anthropic_event(
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":30,"cache_read_input_tokens":0,"output_tokens":1}}}"#,
    )
}

fn block_start() -> Event {
    anthropic_event(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    )
}

fn ping() -> Event {
    anthropic_event("ping", r#"{"type": "ping"}"#)
}

fn text_delta(text: &str) -> Event {
    anthropic_event(
        "content_block_delta",
        &format!(
            r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{text:?}}}}}"#
        ),
    )
}

fn overloaded() -> Event {
    anthropic_event(
        "error",
        r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#,
    )
}

/// A whole message: start, a text block of two deltas, its end.
fn anthropic_message() -> Vec<Event> {
    vec![
        message_start(),
        block_start(),
        ping(),
        text_delta("Hello"),
        text_delta(" there"),
        anthropic_event(
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        anthropic_event(
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}"#,
        ),
        anthropic_event("message_stop", r#"{"type":"message_stop"}"#),
    ]
}

// ---------------------------------------------------------------------
// The client

/// The client's error: the providers' stream errors, wrapped with what
/// comes before a body and the stream's timers.
#[derive(Debug, Classify)]
enum ChatError {
    /// The request, before a body: refused, reset, a status not 2xx.
    #[classify(transparent)]
    Connect(reqwest::Error),
    #[classify(transparent)]
    OpenAi(openai::Error<reqwest::Error>),
    #[classify(transparent)]
    Anthropic(anthropic::Error<reqwest::Error>),
    #[classify(transparent)]
    Stalled(Elapsed),
}

impl From<Elapsed> for ChatError {
    fn from(elapsed: Elapsed) -> Self {
        Self::Stalled(elapsed)
    }
}

impl fmt::Display for ChatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Connect(error) => write!(f, "connect: {error}"),
            Self::OpenAi(error) => write!(f, "{error}"),
            Self::Anthropic(error) => write!(f, "{error}"),
            Self::Stalled(elapsed) => write!(f, "{elapsed}"),
        }
    }
}

struct Client {
    http: reqwest::Client,
    url: String,
    /// Keepalives read below the retried stream, every attempt together.
    keepalives: Arc<AtomicUsize>,
}

impl Client {
    fn new(server: &Server) -> Self {
        Self {
            // No idle connection kept: each attempt is a new connection.
            http: reqwest::Client::builder()
                .no_proxy()
                .pool_max_idle_per_host(0)
                .build()
                .unwrap(),
            url: server.url.clone(),
            keepalives: Arc::default(),
        }
    }

    /// The response of one attempt, a `200`.
    async fn response(&self) -> Result<reqwest::Response, ChatError> {
        self.http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(ChatError::Connect)
    }

    /// One attempt of an OpenAI stream.
    async fn openai(
        &self,
    ) -> Result<BoxStream<'static, Result<openai::Chunk, ChatError>>, ChatError> {
        let keepalives = Arc::clone(&self.keepalives);
        let chunks = openai::chunks(self.response().await?.bytes_stream())
            .inspect(move |chunk| count_keepalive(&keepalives, chunk))
            .map(|chunk| chunk.map_err(ChatError::OpenAi));
        Ok(chunks.boxed())
    }

    /// One attempt of an Anthropic stream.
    async fn anthropic(
        &self,
    ) -> Result<BoxStream<'static, Result<anthropic::Event, ChatError>>, ChatError> {
        let keepalives = Arc::clone(&self.keepalives);
        let events = anthropic::events(self.response().await?.bytes_stream())
            .inspect(move |event| count_keepalive(&keepalives, event))
            .map(|event| event.map_err(ChatError::Anthropic));
        Ok(events.boxed())
    }

    fn keepalives(&self) -> usize {
        self.keepalives.load(Ordering::SeqCst)
    }
}

fn count_keepalive<T: StreamItem, E>(keepalives: &AtomicUsize, item: &Result<T, E>) {
    if item
        .as_ref()
        .is_ok_and(|item| item.kind() == ItemKind::Keepalive)
    {
        keepalives.fetch_add(1, Ordering::SeqCst);
    }
}

/// What the consumer got: items, then at most one failure, then the end.
struct Got<T> {
    items: Vec<T>,
    failure: Option<Failure<ChatError>>,
}

impl<T: StreamItem> Got<T> {
    fn text(&self) -> String {
        self.items.iter().filter_map(StreamItem::text).collect()
    }

    fn usage(&self) -> Usage {
        self.items.iter().filter_map(StreamItem::usage).sum()
    }

    fn failure(&self) -> &Failure<ChatError> {
        self.failure
            .as_ref()
            .expect("the stream ends with a failure")
    }
}

/// Reads `items` to its end, within 30 s.
async fn drain<T: StreamItem + fmt::Debug>(
    items: impl Stream<Item = Result<T, Failure<ChatError>>>,
) -> Got<T> {
    let mut items = std::pin::pin!(items);
    let mut got = Got {
        items: Vec::new(),
        failure: None,
    };
    let read = async {
        while let Some(item) = items.next().await {
            assert!(got.failure.is_none(), "an item after the failure: {item:?}");
            match item {
                Ok(item) => {
                    assert_ne!(item.kind(), ItemKind::Keepalive, "a keepalive delivered");
                    got.items.push(item);
                }
                Err(failure) => got.failure = Some(failure),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .expect("the stream ends");
    got
}

/// 3 attempts, 10 ms apart, no timer of its own.
const fn fixed() -> Policy {
    Policy::new()
        .max(3)
        .base(Duration::from_millis(10))
        .jitter(Jitter::None)
}

fn stall_of(failure: &Failure<ChatError>) -> Limit {
    match failure.last() {
        ChatError::Stalled(elapsed) => elapsed.which(),
        other => panic!("not a stall: {other:?}"),
    }
}

// ---------------------------------------------------------------------
// OpenAI

#[tokio::test]
async fn a_whole_openai_answer_yields_its_text_usage_and_finish() {
    let server = Server::start(|_| at_once(openai_answer())).await;
    let client = Client::new(&server);
    let policy = fixed();
    let got = drain(policy.stream(|_| client.openai())).await;

    assert!(got.failure.is_none(), "{:?}", got.failure);
    assert_eq!(got.text(), "Canberra is the capital.");
    assert_eq!(got.usage(), Usage::new(21, 3));
    let kinds: Vec<ItemKind> = got.items.iter().map(StreamItem::kind).collect();
    use ItemKind::{Content, Preamble};
    assert_eq!(
        kinds,
        [
            Preamble, Content, Content, Content, Preamble, Preamble, Content
        ]
    );
    assert_eq!(got.items[0].role(), Some("assistant"));
    assert_eq!(got.items[1].model(), Some("gpt-4o-mini"));
    assert_eq!(got.items[4].finish_reason(), Some("stop"));
    let last = got.items.last().unwrap();
    assert!(last.is_finish(), "[DONE] is the last item");
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn an_openai_stream_that_ends_before_done_and_before_content_is_retried() {
    static STATS: CallStats = CallStats::new("provider_streams: openai cut");
    // The first response ends cleanly after the role chunk; the second is whole.
    let server = Server::start(|n| match n {
        0 => at_once(vec![openai_role()]),
        _ => at_once(openai_answer()),
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed().stats(&STATS);
    let got = drain(policy.stream(|_| client.openai())).await;

    assert!(got.failure.is_none(), "{:?}", got.failure);
    assert_eq!(got.text(), "Canberra is the capital.");
    let roles = got.items.iter().filter(|chunk| chunk.role().is_some());
    assert_eq!(roles.count(), 1, "the first attempt's preamble was dropped");
    assert_eq!(server.requests(), 2);
    let stats = STATS.snapshot();
    assert_eq!(
        (stats.attempts(), stats.retries(), stats.recovered()),
        (2, 1, 1)
    );
    let errors: Vec<_> = stats
        .errors()
        .iter()
        .map(|e| (e.class, e.variant, e.count))
        .collect();
    assert_eq!(errors, [(ErrorClass::Transient, "Cut", 1)]);
}

#[tokio::test]
async fn an_openai_stream_that_ends_before_done_after_content_is_a_partial_output() {
    // Role and two deltas, then the response ends cleanly; a retry would
    // get the whole answer, so a silent one would show.
    let server = Server::start(|n| match n {
        0 => at_once(vec![
            openai_role(),
            openai_delta("Canb"),
            openai_delta("erra"),
        ]),
        _ => at_once(openai_answer()),
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed();
    let got = drain(policy.stream(|_| client.openai())).await;

    assert_eq!(got.text(), "Canberra");
    let failure = got.failure();
    assert_eq!(failure.stop_reason(), StopReason::PartialOutput);
    assert_eq!(failure.delivered(), 3, "the role chunk and two deltas");
    assert!(
        matches!(failure.last(), ChatError::OpenAi(openai::Error::Cut)),
        "{:?}",
        failure.last()
    );
    assert_eq!(failure.last().classify(), ErrorClass::Transient);
    assert_eq!(failure.last().variant(), "Cut");
    assert_eq!(server.requests(), 1, "no silent retry");
}

#[tokio::test]
async fn an_openai_in_band_quota_error_is_not_retried() {
    let server = Server::start(|_| {
        at_once(vec![
            openai_role(),
            Event::default().data(
                r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
            ),
        ])
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed();
    let got = drain(policy.stream(|_| client.openai())).await;

    assert!(got.items.is_empty(), "{:?}", got.items);
    let failure = got.failure();
    assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
    assert_eq!(failure.last().classify(), ErrorClass::Fatal);
    assert!(failure.last().hint().unwrap().contains("quota"));
    assert_eq!(server.requests(), 1);
}

// ---------------------------------------------------------------------
// Anthropic

#[tokio::test]
async fn an_anthropic_in_band_overloaded_error_before_content_is_retried() {
    static STATS: CallStats = CallStats::new("provider_streams: overloaded");
    // A 200 with its message_start, a ping, then `overloaded_error`.
    let server = Server::start(|n| match n {
        0 => at_once(vec![message_start(), ping(), overloaded()]),
        _ => at_once(anthropic_message()),
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed().stats(&STATS);
    let got = drain(policy.stream(|_| client.anthropic())).await;

    assert!(got.failure.is_none(), "{:?}", got.failure);
    assert_eq!(got.text(), "Hello there");
    assert_eq!(got.usage(), Usage::new(30, 2));
    let starts = got
        .items
        .iter()
        .filter(|event| event.event_type() == "message_start");
    assert_eq!(
        starts.count(),
        1,
        "message_start once, the failed one dropped"
    );
    assert_eq!(got.items[0].model(), Some("claude-sonnet-4-5"));
    let stop = got.items.iter().find_map(anthropic::Event::stop_reason);
    assert_eq!(stop, Some("end_turn"));
    assert!(got.items.last().unwrap().is_finish());
    assert_eq!(server.requests(), 2);
    assert_eq!(
        client.keepalives(),
        2,
        "a ping each, read and not delivered"
    );
    let stats = STATS.snapshot();
    assert_eq!(
        (stats.attempts(), stats.retries(), stats.recovered()),
        (2, 1, 1)
    );
    let errors: Vec<_> = stats
        .errors()
        .iter()
        .map(|e| (e.class, e.variant, e.count))
        .collect();
    assert_eq!(errors, [(ErrorClass::Transient, "InBand", 1)]);
}

#[tokio::test]
async fn anthropic_pings_after_content_never_reset_the_idle_timer() {
    // One delta, then a `ping` every 40 ms, forever: alive, not moving.
    let server = Server::start(|_| {
        then_every(
            vec![message_start(), block_start(), text_delta("Hel")],
            Duration::from_millis(40),
            ping(),
        )
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed().idle(Duration::from_millis(400));
    let got = drain(policy.stream(|_| client.anthropic())).await;

    assert_eq!(got.text(), "Hel");
    let failure = got.failure();
    assert_eq!(stall_of(failure), Limit::Idle);
    assert_eq!(failure.stop_reason(), StopReason::PartialOutput);
    assert_eq!(failure.delivered(), 3);
    assert!(client.keepalives() >= 1, "the pings came, and were read");
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn anthropic_pings_before_content_never_satisfy_first_item() {
    let server =
        Server::start(|_| then_every(vec![message_start()], Duration::from_millis(40), ping()))
            .await;
    let client = Client::new(&server);
    let policy = fixed().max(2).first_item(Duration::from_millis(300));
    let got = drain(policy.stream(|_| client.anthropic())).await;

    assert!(got.items.is_empty(), "{:?}", got.items);
    let failure = got.failure();
    assert_eq!(stall_of(failure), Limit::FirstItem);
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(failure.attempts().len(), 2);
    assert!(client.keepalives() >= 1, "alive");
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn an_anthropic_body_cut_mid_way_is_the_body_s_error_and_retried_before_content() {
    static STATS: CallStats = CallStats::new("provider_streams: body cut");
    // The first body fails (the connection is dropped without the last
    // chunk): reqwest's error, through `SseError::Body`, not a clean end.
    let server = Server::start(|n| match n {
        0 => stream::iter([Ok(message_start())])
            .chain(stream::once(async {
                tokio::task::yield_now().await;
                Err(io::Error::new(io::ErrorKind::ConnectionReset, "cut"))
            }))
            .boxed(),
        _ => at_once(anthropic_message()),
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed().stats(&STATS);
    let got = drain(policy.stream(|_| client.anthropic())).await;

    assert!(got.failure.is_none(), "{:?}", got.failure);
    assert_eq!(got.text(), "Hello there");
    assert_eq!(server.requests(), 2);
    let errors: Vec<_> = STATS
        .snapshot()
        .errors()
        .iter()
        .map(|e| (e.class, e.variant, e.count))
        .collect();
    assert_eq!(
        errors,
        [(ErrorClass::Transient, "Body", 1)],
        "reqwest's, not a cut"
    );
}
