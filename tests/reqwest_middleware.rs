//! `tenacious::reqwest_middleware::RetryMiddleware` over real HTTP on
//! loopback: beside reqwest-retry's `RetryTransientMiddleware` against the
//! same faulty server, then one property at a time (the key, guards and
//! budget, bodies that cannot be resent, what the last bad answer returns).
//!
//! On the real clock: reqwest waits on sockets, which tokio's paused clock
//! would jump past. Backoffs are a few milliseconds; the tests count
//! requests, keys and statuses, never durations. The one wait checked is
//! a floor the server enforces on itself: a request for a rate-limited
//! call that comes before its `Retry-After` is over is answered 429 again
//! and counted as early.
#[path = "support/provider_errors.rs"]
mod provider_errors;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware, Middleware, Next};
use reqwest_retry::RetryTransientMiddleware;
use reqwest_retry::policies::ExponentialBackoff;
use tenacious::reqwest_middleware::RetryMiddleware;
use tenacious::stats::CallStats;
use tenacious::{
    Attempt, Breaker, Classify, ErrorClass, HttpError, IdempotencyKey, Policy, Refused,
    RetryBudget, StopReason, Throttle, retry,
};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

/// The header naming the logical call a request belongs to (the test's
/// own numbering, which the server's script reads).
const CALL: &str = "x-call";
const KEY: &str = "idempotency-key";

/// One request, as the server saw and answered it.
#[derive(Debug, Clone)]
struct Seen {
    call: String,
    key: Option<String>,
    headers: HeaderMap,
    at: Instant,
    body: Bytes,
    status: StatusCode,
}

/// What the server answers a request: given it, with the requests of its
/// call that came before (`status` not yet set).
type Script = dyn Fn(&Seen, &[Seen]) -> Response + Send + Sync;

struct Shared {
    script: Box<Script>,
    seen: Mutex<Vec<Seen>>,
}

/// An axum server on a free loopback port, answering every request by its
/// script and logging it; stopped by [`Server::stop`].
struct Server {
    url: String,
    shared: Arc<Shared>,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    async fn start(script: impl Fn(&Seen, &[Seen]) -> Response + Send + Sync + 'static) -> Self {
        let shared = Arc::new(Shared {
            script: Box::new(script),
            seen: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&shared));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "http://{}/v1/chat/completions",
            listener.local_addr().unwrap()
        );
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            url,
            shared,
            stop,
            task,
        }
    }

    /// Every request so far, in arrival order.
    fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    /// The requests of `call`.
    fn of(&self, call: &str) -> Vec<Seen> {
        self.seen().into_iter().filter(|s| s.call == call).collect()
    }

    /// Stops accepting, lets the connections close, and waits for it.
    async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("the server stops")
            .unwrap();
    }
}

async fn answer(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let mut seen = Seen {
        call: header(CALL).unwrap_or_default(),
        key: header(KEY),
        at: Instant::now(),
        headers: headers.clone(),
        body,
        status: StatusCode::OK,
    };
    let response = {
        let mut log = shared.seen.lock().unwrap();
        let earlier: Vec<Seen> = log
            .iter()
            .filter(|s| s.call == seen.call)
            .cloned()
            .collect();
        let response = (shared.script)(&seen, &earlier);
        seen.status = response.status();
        log.push(seen);
        response
    };
    if let Some(Stall(stall)) = response.extensions().get::<Stall>() {
        tokio::time::sleep(*stall).await;
    }
    response
}

/// Marks a response the server sends only after this long.
#[derive(Debug, Clone, Copy)]
struct Stall(Duration);

fn stalled(stall: Duration, mut response: Response) -> Response {
    response.extensions_mut().insert(Stall(stall));
    response
}

fn reply(status: u16, headers: &[(&str, &str)], body: impl Into<Body>) -> Response {
    let mut response = Response::builder().status(status);
    for (name, value) in headers {
        response = response.header(*name, *value);
    }
    response.body(body.into()).unwrap()
}

