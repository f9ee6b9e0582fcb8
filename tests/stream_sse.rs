//! `Policy::stream` over real server-sent events: an axum `Sse` server on
//! loopback, started by each test and stopped at its end, read by reqwest's
//! `bytes_stream()` through `tenacious::sse::sse`. The server records each
//! connection and the `Last-Event-ID` of each request; the tests assert on
//! what it saw as much as on what the consumer got.
//!
//! Time: every test runs on tokio's paused clock, the server in the same
//! runtime, so its sleeps and keepalive intervals run on the same virtual
//! clock as the stream's timers. The clock advances on its own only when
//! the runtime is idle; where a server must not stall it answers with no
//! sleep at all, and where it stalls it does so for an hour against a
//! client timer of seconds. Elapsed times asserted are virtual ones.
use std::fmt;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use futures_util::stream::{self, BoxStream, Stream, StreamExt};
use tenacious::agent::{Observation, Status};
use tenacious::sse::{SseError, SseEvent, SseItem, sse};
use tenacious::stats::CallStats;
use tenacious::stream::ResumePoint;
use tenacious::{Classify, Elapsed, ErrorClass, Failure, Jitter, Limit, Policy, StopReason, retry};
use tokio::task::JoinHandle;
use tokio::time::Instant;

// ---------------------------------------------------------------------
// The server

/// The body of one SSE response.
type Body = BoxStream<'static, Result<Event, io::Error>>;

/// What the server answers a request with: its events, and whether axum
/// adds keepalive comments in the silences.
struct Reply {
    body: Body,
    keep_alive: Option<KeepAlive>,
}

impl Reply {
    fn events(body: Body) -> Self {
        Self {
            body,
            keep_alive: None,
        }
    }

    /// With a keepalive comment (`: ping`) after every `every` of silence.
    fn pinging(body: Body, every: Duration) -> Self {
        Self {
            body,
            keep_alive: Some(KeepAlive::new().interval(every).text("ping")),
        }
    }
}

/// How the server answers its `n`th request (from 0), given the request's
/// `Last-Event-ID`.
type Script = Arc<dyn Fn(usize, Option<&str>) -> Reply + Send + Sync>;

/// What the server saw.
#[derive(Default)]
struct Seen {
    /// TCP connections accepted.
    connections: AtomicUsize,
    /// Each request's `Last-Event-ID` header, in order.
    last_event_ids: Mutex<Vec<Option<String>>>,
}

#[derive(Clone)]
struct App {
    seen: Arc<Seen>,
    script: Script,
}

async fn messages(State(app): State<App>, headers: HeaderMap) -> Response {
    let last = headers
        .get("last-event-id")
        .map(|id| id.to_str().expect("an ASCII id").to_owned());
    let n = {
        let mut seen = app.seen.last_event_ids.lock().unwrap();
        seen.push(last.clone());
        seen.len() - 1
    };
    let reply = (app.script)(n, last.as_deref());
    match reply.keep_alive {
        Some(keep_alive) => Sse::new(reply.body).keep_alive(keep_alive).into_response(),
        None => Sse::new(reply.body).into_response(),
    }
}

/// An axum server on `127.0.0.1:0`; aborted when dropped.
struct Server {
    url: String,
    seen: Arc<Seen>,
    task: JoinHandle<()>,
}

impl Server {
    async fn start(script: impl Fn(usize, Option<&str>) -> Reply + Send + Sync + 'static) -> Self {
        let seen = Arc::new(Seen::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let counted = Arc::clone(&seen);
        let listener = listener.tap_io(move |_| {
            counted.connections.fetch_add(1, Ordering::SeqCst);
        });
        let app = Router::new()
            .route("/v1/messages", get(messages))
            .with_state(App {
                seen: Arc::clone(&seen),
                script: Arc::new(script),
            });
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            url: format!("http://{addr}/v1/messages"),
            seen,
            task,
        }
    }

