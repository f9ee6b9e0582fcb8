//! `tenacious::tower` against a faulty axum service: over real HTTP on
//! loopback (a hyper client as the retried service), and with the axum
//! `Router` itself as the inner service, under `tower::ServiceBuilder`
//! with tower's own `timeout` and `concurrency_limit`.
//!
//! The server counts the requests each route gets and keeps the
//! `Idempotency-Key` each carried: the attempts are counted where they
//! land. The loopback tests run on the real clock (tokio's paused clock
//! would jump past a socket's waits) with waits of a millisecond or two,
//! and assert counts, statuses and keys, never durations. The tests of
//! the `Router` run on the paused clock, where the waits are the
//! policy's and the handlers' own, and assert the time they took there.
use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::State;
use axum::http::{HeaderMap, Request, Response, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tenacious::stats::CallStats;
use tenacious::tower::{Error, GaveUp, NoCheck, RetryLayer, RetryService};
use tenacious::{
    Attempt, Breaker, Classify, ErrorClass, HttpError, IdempotencyKey, Jitter, Policy, RetryBudget,
    StopReason, Throttle, retry,
};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tower::{BoxError, Service, ServiceBuilder, ServiceExt, service_fn};

const KEY: &str = "idempotency-key";
/// The header a layer told to send the key under another name uses.
const OTHER_KEY: &str = "x-request-key";

/// What the server saw: the requests of each route, and the key each
/// request carried (under either name), in arrival order.
#[derive(Default)]
struct Ledger {
    hits: HashMap<&'static str, u32>,
    keys: HashMap<&'static str, Vec<Option<String>>>,
    in_flight: u32,
    most_in_flight: u32,
}

type Shared = Arc<Mutex<Ledger>>;

/// Counts a request to `route`; its number, 1 for the first.
fn hit(ledger: &Shared, route: &'static str, headers: &HeaderMap) -> u32 {
    let mut ledger = ledger.lock().unwrap();
    let key = headers
        .get(KEY)
        .or_else(|| headers.get(OTHER_KEY))
        .map(|value| value.to_str().unwrap().to_owned());
    ledger.keys.entry(route).or_default().push(key);
    let hits = ledger.hits.entry(route).or_default();
    *hits += 1;
    *hits
}

fn unavailable(n: u32) -> axum::response::Response {
    (StatusCode::SERVICE_UNAVAILABLE, format!("down {n}")).into_response()
}

/// The faulty provider: every route a fault, and what it did.
fn app() -> (Router, Shared) {
    let ledger = Shared::default();
    let router = Router::new()
        // Down twice, then up.
        .route(
            "/flaky",
            post(|State(l): State<Shared>, headers: HeaderMap| async move {
                match hit(&l, "/flaky", &headers) {
                    n @ (1 | 2) => unavailable(n),
                    n => format!("ok after {n}").into_response(),
                }
            }),
        )
        // Rate limited once, with a wait in seconds: for the paused clock.
        .route(
            "/limited",
            post(|State(l): State<Shared>, headers: HeaderMap| async move {
                match hit(&l, "/limited", &headers) {
                    1 => (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "1")], "slow down")
                        .into_response(),
                    _ => "ok".into_response(),
                }
            }),
        )
        // Rate limited once, with a wait in milliseconds: for loopback.
        .route(
            "/limited-ms",
            post(|State(l): State<Shared>, headers: HeaderMap| async move {
                match hit(&l, "/limited-ms", &headers) {
                    1 => (
                        StatusCode::TOO_MANY_REQUESTS,
                        [("retry-after-ms", "2")],
                        "slow down",
                    )
                        .into_response(),
                    _ => "ok".into_response(),
                }
            }),
        )
        // The request is wrong: retrying it changes nothing.
        .route(
            "/invalid",
            post(|State(l): State<Shared>, headers: HeaderMap| async move {
                hit(&l, "/invalid", &headers);
                (
                    StatusCode::BAD_REQUEST,
                    r#"{"error": {"message": "`model` is required", "type": "invalid_request_error"}}"#,
                )
            }),
        )
        // Down for good.
        .route(
            "/down",
            post(|State(l): State<Shared>, headers: HeaderMap| async move {
                unavailable(hit(&l, "/down", &headers))
            }),
        )
        // The first request hangs for a minute; the others answer at once.
        .route(
            "/stuck-once",
            post(|State(l): State<Shared>, headers: HeaderMap| async move {
                if hit(&l, "/stuck-once", &headers) == 1 {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                }
                "ok"
            }),
        )
        // Every request hangs for a minute.
        .route(
            "/stuck",
            post(|State(l): State<Shared>, headers: HeaderMap| async move {
                hit(&l, "/stuck", &headers);
                tokio::time::sleep(Duration::from_secs(60)).await;
                "late"
            }),
        )
        // Takes 100 ms, counting the requests in flight; down for its
        // first three requests.
        .route(
            "/busy",
            post(|State(l): State<Shared>, headers: HeaderMap| async move {
                let n = hit(&l, "/busy", &headers);
                {
                    let mut ledger = l.lock().unwrap();
                    ledger.in_flight += 1;
                    ledger.most_in_flight = ledger.most_in_flight.max(ledger.in_flight);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                l.lock().unwrap().in_flight -= 1;
                if n <= 3 {
                    unavailable(n)
                } else {
                    "ok".into_response()
                }
            }),
        )
        // Up, with none of the caller's rate-limit window left: its next
        // request may go in 5 s, when the window (2 requests a 10 s) has
        // refilled one.
        .route(
            "/window",
            post(|State(l): State<Shared>, headers: HeaderMap| async move {
                hit(&l, "/window", &headers);
                (
                    [
                        ("x-ratelimit-limit-requests", "2"),
                        ("x-ratelimit-remaining-requests", "0"),
                        ("x-ratelimit-reset-requests", "10s"),
                    ],
                    "ok",
                )
            }),
        )
        .with_state(Arc::clone(&ledger));
    (router, ledger)
}