fn ok() -> Response {
    reply(200, &[], r#"{"choices": []}"#)
}

fn unavailable() -> Response {
    reply(503, &[], "upstream busy")
}

/// A client through `middleware`. No proxy: the environment's must not
/// reroute loopback.
fn client(middleware: impl Middleware) -> ClientWithMiddleware {
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    ClientBuilder::new(http).with(middleware).build()
}

const fn fast(max: u32) -> Policy {
    Policy::new()
        .max(max)
        .base(Duration::from_millis(2))
        .cap(Duration::from_millis(20))
}

/// The keys a call's requests carried, each distinct one once.
fn keys(seen: &[Seen]) -> BTreeSet<Option<String>> {
    seen.iter().map(|s| s.key.clone()).collect()
}

// ---------------------------------------------------------------------------
// Side by side.

/// What the server does to one logical call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    /// 200 at once.
    Healthy,
    /// 503 this many times, then 200.
    Flaky(usize),
    /// 429 with `Retry-After: 1`; a request within the second after it is
    /// early, and answered 429 again; then 200.
    RateLimited,
    /// 503 with `x-should-retry: false`, every time.
    ShouldNotRetry,
    /// 400, every time.
    BadRequest,
    /// OpenAI's 429 `insufficient_quota` (no `Retry-After`), every time.
    QuotaSpent,
}

const CALLS: usize = 40;
const SEED: u64 = 17;

/// The faults of the side-by-side run: one of each kind first (so each
/// property is exercised whatever the draw), then a seeded draw: about
/// 45 % healthy, 25 % flaky, 15 % rate limited, 5 % of each of the others.
fn plan() -> Vec<Fault> {
    let mut state = SEED;
    let mut next = || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut plan = vec![
        Fault::Healthy,
        Fault::Flaky(2),
        Fault::RateLimited,
        Fault::ShouldNotRetry,
        Fault::BadRequest,
        Fault::QuotaSpent,
    ];
    while plan.len() < CALLS {
        let draw = next() % 100;
        plan.push(match draw {
            0..45 => Fault::Healthy,
            45..70 => Fault::Flaky(1 + (draw % 2) as usize),
            70..85 => Fault::RateLimited,
            85..90 => Fault::ShouldNotRetry,
            90..95 => Fault::BadRequest,
            _ => Fault::QuotaSpent,
        });
    }
    plan
}

const BAD_REQUEST: &str = r#"{"error": {"message": "`max_tokens` must be positive", "type": "invalid_request_error", "param": "max_tokens", "code": null}}"#;

/// The faulty server's script: call `<who>-<i>` gets fault `plan[i]`.
fn faulty(plan: Vec<Fault>) -> impl Fn(&Seen, &[Seen]) -> Response + Send + Sync + 'static {
    move |seen, earlier| {
        let index: usize = seen.call.rsplit('-').next().unwrap().parse().unwrap();
        match plan[index] {
            Fault::Healthy => ok(),
            Fault::Flaky(failures) if earlier.len() < failures => unavailable(),
            Fault::Flaky(_) => ok(),
            Fault::RateLimited => match earlier.first() {
                Some(first) if seen.at >= first.at + Duration::from_secs(1) => ok(),
                _ => reply(
                    429,
                    &[("retry-after", "1")],
                    r#"{"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}"#,
                ),
            },
            Fault::ShouldNotRetry => reply(503, &[("x-should-retry", "false")], "not this one"),
            Fault::BadRequest => reply(400, &[("content-type", "application/json")], BAD_REQUEST),
            Fault::QuotaSpent => {
                let quota = provider_errors::OPENAI_INSUFFICIENT_QUOTA;
                reply(quota.status, &[], quota.body)
            }
        }
    }
}

/// What one middleware made of the plan.
#[derive(Debug, Default)]
struct Figures {
    requests: usize,
    rate_limited: usize,
    early: usize,
    completed: usize,
    /// Requests sent for calls that could never succeed (400,
    /// `x-should-retry: false`, quota spent).
    hopeless: usize,
    /// Final statuses, by call index.
    finals: BTreeMap<usize, u16>,
}