    /// TCP connections accepted, and requests answered: one each, as the
    /// client keeps no idle connection.
    fn connections(&self) -> usize {
        let accepted = self.seen.connections.load(Ordering::SeqCst);
        let requests = self.seen.last_event_ids.lock().unwrap().len();
        assert_eq!(accepted, requests, "one request per connection");
        accepted
    }

    fn last_event_ids(&self) -> Vec<Option<String>> {
        self.seen.last_event_ids.lock().unwrap().clone()
    }

    fn stop(self) {
        drop(self);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Token `n`: a `content_block_delta` with id `n` and data `tokn`.
fn delta(n: u32) -> Event {
    Event::default()
        .id(n.to_string())
        .event("content_block_delta")
        .data(format!("tok{n}"))
}

/// Tokens `from..=to`, sent at once, then the response ends.
fn tokens(from: u32, to: u32) -> Body {
    stream::iter((from..=to).map(|n| Ok(delta(n)))).boxed()
}

/// `body`, then the connection is cut mid-body: the body stream yields an
/// error, so hyper closes the connection without the chunked body's last
/// chunk, and the client reads a truncated body (an `Err`, not an end).
/// Before the error the body waits once (`yield_now`), so hyper flushes
/// the events it has buffered instead of dropping them with the
/// connection.
fn then_cut(body: Body) -> Body {
    body.chain(stream::once(async {
        tokio::task::yield_now().await;
        Err(io::Error::new(
            io::ErrorKind::ConnectionReset,
            "cut mid-body",
        ))
    }))
    .boxed()
}

/// Nothing for an hour (head sent, no body byte), then the end.
fn silent_for_an_hour() -> Body {
    stream::once(async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    })
    .filter_map(|()| async { None })
    .boxed()
}

/// Nothing, ever.
fn silent() -> Body {
    stream::pending().boxed()
}

// ---------------------------------------------------------------------
// The client

/// The errors of a model's stream, as the client sees them.
#[derive(Debug, Classify)]
enum ChatError {
    /// The request or its body: a refused connect, a cut body.
    #[classify(transparent)]
    Transport(SseError<reqwest::Error>),
    /// Anthropic's in-band `overloaded_error`, on a `200` stream.
    #[classify(transient)]
    Overloaded,
    /// Any other in-band error.
    #[classify(fatal)]
    Api(String),
    /// A stream timer ran out.
    #[classify(transient)]
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
            Self::Transport(error) => write!(f, "transport: {error}"),
            Self::Overloaded => f.write_str("overloaded"),
            Self::Api(kind) => write!(f, "api error: {kind}"),
            Self::Stalled(elapsed) => write!(f, "stalled: {elapsed}"),
        }
    }
}

type Source = BoxStream<'static, Result<SseItem, ChatError>>;

/// An event of type `error` is the provider's in-band error (Anthropic's
/// shape: `{"type":"error","error":{"type":"overloaded_error",..}}`);
/// everything else passes.
fn in_band(item: Result<SseItem, SseError<reqwest::Error>>) -> Result<SseItem, ChatError> {
    let item = item.map_err(ChatError::Transport)?;
    if let SseItem::Event(event) = &item
        && event.event == "error"
    {
        let body: serde_json::Value = serde_json::from_str(&event.data).expect("JSON");
        return Err(match body["error"]["type"].as_str() {
            Some("overloaded_error") => ChatError::Overloaded,
            other => ChatError::Api(other.unwrap_or("?").to_owned()),
        });
    }
    Ok(item)
}

/// What the client saw below the retried stream, every attempt together.
#[derive(Default)]
struct Wire {
    /// Responses whose head (a `200`) arrived.
    heads: AtomicUsize,
    /// SSE comments read.
    comments: AtomicUsize,
    /// `ping` events read.
    pings: AtomicUsize,
}

struct Client {
    http: reqwest::Client,
    url: String,
    wire: Arc<Wire>,
}