fn hits(ledger: &Shared, route: &str) -> u32 {
    ledger.lock().unwrap().hits.get(route).copied().unwrap_or(0)
}

fn keys(ledger: &Shared, route: &str) -> Vec<Option<String>> {
    ledger
        .lock()
        .unwrap()
        .keys
        .get(route)
        .cloned()
        .unwrap_or_default()
}

/// Every request to `route` carried one key, the same, a UUID.
fn one_key(ledger: &Shared, route: &str) -> IdempotencyKey {
    let keys = keys(ledger, route);
    let first = keys[0].clone().expect("the request carried a key");
    assert!(
        keys.iter().all(|key| key.as_deref() == Some(&first)),
        "{keys:?}"
    );
    first.parse().unwrap()
}

/// The provider on a free loopback port, stopped when dropped.
struct Server {
    base: String,
    ledger: Shared,
    task: JoinHandle<()>,
}

impl Server {
    async fn start() -> Self {
        let (router, ledger) = app();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        Self { base, ledger, task }
    }

    fn request(&self, route: &str) -> Request<Full<Bytes>> {
        Request::post(format!("{}{route}", self.base))
            .body(Full::new(Bytes::from_static(b"{\"model\": \"o4\"}")))
            .unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The hyper client's error, classified: a connection that was never made
/// sent nothing.
#[derive(Debug)]
struct ClientError(hyper_util::client::legacy::Error);

impl Classify for ClientError {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
    fn not_sent(&self) -> bool {
        self.0.is_connect()
    }
}

type HyperClient = Client<HttpConnector, Full<Bytes>>;

fn hyper_client() -> HyperClient {
    Client::builder(TokioExecutor::new()).build_http()
}

async fn text<B: HttpBody<Data = Bytes, Error: std::fmt::Debug>>(response: Response<B>) -> String {
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

fn request(route: &str) -> Request<String> {
    Request::post(route)
        .body("{\"model\": \"o4\"}".to_owned())
        .unwrap()
}

/// A policy retrying at once, for the real clock.
const QUICK: Policy = Policy::new()
    .max(3)
    .base(Duration::from_millis(1))
    .jitter(Jitter::None);

static LOOPBACK: CallStats = CallStats::new("tower.loopback");
static LOOPBACK_POLICY: Policy = QUICK.stats(&LOOPBACK);

#[tokio::test]
async fn over_loopback_a_503_is_retried_with_the_same_key_and_counted_by_name() {
    let server = Server::start().await;
    let client = ServiceBuilder::new()
        .layer(RetryLayer::new(&LOOPBACK_POLICY))
        .map_err(ClientError)
        .service(hyper_client());
    let response = client.oneshot(server.request("/flaky")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.extensions().get::<GaveUp>().is_none());
    assert_eq!(text(response).await, "ok after 3");
    assert_eq!(hits(&server.ledger, "/flaky"), 3);
    one_key(&server.ledger, "/flaky");

    let stats = LOOPBACK.snapshot();
    assert_eq!(
        (stats.calls(), stats.attempts(), stats.retries()),
        (1, 3, 2)
    );
    assert_eq!((stats.retried(), stats.recovered()), (1, 1));
    assert_eq!(stats.errors_of(ErrorClass::Transient), 2);
    assert_eq!(stats.errors()[0].variant, "Status503");
    // Under the name given, with every fn's and call's records.
    let snapshot = tenacious::stats::snapshot();
    assert_eq!(snapshot.get("tower.loopback").unwrap().calls(), 1);
}

#[tokio::test]
async fn over_loopback_a_400_is_not_retried_and_is_the_answer_as_sent() {
    let server = Server::start().await;
    let client = ServiceBuilder::new()
        .layer(RetryLayer::new(&QUICK))
        .map_err(ClientError)
        .service(hyper_client());
    let response = client.oneshot(server.request("/invalid")).await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let gave_up = *response.extensions().get::<GaveUp>().unwrap();
    assert_eq!(gave_up.attempts(), 1);
    assert_eq!(gave_up.stop_reason(), StopReason::NotRetryable);
    assert_eq!(gave_up.class(), ErrorClass::Invalid);
    // The provider's body reaches the caller untouched.
    assert!(text(response).await.contains("`model` is required"));
    assert_eq!(hits(&server.ledger, "/invalid"), 1);
}

#[tokio::test]
async fn over_loopback_a_429_is_retried_after_its_hint() {
    let server = Server::start().await;
    let client = ServiceBuilder::new()
        .layer(RetryLayer::new(&QUICK))
        .map_err(ClientError)
        .service(hyper_client());
    let response = client.oneshot(server.request("/limited-ms")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(hits(&server.ledger, "/limited-ms"), 2);
    one_key(&server.ledger, "/limited-ms");
}

#[tokio::test]
async fn over_loopback_a_refused_connection_is_an_error_that_sent_nothing() {
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    static REFUSED: CallStats = CallStats::new("tower.refused");
    static NOT_IDEMPOTENT: Policy = QUICK.idempotent(false).stats(&REFUSED);
    let client = ServiceBuilder::new()
        .layer(RetryLayer::new(&NOT_IDEMPOTENT))
        .map_err(ClientError)
        .service(hyper_client());
    let request = Request::post(format!("http://127.0.0.1:{port}/"))
        .body(Full::new(Bytes::new()))
        .unwrap();
    let error = client.oneshot(request).await.unwrap_err();
    // Retried though the call is not idempotent: nothing was sent.
    let Error::Service(ClientError(error)) = &error else {
        panic!("{error:?}")
    };
    assert!(error.is_connect());
    let stats = REFUSED.snapshot();
    assert_eq!(
        (stats.attempts(), stats.gave_up(StopReason::Exhausted)),
        (3, 1)
    );
}

#[tokio::test(start_paused = true)]
async fn a_429_waits_its_retry_after() {
    let (router, ledger) = app();
    static RATE: CallStats = CallStats::new("tower.rate");
    static POLICY: Policy = Policy::new().base(Duration::from_millis(10)).stats(&RATE);
    let service = RetryService::new(router, &POLICY);
    let start = Instant::now();
    let response = service.oneshot(request("/limited")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // The hint is a floor under the backoff.
    let waited = start.elapsed();
    assert!(waited >= Duration::from_secs(1), "{waited:?}");
    assert!(waited <= Duration::from_millis(1_010), "{waited:?}");
    assert_eq!(hits(&ledger, "/limited"), 2);
    assert_eq!(RATE.snapshot().errors_of(ErrorClass::RateLimited), 1);
}

#[tokio::test(start_paused = true)]
async fn the_last_bad_response_is_the_answer_with_its_body() {
    let (router, ledger) = app();
    static POLICY: Policy = Policy::new().max(4);
    let response = RetryService::new(router, &POLICY)
        .oneshot(request("/down"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let gave_up = *response.extensions().get::<GaveUp>().unwrap();
    assert_eq!(
        (gave_up.attempts(), gave_up.stop_reason(), gave_up.class()),
        (4, StopReason::Exhausted, ErrorClass::Transient)
    );
    assert_eq!(text(response).await, "down 4");
    assert_eq!(hits(&ledger, "/down"), 4);
}

#[tokio::test(start_paused = true)]
async fn a_spent_budget_stops_the_retries() {
    let (router, ledger) = app();
    // Two retries' worth.
    static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    static POLICY: Policy = Policy::new().budget(&BUDGET);
    let service = RetryService::new(router, &POLICY);
    let first = service.clone().oneshot(request("/down")).await.unwrap();
    assert_eq!(
        first.extensions().get::<GaveUp>().unwrap().stop_reason(),
        StopReason::Exhausted
    );
    assert_eq!(BUDGET.balance(), 0);
    let second = service.oneshot(request("/down")).await.unwrap();
    let gave_up = *second.extensions().get::<GaveUp>().unwrap();
    assert_eq!(
        (gave_up.attempts(), gave_up.stop_reason()),
        (1, StopReason::Budget)
    );
    assert_eq!(hits(&ledger, "/down"), 4);
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_refuses_a_call_before_it_sends_anything() {
    let (router, ledger) = app();
    static PROVIDER: Breaker = Breaker::new().min_throughput(3);
    static POLICY: Policy = Policy::new().breaker(&PROVIDER);
    let service = RetryService::new(router, &POLICY);
    let response = service.clone().oneshot(request("/down")).await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(PROVIDER.is_open());
    let error = service.oneshot(request("/down")).await.unwrap_err();
    let Error::GuardRefused(refused) = error else {
        panic!("{error:?}")
    };
    assert_eq!(refused.reason(), StopReason::CircuitOpen);
    assert_eq!(hits(&ledger, "/down"), 3, "the refused call sent nothing");
}

#[tokio::test(start_paused = true)]
async fn under_service_builder_a_concurrency_limit_bounds_every_attempt_in_flight() {
    let (router, ledger) = app();
    static POLICY: Policy = Policy::new().base(Duration::from_millis(10));
    let service = ServiceBuilder::new()
        .timeout(Duration::from_secs(30))
        .layer(RetryLayer::new(&POLICY))
        .concurrency_limit(2)
        .service(router);
    let calls: Vec<_> = (0..6)
        .map(|_| tokio::spawn(service.clone().oneshot(request("/busy"))))
        .collect();
    for call in calls {
        let response = call.await.unwrap().unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    let ledger = ledger.lock().unwrap();
    // Six calls, three of whose first attempts got a 503.
    assert_eq!(ledger.hits["/busy"], 9);
    assert_eq!(ledger.most_in_flight, 2);
}

#[tokio::test(start_paused = true)]
async fn under_service_builder_tower_s_timeout_outside_bounds_the_whole_call() {
    let (router, ledger) = app();
    static POLICY: Policy = Policy::new()
        .max(10)
        .base(Duration::from_secs(1))
        .jitter(Jitter::None);
    let service = ServiceBuilder::new()
        .timeout(Duration::from_millis(3_500))
        .layer(RetryLayer::new(&POLICY))
        .service(router);
    let start = Instant::now();
    let error: BoxError = service.oneshot(request("/down")).await.unwrap_err();
    assert!(error.is::<tower::timeout::error::Elapsed>(), "{error}");
    assert_eq!(start.elapsed(), Duration::from_millis(3_500));
    // Attempts at 0 s, 1 s and 3 s; the next would have been at 7 s.
    assert_eq!(hits(&ledger, "/down"), 3);
}

/// The error of a stack whose inner `timeout` layer says `BoxError`.
#[derive(Debug)]
enum StackError {
    TimedOut,
    Other(BoxError),
}

impl From<BoxError> for StackError {
    fn from(error: BoxError) -> Self {
        if error.is::<tower::timeout::error::Elapsed>() {
            StackError::TimedOut
        } else {
            StackError::Other(error)
        }
    }
}

impl Classify for StackError {
    fn classify(&self) -> ErrorClass {
        match self {
            StackError::TimedOut => ErrorClass::Transient,
            StackError::Other(error) => match error.downcast_ref::<io::Error>() {
                Some(error) => error.classify(),
                None => ErrorClass::Fatal,
            },
        }
    }
}

#[tokio::test(start_paused = true)]
async fn under_service_builder_tower_s_timeout_inside_times_each_attempt() {
    let (router, ledger) = app();
    static POLICY: Policy = Policy::new().base(Duration::from_millis(10));
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(&POLICY))
        .map_err(StackError::from)
        .timeout(Duration::from_secs(2))
        .service(router);
    let start = Instant::now();
    let response = service.oneshot(request("/stuck-once")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(start.elapsed() < Duration::from_millis(2_020));
    assert_eq!(hits(&ledger, "/stuck-once"), 2);
    one_key(&ledger, "/stuck-once");
}

#[tokio::test(start_paused = true)]
async fn the_policy_s_timeout_cuts_an_attempt_and_its_retry_costs_a_timeout_s_tokens() {
    let (router, ledger) = app();
    static BUDGET: RetryBudget = RetryBudget::new();
    static POLICY: Policy = Policy::new()
        .timeout(Duration::from_secs(2))
        .base(Duration::from_millis(10))
        .budget(&BUDGET);
    let service = RetryService::new(router.clone(), &POLICY);
    let start = Instant::now();
    let response = service
        .clone()
        .oneshot(request("/stuck-once"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(start.elapsed() >= Duration::from_secs(2));
    assert!(start.elapsed() < Duration::from_millis(2_020));
    assert_eq!(hits(&ledger, "/stuck-once"), 2);
    // The retry after a timeout took 10 tokens; the success gave them back.
    assert_eq!(BUDGET.balance(), 500);

    // Never answering: every attempt times out, and the last one's
    // `Elapsed` is the call's error.
    let error = service.oneshot(request("/stuck")).await.unwrap_err();
    let Error::TimedOut(elapsed) = error else {
        panic!("{error:?}")
    };
    assert_eq!(elapsed.limit(), Duration::from_secs(2));
    assert_eq!(hits(&ledger, "/stuck"), 3);
    assert_eq!(BUDGET.balance(), 480);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_cuts_the_attempt_that_would_run_past_it() {
    let (router, ledger) = app();
    static POLICY: Policy = Policy::new().deadline(Duration::from_secs(5));
    let start = Instant::now();
    let error = RetryService::new(router, &POLICY)
        .oneshot(request("/stuck"))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::TimedOut(_)), "{error:?}");
    // Cut at the deadline, with no room left for a retry.
    assert_eq!(start.elapsed(), Duration::from_secs(5));
    assert_eq!(hits(&ledger, "/stuck"), 1);
}

#[tokio::test(start_paused = true)]
async fn the_caller_s_own_key_is_kept_and_another_header_can_carry_ours() {
    let (router, ledger) = app();
    static POLICY: Policy = Policy::new();
    let mut own = request("/flaky");
    own.headers_mut().insert(KEY, "caller-key".parse().unwrap());
    let response = RetryService::new(router.clone(), &POLICY)
        .oneshot(own)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        keys(&ledger, "/flaky"),
        vec![Some("caller-key".to_owned()); 3]
    );

    // Under another name, one key on both attempts.
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(&POLICY).key_header(http::HeaderName::from_static(OTHER_KEY)))
        .service(router.clone());
    let response = service.oneshot(request("/limited")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(hits(&ledger, "/limited"), 2);
    one_key(&ledger, "/limited");

    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(&POLICY).without_key())
        .service(router);
    service.oneshot(request("/invalid")).await.unwrap();
    assert_eq!(keys(&ledger, "/invalid"), vec![None]);
}

/// What the retried fn below gets wrong: a status the layer gave up on.
#[derive(Debug, tenacious::Classify)]
enum ApiError {
    #[classify(transparent)]
    Status(HttpError),
}

static NESTED: Policy = Policy::new().base(Duration::from_millis(10));

/// A `#[retry]` fn calling a retried service: the service's call is nested
/// in the fn's attempt.
#[retry(max = 2, base = "10ms")]
async fn fetch(service: &RetryService<Router>, gave_up: &mut Vec<GaveUp>) -> Result<(), ApiError> {
    let response = service.clone().oneshot(request("/down")).await.unwrap();
    gave_up.extend(response.extensions().get::<GaveUp>().copied());
    if response.status().is_success() {
        Ok(())
    } else {
        Err(ApiError::Status(HttpError::from_response(&response)))
    }
}

#[tokio::test(start_paused = true)]
async fn inside_a_retried_fn_the_service_makes_one_attempt_with_the_outer_call_s_key() {
    let (router, ledger) = app();
    let service = RetryService::new(router, &NESTED);
    let mut gave_up = Vec::new();
    let error = fetch(&service, &mut gave_up).await.unwrap_err();
    assert_eq!(error.classify(), ErrorClass::Transient);
    // Two attempts of the fn, one request each: retries do not multiply.
    assert_eq!(hits(&ledger, "/down"), 2);
    assert!(
        gave_up
            .iter()
            .all(|g| g.stop_reason() == StopReason::Nested)
    );
    // The key is derived from the fn's call's: the same on both.
    one_key(&ledger, "/down");
}

#[tokio::test(start_paused = true)]
async fn a_service_that_speaks_no_http_is_retried_on_its_errors_with_a_key_of_its_own() {
    #[derive(Clone, Debug)]
    struct Job {
        n: u32,
        key: Option<IdempotencyKey>,
    }
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let inner = {
        let seen = Arc::clone(&seen);
        service_fn(move |job: Job| {
            let seen = Arc::clone(&seen);
            async move {
                let attempt = Attempt::current().expect("the inner future runs in the attempt");
                seen.lock().unwrap().push((attempt.number(), job.key));
                assert_eq!(job.key, Some(attempt.idempotency_key()));
                if CALLS.fetch_add(1, Ordering::Relaxed) < 2 {
                    Err(io::Error::from(io::ErrorKind::ConnectionReset))
                } else {
                    Ok(job.n * 2)
                }
            }
        })
    };
    static POLICY: Policy = Policy::new();
    let service = ServiceBuilder::new()
        .layer(
            RetryLayer::new(&POLICY)
                .check(NoCheck)
                .key_with(|job: &mut Job, key| job.key = Some(key)),
        )
        .service(inner);
    let answer = service.oneshot(Job { n: 21, key: None }).await.unwrap();
    assert_eq!(answer, 42);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(seen.iter().all(|s| s.1 == seen[0].1));
}

#[tokio::test(start_paused = true)]
async fn a_check_of_the_caller_s_own_decides_what_is_retried() {
    let (router, ledger) = app();
    static POLICY: Policy = Policy::new();
    // A 503 is the caller's to handle: only 429s are retried.
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(&POLICY).check(|response: &Response<Body>| {
            if response.status() == StatusCode::TOO_MANY_REQUESTS {
                Err(HttpError::from_response(response))
            } else {
                Ok(())
            }
        }))
        .service(router);
    let response = service.clone().oneshot(request("/down")).await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.extensions().get::<GaveUp>().is_none());
    assert_eq!(hits(&ledger, "/down"), 1);
    let response = service.oneshot(request("/limited")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(hits(&ledger, "/limited"), 2);
}

#[tokio::test(start_paused = true)]
async fn a_good_response_s_rate_limit_headers_pace_the_next_call() {
    let (router, ledger) = app();
    static WINDOW: Throttle = Throttle::new();
    static POLICY: Policy = Policy::new().throttle(&WINDOW);
    let service = RetryService::new(router, &POLICY);
    let response = service.clone().oneshot(request("/window")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let start = Instant::now();
    let response = service.oneshot(request("/window")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // Paced by the first answer's window, not sent at once.
    let waited = start.elapsed();
    assert!(waited >= Duration::from_secs(4), "{waited:?}");
    assert_eq!(WINDOW.stats().waits, 1);
    assert_eq!(hits(&ledger, "/window"), 2);
}

#[test]
fn the_futures_are_send_when_the_service_is() {
    fn send<T: Send>(_: &T) {}
    static POLICY: Policy = Policy::new();
    let (router, _) = app();
    let mut service = RetryService::new(router, &POLICY);
    send(&service.call(request("/flaky")));
    let mut client = ServiceBuilder::new()
        .layer(RetryLayer::new(&POLICY))
        .map_err(ClientError)
        .service(hyper_client());
    let request = Request::post("http://127.0.0.1:1/")
        .body(Full::new(Bytes::new()))
        .unwrap();
    send(&client.call(request));
}