/// Sends every call of the plan at once through `client`, as `who`.
async fn run_plan(
    server: &Server,
    client: &ClientWithMiddleware,
    who: &str,
    plan: &[Fault],
) -> Figures {
    let mut calls = JoinSet::new();
    for index in 0..plan.len() {
        let client = client.clone();
        let url = server.url.clone();
        let call = format!("{who}-{index}");
        calls.spawn(async move {
            let response = client
                .post(url)
                .header(CALL, call)
                .body(r#"{"model": "gpt-4o", "messages": []}"#)
                .send()
                .await
                .expect("every call gets an answer");
            let status = response.status().as_u16();
            let body = response.text().await.unwrap();
            (index, status, body)
        });
    }
    let mut figures = Figures::default();
    while let Some(done) = calls.join_next().await {
        let (index, status, body) = done.unwrap();
        if plan[index] == Fault::BadRequest {
            assert_eq!(body, BAD_REQUEST, "the last bad answer keeps its body");
        }
        figures.completed += usize::from(status == 200);
        figures.finals.insert(index, status);
    }
    let seen: Vec<Seen> = server
        .seen()
        .into_iter()
        .filter(|s| s.call.starts_with(&format!("{who}-")))
        .collect();
    figures.requests = seen.len();
    figures.rate_limited = seen.iter().filter(|s| s.status == 429).count();
    for (index, fault) in plan.iter().enumerate() {
        let of_call: Vec<&Seen> = seen
            .iter()
            .filter(|s| s.call == format!("{who}-{index}"))
            .collect();
        if *fault == Fault::RateLimited {
            let first = of_call[0].at;
            figures.early += of_call[1..]
                .iter()
                .filter(|s| s.at < first + Duration::from_secs(1))
                .count();
        }
        if matches!(
            fault,
            Fault::ShouldNotRetry | Fault::BadRequest | Fault::QuotaSpent
        ) {
            figures.hopeless += of_call.len();
        }
    }
    figures
}

static SIDE_BY_SIDE: CallStats = CallStats::new("side_by_side");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beside_reqwest_retry_against_the_same_faulty_server() {
    let plan = plan();
    let server = Server::start(faulty(plan.clone())).await;

    // The same attempts and backoff on both sides: 4 attempts (3
    // retries), 2 ms doubling to at most 20 ms, full jitter.
    let tenacious = client(RetryMiddleware::new(fast(4).stats(&SIDE_BY_SIDE)));
    let backoff = ExponentialBackoff::builder()
        .retry_bounds(Duration::from_millis(2), Duration::from_millis(20))
        .build_with_max_retries(3);
    let reqwest_retry = client(RetryTransientMiddleware::new_with_policy(backoff));

    let bounded = Duration::from_secs(60);
    let ours = tokio::time::timeout(bounded, run_plan(&server, &tenacious, "tenacious", &plan))
        .await
        .unwrap();
    let theirs = tokio::time::timeout(
        bounded,
        run_plan(&server, &reqwest_retry, "reqwest-retry", &plan),
    )
    .await
    .unwrap();

    let count = |f: fn(&Fault) -> bool| plan.iter().filter(|fault| f(fault)).count();
    let can_succeed = count(|f| matches!(f, Fault::Healthy | Fault::Flaky(_) | Fault::RateLimited));
    let hopeless = count(|f| {
        matches!(
            f,
            Fault::ShouldNotRetry | Fault::BadRequest | Fault::QuotaSpent
        )
    });
    println!(
        "{CALLS} calls at once, seed {SEED}: {} healthy, {} flaky (503 once or twice), \
         {} rate limited (429, Retry-After: 1), {} x-should-retry: false, {} bad request (400), \
         {} quota spent (429 insufficient_quota)",
        count(|f| *f == Fault::Healthy),
        count(|f| matches!(f, Fault::Flaky(_))),
        count(|f| *f == Fault::RateLimited),
        count(|f| *f == Fault::ShouldNotRetry),
        count(|f| *f == Fault::BadRequest),
        count(|f| *f == Fault::QuotaSpent),
    );
    println!("4 attempts, backoff 2 ms doubling to 20 ms, full jitter, on both sides");
    let header = [
        "middleware",
        "requests",
        "429s",
        "early",
        "completed",
        "sent, hopeless calls",
    ];
    println!(
        "{:<40} {:>8} {:>5} {:>5} {:>9} {:>20}",
        header[0], header[1], header[2], header[3], header[4], header[5]
    );
    for (name, figures) in [
        ("tenacious RetryMiddleware", &ours),
        ("reqwest-retry RetryTransientMiddleware", &theirs),
    ] {
        println!(
            "{:<40} {:>8} {:>5} {:>5} {:>9} {:>20}",
            name,
            figures.requests,
            figures.rate_limited,
            figures.early,
            format!("{}/{CALLS}", figures.completed),
            figures.hopeless,
        );
    }
    println!(
        "early: sent before the Retry-After was over; hopeless calls: the {hopeless} that cannot \
         succeed (400, x-should-retry: false, quota spent)"
    );

    // tenacious: every call that can succeed does, no request comes before
    // the server's Retry-After, and the calls that cannot succeed (400,
    // x-should-retry: false, a spent quota) are sent once each.
    assert_eq!(ours.early, 0);
    assert_eq!(ours.completed, can_succeed);
    assert_eq!(ours.hopeless, hopeless);
    assert_eq!(
        ours.rate_limited,
        count(|f| matches!(f, Fault::RateLimited | Fault::QuotaSpent))
    );
    for (index, fault) in plan.iter().enumerate() {
        let of_call = server.of(&format!("tenacious-{index}"));
        let want = match fault {
            Fault::Flaky(failures) => failures + 1,
            Fault::RateLimited => 2,
            _ => 1,
        };
        assert_eq!(of_call.len(), want, "call {index}, {fault:?}");
        // One key per call, on every attempt, and a fresh one per call.
        let keys = keys(&of_call);
        assert_eq!(keys.len(), 1, "call {index}: {keys:?}");
        let key = keys
            .into_iter()
            .next()
            .unwrap()
            .expect("each attempt carries the key");
        key.parse::<IdempotencyKey>().unwrap();
    }
    let distinct: BTreeSet<_> = server
        .seen()
        .into_iter()
        .filter(|s| s.call.starts_with("tenacious-"))
        .filter_map(|s| s.key)
        .collect();
    assert_eq!(distinct.len(), CALLS);
    let stats = SIDE_BY_SIDE.snapshot();
    assert_eq!(stats.calls(), CALLS as u64);
    assert_eq!(stats.attempts(), ours.requests as u64);

    // reqwest-retry, for contrast: its retries of a 429 ignore Retry-After,
    // and it retries a 503 the server said not to and a spent quota.
    assert!(theirs.early > 0);
    assert!(theirs.hopeless > hopeless);
    assert!(
        server
            .seen()
            .iter()
            .filter(|s| s.call.starts_with("reqwest-retry-"))
            .all(|s| s.key.is_none())
    );

    server.stop().await;
}

// ---------------------------------------------------------------------------
// One property at a time.

/// 503 `failures` times for each call, then 200.
fn flaky(failures: usize) -> impl Fn(&Seen, &[Seen]) -> Response + Send + Sync + 'static {
    move |_, earlier| {
        if earlier.len() < failures {
            unavailable()
        } else {
            ok()
        }
    }
}