impl Client {
    fn new(server: &Server) -> Self {
        Self {
            // No idle connection kept: each attempt is a new connection,
            // as each is after a failed one.
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .unwrap(),
            url: server.url.clone(),
            wire: Arc::default(),
        }
    }

    /// One attempt's open: the request, from `resume`'s last event id
    /// when there is one.
    fn open(
        &self,
        resume: &ResumePoint,
    ) -> impl Future<Output = Result<Source, ChatError>> + use<> {
        let mut request = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream");
        if let Some(id) = resume.last_event_id() {
            request = request.header("last-event-id", id);
        }
        let wire = Arc::clone(&self.wire);
        async move {
            let response = request
                .send()
                .await
                .and_then(reqwest::Response::error_for_status)
                .map_err(|error| ChatError::Transport(SseError::Body(error)))?;
            wire.heads.fetch_add(1, Ordering::SeqCst);
            let items = sse(response.bytes_stream()).inspect(move |item| match item {
                Ok(SseItem::Comment(_)) => {
                    wire.comments.fetch_add(1, Ordering::SeqCst);
                }
                Ok(SseItem::Event(event)) if event.event == "ping" => {
                    wire.pings.fetch_add(1, Ordering::SeqCst);
                }
                _ => {}
            });
            Ok(items.map(in_band).boxed())
        }
    }

    fn heads(&self) -> usize {
        self.wire.heads.load(Ordering::SeqCst)
    }

    fn comments(&self) -> usize {
        self.wire.comments.load(Ordering::SeqCst)
    }

    fn pings(&self) -> usize {
        self.wire.pings.load(Ordering::SeqCst)
    }
}

/// What the consumer got: events, then at most one failure, then the end.
#[derive(Default)]
struct Got {
    events: Vec<SseEvent>,
    failure: Option<Failure<ChatError>>,
}

impl Got {
    fn data(&self) -> Vec<&str> {
        self.events
            .iter()
            .map(|event| event.data.as_str())
            .collect()
    }

    fn ids(&self) -> Vec<Option<&str>> {
        self.events
            .iter()
            .map(|event| event.id.as_deref())
            .collect()
    }

    fn failure(&self) -> &Failure<ChatError> {
        self.failure
            .as_ref()
            .expect("the stream ends with a failure")
    }
}

/// Far past any timer of these tests (virtual time): a stream that never
/// ends fails its test instead of hanging it.
const BOUND: Duration = Duration::from_secs(600);

/// Reads `tokens` to its end.
async fn drain(tokens: impl Stream<Item = Result<SseItem, Failure<ChatError>>>) -> Got {
    let mut tokens = std::pin::pin!(tokens);
    let mut got = Got::default();
    let read = async {
        while let Some(item) = tokens.next().await {
            assert!(got.failure.is_none(), "an item after the failure: {item:?}");
            match item {
                Ok(SseItem::Event(event)) => got.events.push(event),
                Ok(SseItem::Comment(comment)) => panic!("a keepalive delivered: {comment:?}"),
                Err(failure) => got.failure = Some(failure),
            }
        }
    };
    tokio::time::timeout(BOUND, read)
        .await
        .expect("the stream ends");
    got
}

fn toks(range: std::ops::RangeInclusive<u32>) -> Vec<String> {
    range.map(|n| format!("tok{n}")).collect()
}

/// 3 attempts, 100 ms then 200 ms apart.
const fn fixed() -> Policy {
    Policy::new()
        .max(3)
        .base(Duration::from_millis(100))
        .jitter(Jitter::None)
}

fn stall_of(failure: &Failure<ChatError>) -> Limit {
    match failure.last() {
        ChatError::Stalled(elapsed) => elapsed.which(),
        other => panic!("not a stall: {other:?}"),
    }
}

// ---------------------------------------------------------------------
// The tests