#[tokio::test]
async fn every_attempt_of_a_request_sends_its_key_and_its_body() {
    let server = Server::start(flaky(2)).await;
    let client = client(RetryMiddleware::new(fast(4)));
    for call in ["a", "b"] {
        let response = client
            .post(&server.url)
            .header(CALL, call)
            .body("{\"prompt\": \"hello\"}")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }
    let (a, b) = (server.of("a"), server.of("b"));
    assert_eq!((a.len(), b.len()), (3, 3));
    assert!(
        a.iter()
            .chain(&b)
            .all(|s| s.body == "{\"prompt\": \"hello\"}")
    );
    let (key_a, key_b) = (keys(&a), keys(&b));
    assert_eq!((key_a.len(), key_b.len()), (1, 1), "one key per request");
    assert_ne!(key_a, key_b, "a key per request");
    server.stop().await;
}

#[tokio::test]
async fn a_key_the_caller_set_is_resent_as_it_is_and_the_header_can_be_renamed_or_dropped() {
    let server = Server::start(flaky(1)).await;
    let keyed = client(RetryMiddleware::new(fast(3)));
    keyed
        .post(&server.url)
        .header(CALL, "mine")
        .header(KEY, "order-17")
        .send()
        .await
        .unwrap();
    assert_eq!(
        keys(&server.of("mine")),
        BTreeSet::from([Some("order-17".to_owned())])
    );
    assert_eq!(server.of("mine").len(), 2);

    let renamed = client(
        RetryMiddleware::new(fast(3)).key_header(http::HeaderName::from_static("x-request-key")),
    );
    let response = renamed
        .post(&server.url)
        .header(CALL, "renamed")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let seen = server.of("renamed");
    assert_eq!(keys(&seen), BTreeSet::from([None]));
    let renamed: BTreeSet<_> = seen
        .iter()
        .map(|s| s.headers.get("x-request-key").cloned())
        .collect();
    assert_eq!(renamed.len(), 1);
    assert!(renamed.into_iter().next().unwrap().is_some());

    let keyless = client(RetryMiddleware::new(fast(3)).without_key());
    keyless
        .post(&server.url)
        .header(CALL, "keyless")
        .send()
        .await
        .unwrap();
    assert_eq!(keys(&server.of("keyless")), BTreeSet::from([None]));
    assert_eq!(server.of("keyless").len(), 2);
    server.stop().await;
}

static BUDGETED: CallStats = CallStats::new("budgeted");

#[tokio::test]
async fn a_spent_budget_stops_the_retries_and_returns_the_last_answer() {
    // One retry's worth of tokens.
    static BUDGET: RetryBudget = RetryBudget::with_capacity(5);
    let server = Server::start(|_, _| unavailable()).await;
    let client = client(RetryMiddleware::new(
        fast(3).budget(&BUDGET).stats(&BUDGETED),
    ));
    for call in ["first", "second"] {
        let response = client
            .get(&server.url)
            .header(CALL, call)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 503);
        assert_eq!(response.text().await.unwrap(), "upstream busy");
    }
    // The first request paid for one retry, and the budget refused its
    // second; the next request had none to pay with.
    assert_eq!(
        (server.of("first").len(), server.of("second").len()),
        (2, 1)
    );
    assert_eq!(BUDGET.balance(), 0);
    assert_eq!(BUDGETED.snapshot().gave_up(StopReason::Budget), 2);
    server.stop().await;
}

#[tokio::test]
async fn an_open_breaker_refuses_the_request_before_anything_is_sent() {
    static HEALTH: Breaker = Breaker::new()
        .min_throughput(2)
        .open_for(Duration::from_secs(600));
    let server = Server::start(|_, _| unavailable()).await;
    let client = client(RetryMiddleware::new(fast(2).breaker(&HEALTH)));
    // Two failed attempts open it.
    let response = client
        .get(&server.url)
        .header(CALL, "opens")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert!(HEALTH.is_open());

    let refused = client
        .get(&server.url)
        .header(CALL, "refused")
        .send()
        .await
        .unwrap_err();
    let reqwest_middleware::Error::Middleware(error) = &refused else {
        panic!("not a middleware's error: {refused:?}");
    };
    assert_eq!(
        error.downcast_ref::<Refused>().map(Refused::reason),
        Some(StopReason::CircuitOpen)
    );
    assert_eq!(refused.classify(), ErrorClass::Transient);
    assert!(refused.not_sent());
    assert_eq!(server.of("refused").len(), 0);
    assert_eq!(server.seen().len(), 2);
    server.stop().await;
}

#[tokio::test]
async fn a_middleware_of_one_attempt_asks_its_breaker_too() {
    static SHARED_HEALTH: Breaker = Breaker::new()
        .min_throughput(2)
        .open_for(Duration::from_secs(600));
    let server = Server::start(|_, _| unavailable()).await;
    // Another client's retries open the breaker both share.
    let opener = client(RetryMiddleware::new(fast(2).breaker(&SHARED_HEALTH)));
    let response = opener
        .get(&server.url)
        .header(CALL, "opens")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert!(SHARED_HEALTH.is_open());

    // One attempt only, and still asked first: nothing is sent.
    let single = client(RetryMiddleware::new(fast(1).breaker(&SHARED_HEALTH)));
    for _ in 0..10 {
        let refused = single
            .get(&server.url)
            .header(CALL, "single")
            .send()
            .await
            .unwrap_err();
        let reqwest_middleware::Error::Middleware(error) = &refused else {
            panic!("not a middleware's error: {refused:?}");
        };
        assert_eq!(
            error.downcast_ref::<Refused>().map(Refused::reason),
            Some(StopReason::CircuitOpen)
        );
        assert!(refused.not_sent());
    }
    assert_eq!(server.of("single").len(), 0);
    assert_eq!(server.seen().len(), 2);
    server.stop().await;
}

static STREAMED: CallStats = CallStats::new("streamed");