#[tokio::test(start_paused = true)]
async fn a_stall_before_the_first_chunk_is_retried() {
    // The first connection gets its head and then nothing for an hour; the
    // second, the tokens at once.
    let server = Server::start(|n, _| match n {
        0 => Reply::events(silent_for_an_hour()),
        _ => Reply::events(tokens(1, 5)),
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed().first_item(Duration::from_secs(2));
    let start = Instant::now();
    let got = drain(policy.stream(|resume| client.open(resume))).await;
    let elapsed = start.elapsed();

    assert!(got.failure.is_none(), "{:?}", got.failure);
    assert_eq!(got.data(), toks(1..=5));
    assert_eq!(server.connections(), 2);
    assert_eq!(server.last_event_ids(), [None, None]);
    // The first attempt stalled in the body, past its head.
    assert_eq!(client.heads(), 2);
    // Its first_item ran out (2 s), then the backoff (100 ms).
    assert!(
        elapsed >= Duration::from_millis(2100) && elapsed < Duration::from_secs(3),
        "{elapsed:?}"
    );
    server.stop();
}

#[tokio::test(start_paused = true)]
async fn dies_after_3_of_10_without_resume_is_a_partial_output_failure() {
    // The first connection is cut after 3 of its 10 events; any later one
    // would send all 10, so a silent retry would show.
    let server = Server::start(|n, _| match n {
        0 => Reply::events(then_cut(tokens(1, 3))),
        _ => Reply::events(tokens(1, 10)),
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed();
    let got = drain(policy.stream(|resume| client.open(resume))).await;

    assert_eq!(got.data(), toks(1..=3));
    let failure = got.failure();
    assert_eq!(failure.delivered(), 3);
    assert_eq!(failure.stop_reason(), StopReason::PartialOutput);
    // The cut reached the stream as the body's error, not as its end.
    let ChatError::Transport(SseError::Body(cut)) = failure.last() else {
        panic!("not a cut body: {:?}", failure.last());
    };
    assert!(cut.is_body() || cut.is_decode(), "{cut:?}");
    assert_eq!(failure.last().classify(), ErrorClass::Transient);
    assert!(
        failure.to_string().contains("with 3 items delivered"),
        "{failure}"
    );
    assert_eq!(failure.attempts().len(), 1);
    assert_eq!(server.connections(), 1, "no silent retry");

    let observation = Observation::from_failure("call_1", failure);
    assert_eq!(observation.status, Status::PartialOutput);
    assert_eq!(observation.delivered, Some(3));
    assert_eq!(observation.tool_call_id, "call_1");
    server.stop();
}

/// The server cuts its first connection after 3 of 10 events; on the
/// next, it sends from after `Last-Event-ID` if `honours`, else from 1.
async fn resumed(honours: bool) {
    let server = Server::start(move |n, last| {
        if n == 0 {
            return Reply::events(then_cut(tokens(1, 3)));
        }
        let after: u32 = last.map_or(0, |id| id.parse().expect("a numeric id"));
        let from = if honours { after + 1 } else { 1 };
        Reply::events(tokens(from, 10))
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed().resume(true);
    let got = drain(policy.stream(|resume| client.open(resume))).await;

    assert!(got.failure.is_none(), "{:?}", got.failure);
    assert_eq!(got.data(), toks(1..=10), "each once, in order");
    let ids: Vec<String> = (1..=10).map(|n| n.to_string()).collect();
    assert_eq!(
        got.ids(),
        ids.iter().map(|id| Some(id.as_str())).collect::<Vec<_>>()
    );
    assert_eq!(server.connections(), 2);
    assert_eq!(server.last_event_ids(), [None, Some("3".to_owned())]);
    server.stop();
}

#[tokio::test(start_paused = true)]
async fn with_resume_all_10_once_from_a_server_that_honours_last_event_id() {
    resumed(true).await;
}

#[tokio::test(start_paused = true)]
async fn with_resume_all_10_once_from_a_server_that_replays_from_the_start() {
    resumed(false).await;
}

#[tokio::test(start_paused = true)]
async fn an_in_band_overloaded_error_before_content_is_retried_after_its_backoff() {
    static STATS: CallStats = CallStats::new("stream_sse: overloaded");
    // A 200, a `ping` event, then Anthropic's in-band error, and the end.
    let server = Server::start(|n, _| match n {
        0 => Reply::events(
            stream::iter([
                Ok(Event::default().event("ping").data(r#"{"type":"ping"}"#)),
                Ok(Event::default().event("error").data(
                    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                )),
            ])
            .boxed(),
        ),
        _ => Reply::events(tokens(1, 5)),
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed().stats(&STATS);
    let start = Instant::now();
    let got = drain(policy.stream(|resume| client.open(resume))).await;
    let elapsed = start.elapsed();

    assert!(got.failure.is_none(), "{:?}", got.failure);
    assert_eq!(got.data(), toks(1..=5), "the tokens once, the error not");
    assert_eq!(server.connections(), 2);
    assert_eq!(client.pings(), 1, "the ping was read, and not delivered");
    // The retry waited its backoff: 100 ms, no jitter.
    assert!(elapsed >= Duration::from_millis(100), "{elapsed:?}");
    let stats = STATS.snapshot();
    assert_eq!(
        (
            stats.calls(),
            stats.attempts(),
            stats.retries(),
            stats.recovered()
        ),
        (1, 2, 1, 1)
    );
    let errors: Vec<_> = stats
        .errors()
        .iter()
        .map(|e| (e.class, e.variant, e.count))
        .collect();
    assert_eq!(errors, [(ErrorClass::Transient, "Overloaded", 1)]);
    server.stop();
}

#[tokio::test(start_paused = true)]
async fn only_keepalives_after_content_time_out_on_idle() {
    // One token, then keepalive comments every 100 ms, forever.
    let server = Server::start(|_, _| {
        Reply::pinging(
            stream::iter([Ok(delta(1))]).chain(silent()).boxed(),
            Duration::from_millis(100),
        )
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed().idle(Duration::from_secs(1));
    let start = Instant::now();
    let got = drain(policy.stream(|resume| client.open(resume))).await;
    let elapsed = start.elapsed();

    assert_eq!(got.data(), ["tok1"]);
    let failure = got.failure();
    assert_eq!(stall_of(failure), Limit::Idle);
    assert_eq!(failure.delivered(), 1);
    assert_eq!(failure.stop_reason(), StopReason::PartialOutput);
    assert!(client.comments() >= 1, "the connection was alive");
    assert_eq!(server.connections(), 1);
    assert!(elapsed >= Duration::from_secs(1), "{elapsed:?}");
    server.stop();
}

#[tokio::test(start_paused = true)]
async fn only_keepalives_before_content_stall_on_first_item_until_exhausted() {
    // `ping` events every 250 ms and keepalive comments in the silences,
    // never a token.
    let server = Server::start(|_, _| {
        let pings = stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_millis(250)).await;
            Some((Ok(Event::default().event("ping").data("{}")), ()))
        });
        Reply::pinging(pings.boxed(), Duration::from_millis(100))
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed().max(2).first_item(Duration::from_secs(1));
    let got = drain(policy.stream(|resume| client.open(resume))).await;

    assert!(got.events.is_empty(), "{:?}", got.events);
    let failure = got.failure();
    assert_eq!(stall_of(failure), Limit::FirstItem);
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(failure.delivered(), 0);
    assert_eq!(failure.attempts().len(), 2);
    assert_eq!(server.connections(), 2, "retried once, then exhausted");
    assert!(client.pings() >= 1 && client.comments() >= 1, "alive");
    server.stop();
}

#[tokio::test(start_paused = true)]
async fn the_deadline_ends_a_slow_stream() {
    // A token every 300 ms, "forever" (for 300 s).
    let server = Server::start(|_, _| {
        let slow = stream::iter(1..=1000).then(|n| async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(delta(n))
        });
        Reply::events(slow.boxed())
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed()
        .deadline(Duration::from_secs(1))
        .idle(Duration::from_secs(5));
    let start = Instant::now();
    let got = drain(policy.stream(|resume| client.open(resume))).await;
    let elapsed = start.elapsed();

    let failure = got.failure();
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert_eq!(stall_of(failure), Limit::Deadline);
    assert!((1..=4).contains(&failure.delivered()), "{failure}");
    assert_eq!(failure.delivered(), got.events.len() as u64);
    assert_eq!(server.connections(), 1);
    assert!(
        elapsed >= Duration::from_secs(1) && elapsed < Duration::from_millis(1500),
        "{elapsed:?}"
    );
    server.stop();
}

// ---------------------------------------------------------------------
// Defects these tests found, each fixed since (the test failed before).

/// `idle` is "the longest time the stream may go without progress once it
/// has committed" (`Policy::idle`): a resumed attempt without `first_item`
/// is bounded by it too. (It once armed no timer: a reconnect whose server
/// stalled after its head, here for an hour, held the stream until the
/// deadline, or forever without one.)
#[tokio::test(start_paused = true)]
async fn with_resume_a_reconnect_that_stalls_runs_out_of_idle() {
    let server = Server::start(|n, last| match n {
        0 => Reply::events(then_cut(tokens(1, 3))),
        1 => Reply::events(silent_for_an_hour()),
        _ => {
            let after: u32 = last.map_or(0, |id| id.parse().expect("a numeric id"));
            Reply::events(tokens(after + 1, 10))
        }
    })
    .await;
    let client = Client::new(&server);
    let policy = fixed().resume(true).idle(Duration::from_secs(1));
    // Were it unbounded, the second attempt would wait for the hour, and
    // `drain`'s bound (600 s, virtual) would fail the test.
    let got = drain(policy.stream(|resume| client.open(resume))).await;

    assert!(got.failure.is_none(), "{:?}", got.failure);
    assert_eq!(got.data(), toks(1..=10));
    assert_eq!(server.connections(), 3, "the stalled reconnect retried");
    server.stop();
}

/// A source ready with items the wrapper does not deliver (keepalives
/// here; repeats dropped on resume, held preambles too) must not outlive
/// the timers: the wrapper looks at them, and yields, every 128 such
/// items. (It once looked only when its source was `Pending`: a million
/// keepalive comments, ready at once, took far longer than the 1 ms
/// `first_item`, and the stream committed on the token after them.) Over reqwest the body's channel
/// returns `Pending` between chunks, so a loopback server cannot show it
/// reliably; a body that is always ready (a fast proxy, a buffered
/// replay) can. Real time: the paused clock cannot advance while a task
/// spins, so the limit could not pass on it. The assertion is on the
/// outcome only.
#[tokio::test]
async fn a_source_always_ready_with_keepalives_still_runs_out_of_first_item() {
    let policy = fixed().max(1).first_item(Duration::from_millis(1));
    let got = drain(policy.stream(|_| async {
        let pings = stream::iter(0..1_000_000).map(|_| Ok::<_, io::Error>(&b": ping\n"[..]));
        let body = pings.chain(stream::iter([Ok(&b"id: 1\ndata: tok1\n\n"[..])]));
        let items = sse(body).map(|item| Ok::<_, ChatError>(item.expect("in memory")));
        Ok::<_, ChatError>(items.boxed())
    }))
    .await;

    assert_eq!(got.data(), Vec::<&str>::new(), "the token came too late");
    assert_eq!(stall_of(got.failure()), Limit::FirstItem);
}

/// Not the stream wrapper: `impl Classify for SseError<E>` (sse.rs)
/// forwards `classify`, `retry_after` and `signals` to the body's error
/// but not `variant` nor `hint`, so a cut body reads as the type's name
/// (`tenacious_runtime::sse::SseError<reqwest::error::Error>`) in a
/// `Failure`'s `Display` and in the statistics' error distribution, and
/// reqwest's hint for a cut body is lost.
#[tokio::test(start_paused = true)]
async fn a_cut_body_reads_as_the_body_error_s_variant_and_hint() {
    let server = Server::start(|_, _| Reply::events(then_cut(tokens(1, 3)))).await;
    let client = Client::new(&server);
    let policy = fixed();
    let got = drain(policy.stream(|resume| client.open(resume))).await;
    let failure = got.failure();

    assert_eq!(failure.last().variant(), "Body");
    assert_eq!(
        failure.last().hint().as_deref(),
        Some("the response body was cut off; trying again may succeed")
    );
    assert_eq!(
        failure.to_string(),
        "gave up after 1 attempt (partial output) with 3 items delivered: transient Body"
    );
    server.stop();
}

// ---------------------------------------------------------------------
// The same over `#[retry]`: a fn that opens the stream, whose body reads
// the resume point with `ResumePoint::current()`.

impl Client {
    /// One completion, as an agent builder writes it: the fn opens the
    /// stream; `#[retry]` makes it the retried stream of its tokens.
    #[retry(
        max = 3,
        base = "100ms",
        jitter = "none",
        first_item = "2s",
        idle = "5s",
        resume = true,
        stats = "stream_sse: #[retry] chat"
    )]
    async fn chat(
        &self,
    ) -> Result<impl Stream<Item = Result<SseItem, ChatError>> + Send, ChatError> {
        let resume = ResumePoint::current().expect("inside the opener");
        self.open(&resume).await
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_fn_retries_a_stall_and_an_in_band_error_and_max_counts_every_attempt() {
    // A stall before the first chunk, then an in-band overload before
    // content, then 3 tokens and a cut, then the rest from the id.
    let server = Server::start(|n, last| match n {
        0 => Reply::events(silent_for_an_hour()),
        1 => Reply::events(
            stream::iter([Ok(Event::default().event("error").data(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ))])
            .boxed(),
        ),
        2 => Reply::events(then_cut(tokens(1, 3))),
        _ => {
            let after: u32 = last.map_or(0, |id| id.parse().expect("a numeric id"));
            Reply::events(tokens(after + 1, 10))
        }
    })
    .await;
    let client = Client::new(&server);
    // `max = 3` counts every attempt of the stream: a stall, an overload,
    // then the third commits; resuming after its cut would take a fourth,
    // which `max` refuses, so the stream ends with the 3 tokens it had.
    let got = drain(client.chat()).await;

    let failure = got
        .failure
        .as_ref()
        .expect("the fourth attempt is over max");
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(failure.delivered(), 3);
    assert_eq!(got.data(), toks(1..=3), "what came, once");
    assert_eq!(server.connections(), 3);
    let obs = Observation::from_failure("call_9", failure);
    assert_eq!(
        (obs.status, obs.delivered),
        (Status::PartialOutput, Some(3))
    );
    server.stop();
}

#[tokio::test(start_paused = true)]
async fn a_retry_fn_resumes_from_the_last_event_id() {
    let server = Server::start(|n, last| match n {
        0 => Reply::events(then_cut(tokens(1, 3))),
        _ => {
            let after: u32 = last.map_or(0, |id| id.parse().expect("a numeric id"));
            Reply::events(tokens(after + 1, 10))
        }
    })
    .await;
    let client = Client::new(&server);
    let got = drain(client.chat()).await;

    assert!(got.failure.is_none(), "{:?}", got.failure);
    assert_eq!(got.data(), toks(1..=10));
    assert_eq!(server.last_event_ids(), [None, Some("3".to_owned())]);
    let stats = tenacious::stats::snapshot();
    let chat = stats
        .get("stream_sse: #[retry] chat")
        .expect("the fn's record");
    assert!(chat.resumes() >= 1);
    server.stop();
}