#[tokio::test]
async fn a_streaming_body_is_sent_once_and_not_retried() {
    let server = Server::start(|_, _| unavailable()).await;
    let client = client(RetryMiddleware::new(fast(4).stats(&STREAMED)));
    let chunks: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(Bytes::from_static(b"{\"prompt\": ")),
        Ok(Bytes::from_static(b"\"streamed\"}")),
    ];
    let response = client
        .post(&server.url)
        .header(CALL, "stream")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503, "the one answer, as it came");
    let seen = server.of("stream");
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].body, "{\"prompt\": \"streamed\"}");
    assert!(seen[0].key.is_some(), "a key all the same");
    let stats = STREAMED.snapshot();
    assert_eq!(
        (stats.calls(), stats.attempts(), stats.retries()),
        (1, 1, 0)
    );
    assert_eq!(stats.gave_up(StopReason::NotRetryable), 1);
    server.stop().await;
}

#[tokio::test]
async fn the_last_bad_answer_is_returned_whole_however_long_its_body() {
    // Longer than the 64 KiB read for the classification.
    let long = "x".repeat(100 * 1024 + 7);
    let body = long.clone();
    let server =
        Server::start(move |_, _| reply(502, &[("x-upstream", "cache-3")], body.clone())).await;
    let client = client(RetryMiddleware::new(fast(2)));
    let response = client
        .get(&server.url)
        .header(CALL, "long")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 502);
    assert_eq!(response.headers()["x-upstream"], "cache-3");
    assert_eq!(response.url().as_str(), server.url);
    assert_eq!(response.content_length(), Some(long.len() as u64));
    assert_eq!(response.text().await.unwrap(), long);
    assert_eq!(server.of("long").len(), 2);
    server.stop().await;
}

#[tokio::test]
async fn a_timed_out_attempt_is_retried_and_a_last_one_is_elapsed() {
    // The first request of a call stalls far past the policy's timeout;
    // every request of the call "always" does. (The timeout leaves a busy
    // machine room to answer the others; the call "once" may take three
    // attempts where two would do, but never fewer than two.)
    let server = Server::start(|seen, earlier| {
        if earlier.is_empty() || seen.call == "always" {
            stalled(Duration::from_secs(1), ok())
        } else {
            ok()
        }
    })
    .await;
    let timed = |max| {
        client(RetryMiddleware::new(
            fast(max).timeout(Duration::from_millis(250)),
        ))
    };
    let response = timed(3)
        .post(&server.url)
        .header(CALL, "once")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let seen = server.of("once");
    assert!(seen.len() >= 2, "{seen:?}");
    assert_eq!(
        keys(&seen).len(),
        1,
        "the retry after a timeout resends the key"
    );

    let error = timed(2)
        .post(&server.url)
        .header(CALL, "always")
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        (error.classify(), error.variant()),
        (ErrorClass::Transient, "Elapsed")
    );
    assert_eq!(server.of("always").len(), 2);
    server.stop().await;
}

static REFUSED_CONNECTIONS: CallStats = CallStats::new("refused_connections");

#[tokio::test]
async fn a_refused_connection_is_retried_even_when_not_idempotent_and_returned_as_is() {
    // A port nothing listens on any more.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    drop(listener);
    let policy = fast(3).idempotent(false).stats(&REFUSED_CONNECTIONS);
    let client = client(RetryMiddleware::new(policy));
    let error = client.post(url).body("{}").send().await.unwrap_err();
    assert!(error.is_connect(), "the client's own error: {error:?}");
    assert!(matches!(error, reqwest_middleware::Error::Reqwest(_)));
    let stats = REFUSED_CONNECTIONS.snapshot();
    assert_eq!(
        (stats.attempts(), stats.gave_up(StopReason::Exhausted)),
        (3, 1)
    );
}

#[tokio::test]
async fn a_good_answers_rate_limit_headers_pace_the_next_request() {
    static OPENAI: Throttle = Throttle::new();
    let server = Server::start(|_, _| {
        reply(
            200,
            &[
                ("x-ratelimit-remaining-requests", "0"),
                ("x-ratelimit-reset-requests", "1s"),
            ],
            "{}",
        )
    })
    .await;
    let client = client(RetryMiddleware::new(fast(3).throttle(&OPENAI)));
    for call in ["first", "paced"] {
        client
            .get(&server.url)
            .header(CALL, call)
            .send()
            .await
            .unwrap();
    }
    // The window had nothing left: the second request waited for it.
    assert_eq!(OPENAI.stats().waits, 1);
    assert_eq!(server.seen().len(), 2);
    server.stop().await;
}

/// What a middleware after the retry layer sees of each attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp(u32);

/// Records each attempt's number (from the attempt context) and stamps
/// its extensions.
#[derive(Default)]
struct Inner {
    seen: Mutex<Vec<(u32, Option<Stamp>)>>,
}

#[async_trait::async_trait]
impl Middleware for Inner {
    async fn handle(
        &self,
        request: reqwest::Request,
        extensions: &mut http::Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let number = Attempt::current().map_or(0, |attempt| attempt.number());
        self.seen
            .lock()
            .unwrap()
            .push((number, extensions.get::<Stamp>().copied()));
        extensions.insert(Stamp(number));
        next.run(request, extensions).await
    }
}

/// Records the stamp the request's extensions end with.
#[derive(Default)]
struct Outer {
    last: Mutex<Option<Stamp>>,
}

#[async_trait::async_trait]
impl Middleware for Outer {
    async fn handle(
        &self,
        request: reqwest::Request,
        extensions: &mut http::Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let result = next.run(request, extensions).await;
        *self.last.lock().unwrap() = extensions.get::<Stamp>().copied();
        result
    }
}

#[tokio::test]
async fn each_attempt_runs_the_chain_with_its_own_extensions() {
    let server = Server::start(flaky(2)).await;
    let outer = Arc::new(Outer::default());
    let inner = Arc::new(Inner::default());
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let client = ClientBuilder::new(http)
        .with_arc(Arc::clone(&outer) as Arc<dyn Middleware>)
        .with(RetryMiddleware::new(fast(4)))
        .with_arc(Arc::clone(&inner) as Arc<dyn Middleware>)
        .build();
    client
        .get(&server.url)
        .header(CALL, "stamped")
        .send()
        .await
        .unwrap();
    // No attempt saw another's stamp, and the request ends with the last's.
    assert_eq!(
        *inner.seen.lock().unwrap(),
        [(1, None), (2, None), (3, None)]
    );
    assert_eq!(*outer.last.lock().unwrap(), Some(Stamp(3)));
    server.stop().await;
}

/// A bad answer as an error, classified by its status, headers and body.
async fn created(response: reqwest::Response) -> Result<String, reqwest_middleware::Error> {
    if !response.status().is_success() {
        return Err(reqwest_middleware::Error::middleware(
            HttpError::read(response).await,
        ));
    }
    Ok(response.text().await?)
}

#[retry(max = 3, base = "2ms")]
async fn create(
    client: &ClientWithMiddleware,
    url: &str,
) -> Result<String, reqwest_middleware::Error> {
    let response = client.post(url).header(CALL, "nested").send().await?;
    created(response).await
}

#[tokio::test]
async fn inside_a_retried_fn_a_request_makes_one_attempt_and_resends_the_outer_key() {
    let server = Server::start(flaky(2)).await;
    let client = client(RetryMiddleware::new(fast(4)));
    assert_eq!(
        create(&client, &server.url).await.unwrap(),
        r#"{"choices": []}"#
    );
    // The fn's three attempts, one request each (not four each), all with
    // the key derived from the fn's call.
    let seen = server.of("nested");
    assert_eq!(seen.len(), 3);
    assert_eq!(keys(&seen).len(), 1);
    server.stop().await;
}

/// A 503 that sends its head and the start of a body, then nothing: the
/// body read for the classification is bounded in time, so the call goes
/// on (a retry, then the last 503 as it is) where it used to hang.
#[tokio::test]
async fn a_body_that_stalls_after_its_head_never_holds_the_call() {
    let server = Server::start(|_, _| {
        let start = futures_util::stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(
            br#"{"error": {"type": "overloaded_error""#,
        ))]);
        let body = Body::from_stream(futures_util::StreamExt::chain(
            start,
            futures_util::stream::pending(),
        ));
        reply(503, &[], body)
    })
    .await;
    // The default bound, 1 s, on each of the two attempts.
    let client = client(RetryMiddleware::new(fast(2)));
    let response = tokio::time::timeout(
        Duration::from_secs(30),
        client.get(&server.url).header(CALL, "stalled").send(),
    )
    .await
    .expect("the call hung on a body it did not ask for")
    .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(server.of("stalled").len(), 2, "the 503 was retried");
    drop(response);
    server.stop().await;
}
