//! `tenacious::tower::RouteLayer` over real HTTP on loopback: each target
//! an axum server started here, counting the requests it gets and the
//! path, query and key of each; the service under the route a reqwest
//! client taking `http::Request<String>`s.
//!
//! On the real clock (tokio's paused clock would jump past a socket's
//! waits), with backoffs of a millisecond and one `Retry-After: 1`; the
//! tests assert statuses, counts, paths and which target served, never
//! durations. The tests that need no socket run on the paused clock.
use std::convert::Infallible;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use tenacious::route::{Route, RouteStop, Target, TargetError, Then};
use tenacious::tower::{AttemptError, RouteFailed, RouteLayer, RouteService, ServedBy};
use tenacious::{Classify, ErrorClass, HttpError, Policy, StopReason};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tower::{BoxError, Service, ServiceBuilder, ServiceExt, service_fn};

/// One request, as a server saw it.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    query: Option<String>,
    key: Option<String>,
}

/// What a server answers its `n`th request (1 for the first).
type Script = dyn Fn(u32, &Seen) -> Response + Send + Sync;

struct Shared {
    script: Box<Script>,
    seen: Mutex<Vec<Seen>>,
}

/// An axum server on a free loopback port, answering every path by its
/// script; stopped when dropped.
struct Server {
    addr: std::net::SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Server {
    async fn start(script: impl Fn(u32, &Seen) -> Response + Send + Sync + 'static) -> Self {
        let shared = Arc::new(Shared {
            script: Box::new(script),
            seen: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&shared));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { addr, shared, task }
    }

    /// The server's URI with the path `path`: a target's base.
    fn base(&self, path: &str) -> Uri {
        format!("http://{}{path}", self.addr).parse().unwrap()
    }

    fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }

    fn count(&self) -> usize {
        self.seen().len()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn answer(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap) -> Response {
    let seen = Seen {
        path: uri.path().to_owned(),
        query: uri.query().map(str::to_owned),
        key: headers
            .get("idempotency-key")
            .map(|value| value.to_str().unwrap().to_owned()),
    };
    let n = {
        let mut log = shared.seen.lock().unwrap();
        log.push(seen.clone());
        u32::try_from(log.len()).unwrap()
    };
    (shared.script)(n, &seen)
}

fn ok(body: &'static str) -> Response {
    (StatusCode::OK, body).into_response()
}

fn unavailable() -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, "down").into_response()
}

fn rate_limited() -> Response {
    (
        StatusCode::TOO_MANY_REQUESTS,
        [("retry-after", "1")],
        "slow down",
    )
        .into_response()
}

/// A loopback address nothing listens on: a listener bound, then dropped.
async fn dead_base(path: &str) -> Uri {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}{path}").parse().unwrap()
}

/// Retries within a target a millisecond or two apart.
const fn quick(max: u32) -> Policy {
    Policy::new().max(max).base(Duration::from_millis(1))
}

/// The client's error, classified: a connect error sent nothing.
#[derive(Debug)]
struct ClientError(reqwest::Error);

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

impl Classify for ClientError {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }

    fn not_sent(&self) -> bool {
        self.0.is_connect()
    }
}

type Answer = http::Response<reqwest::Body>;
type Failed = RouteFailed<ClientError, Answer, HttpError>;

/// A reqwest client as a tower service of `http::Request<String>`s.
fn client()
-> impl Service<http::Request<String>, Response = Answer, Error = ClientError, Future = impl Send>
+ Clone
+ Send
+ 'static {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    service_fn(move |request: http::Request<String>| {
        let client = client.clone();
        async move {
            let request = reqwest::Request::try_from(request).map_err(ClientError)?;
            let response = client.execute(request).await.map_err(ClientError)?;
            Ok::<_, ClientError>(Answer::from(response))
        }
    })
}

fn post(uri: &str) -> http::Request<String> {
    http::Request::post(uri).body("{}".to_owned()).unwrap()
}

async fn call(route: Route<Uri>, request: http::Request<String>) -> Result<Answer, Failed> {
    ServiceBuilder::new()
        .layer(RouteLayer::new(route))
        .service(client())
        .oneshot(request)
        .await
}

fn served_by<B>(response: &http::Response<B>) -> ServedBy {
    *response.extensions().get::<ServedBy>().unwrap()
}

async fn text(response: Answer) -> String {
    reqwest::Response::from(response).text().await.unwrap()
}

#[tokio::test]
async fn a_primary_that_answers_503_every_time_is_retried_then_the_fallback_serves() {
    let primary = Server::start(|_, _| unavailable()).await;
    let fallback = Server::start(|_, _| ok("from the fallback")).await;
    let route = Route::builder("tw-503")
        .target(Target::new("tw-503-primary", primary.base("/v1")).policy(quick(3)))
        .target(Target::new("tw-503-fallback", fallback.base("/v1")).policy(quick(3)))
        .build()
        .unwrap();
    let response = call(route, post("/v1/chat/completions")).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let served = served_by(&response);
    assert_eq!(
        (
            served.name(),
            served.index(),
            served.attempts(),
            served.fell_back()
        ),
        ("tw-503-fallback", 1, 1, true)
    );
    assert_eq!(text(response).await, "from the fallback");
    assert_eq!((primary.count(), fallback.count()), (3, 1));
    // One key on every attempt at the primary; the fallback's is its own call's.
    let keys: Vec<_> = primary
        .seen()
        .into_iter()
        .map(|seen| seen.key.unwrap())
        .collect();
    assert!(keys.iter().all(|key| *key == keys[0]));
    assert_ne!(fallback.seen()[0].key.clone().unwrap(), keys[0]);
}

#[tokio::test]
async fn a_content_filter_stops_the_route_and_the_fallback_is_never_sent_it() {
    let primary = Server::start(|_, _| {
        (
            StatusCode::BAD_REQUEST,
            [("content-type", "application/json")],
            r#"{"error":{"code":"content_filter","message":"refused"}}"#,
        )
            .into_response()
    })
    .await;
    let fallback = Server::start(|_, _| ok("from the fallback")).await;
    let route = Route::builder("tw-filter")
        .target(Target::new("tw-filter-primary", primary.base("/v1")).policy(quick(3)))
        .target(Target::new("tw-filter-fallback", fallback.base("/v1")))
        .build()
        .unwrap();
    let failed = call(route, post("/v1/chat/completions")).await.unwrap_err();
    assert_eq!(failed.classify(), ErrorClass::Invalid);
    assert_eq!(failed.failure().reason(), RouteStop::Stopped);
    let tried = &failed.failure().tried()[0];
    assert_eq!(
        (
            tried.target(),
            tried.attempts(),
            tried.stop_reason(),
            tried.then()
        ),
        ("tw-filter-primary", 1, StopReason::NotRetryable, Then::Stop)
    );
    assert_eq!((primary.count(), fallback.count()), (1, 0));
    // The answer, body untouched, for the caller to read.
    let response = failed.into_last_response().unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(text(response).await.contains("content_filter"));
}

#[tokio::test]
async fn a_primary_that_refuses_connections_is_left_for_the_fallback() {
    let fallback = Server::start(|_, _| ok("from the fallback")).await;
    let route = Route::builder("tw-down")
        .target(Target::new("tw-down-primary", dead_base("/v1").await).policy(quick(2)))
        .target(Target::new("tw-down-fallback", fallback.base("/v1")))
        .build()
        .unwrap();
    let response = call(
        route,
        http::Request::get("/v1/models")
            .body(String::new())
            .unwrap(),
    )
    .await
    .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(served_by(&response).name(), "tw-down-fallback");
    assert_eq!(fallback.count(), 1);
    assert_eq!(fallback.seen()[0].path, "/v1/models");
}

#[tokio::test]
async fn every_target_down_is_a_transient_route_failure_tower_can_box() {
    let route = Route::builder("tw-all-down")
        .target(Target::new("tw-all-down-a", dead_base("/v1").await).policy(quick(2)))
        .target(Target::new("tw-all-down-b", dead_base("/v1").await).policy(quick(1)))
        .build()
        .unwrap();
    let failed = call(route, post("/v1/chat/completions")).await.unwrap_err();
    assert_eq!(failed.classify(), ErrorClass::Transient);
    assert!(failed.not_sent(), "a refused connection sent nothing");
    assert_eq!(failed.failure().reason(), RouteStop::NoTargetLeft);
    let attempts: Vec<_> = failed
        .failure()
        .tried()
        .iter()
        .map(|tried| (tried.target(), tried.attempts()))
        .collect();
    assert_eq!(attempts, [("tw-all-down-a", 2), ("tw-all-down-b", 1)]);
    assert!(failed.last_response().is_none());
    match failed.failure().last().unwrap().error() {
        TargetError::Answer(AttemptError::Service(ClientError(error))) => {
            assert!(error.is_connect())
        }
        other => panic!("a connect error, not {other:?}"),
    }
    // Boxed for the layers on top, its source is the last error.
    let boxed: BoxError = failed.into();
    let source = boxed.source().unwrap();
    assert!(
        source
            .downcast_ref::<AttemptError<ClientError, Answer, HttpError>>()
            .is_some()
    );
}

#[tokio::test]
async fn a_429_is_waited_out_at_the_primary_when_its_policy_allows() {
    let primary = Server::start(|n, _| {
        if n == 1 {
            rate_limited()
        } else {
            ok("from the primary")
        }
    })
    .await;
    let fallback = Server::start(|_, _| ok("from the fallback")).await;
    let route = Route::builder("tw-429-wait")
        .target(
            Target::new("tw-429-wait-primary", primary.base("/v1"))
                .policy(quick(3).max_retry_after(Duration::from_secs(5))),
        )
        .target(Target::new("tw-429-wait-fallback", fallback.base("/v1")))
        .build()
        .unwrap();
    let response = call(route, post("/v1/chat/completions")).await.unwrap();
    let served = served_by(&response);
    assert_eq!(
        (served.name(), served.attempts()),
        ("tw-429-wait-primary", 2)
    );
    assert_eq!(text(response).await, "from the primary");
    assert_eq!((primary.count(), fallback.count()), (2, 0));
}

#[tokio::test]
async fn a_429_whose_hint_exceeds_max_retry_after_moves_on() {
    let primary = Server::start(|_, _| rate_limited()).await;
    let fallback = Server::start(|_, _| ok("from the fallback")).await;
    let route = Route::builder("tw-429-long")
        .target(
            Target::new("tw-429-long-primary", primary.base("/v1"))
                .policy(quick(3).max_retry_after(Duration::from_millis(100))),
        )
        .target(Target::new("tw-429-long-fallback", fallback.base("/v1")))
        .build()
        .unwrap();
    let response = call(route, post("/v1/chat/completions")).await.unwrap();
    assert_eq!(served_by(&response).name(), "tw-429-long-fallback");
    assert_eq!((primary.count(), fallback.count()), (1, 1));
}

#[tokio::test]
async fn the_path_after_the_first_base_goes_after_each_targets_base() {
    let primary = Server::start(|_, seen| {
        assert_eq!(seen.path, "/v1/chat/completions");
        unavailable()
    })
    .await;
    let fallback = Server::start(|_, seen| {
        assert_eq!(seen.path, "/openai/deployments/gpt/chat/completions");
        ok("from the fallback")
    })
    .await;
    let route = Route::builder("tw-paths")
        .target(Target::new("tw-paths-primary", primary.base("/v1/")).policy(quick(1)))
        .target(Target::new(
            "tw-paths-fallback",
            fallback.base("/openai/deployments/gpt?api-version=2024-10-21"),
        ))
        .build()
        .unwrap();
    let service = ServiceBuilder::new()
        .layer(RouteLayer::new(route))
        .service(client());
    // Against the first target's base, absolute or not ...
    let primary_uri = primary
        .base("/v1/chat/completions?stream=false")
        .to_string();
    for uri in [
        primary_uri.as_str(),
        "/v1/chat/completions?stream=false",
        // ... or the path after the base alone.
        "/chat/completions?stream=false",
    ] {
        let response = service.clone().oneshot(post(uri)).await.unwrap();
        assert_eq!(served_by(&response).name(), "tw-paths-fallback");
    }
    let paths = |server: &Server| -> Vec<(String, Option<String>)> {
        server
            .seen()
            .into_iter()
            .map(|seen| (seen.path, seen.query))
            .collect()
    };
    let primary_seen = (
        "/v1/chat/completions".to_owned(),
        Some("stream=false".to_owned()),
    );
    assert_eq!(paths(&primary), vec![primary_seen; 3]);
    let fallback_seen = (
        "/openai/deployments/gpt/chat/completions".to_owned(),
        Some("api-version=2024-10-21&stream=false".to_owned()),
    );
    assert_eq!(paths(&fallback), vec![fallback_seen; 3]);
}

/// Without a socket: every host answers 503, but `fallback.example`,
/// which answers 200 after `delay` on the paused clock; each answer's body
/// is the URI it was sent to.
fn network(
    delay: Duration,
) -> impl Service<
    http::Request<String>,
    Response = http::Response<String>,
    Error = Infallible,
    Future = impl Send,
> + Clone
+ Send
+ 'static {
    service_fn(move |request: http::Request<String>| async move {
        let status = if request.uri().host() == Some("fallback.example") {
            tokio::time::sleep(delay).await;
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        Ok(http::Response::builder()
            .status(status)
            .body(request.uri().to_string())
            .unwrap())
    })
}

#[tokio::test(start_paused = true)]
async fn a_silent_fallback_is_left_and_the_route_fails_with_its_silence() {
    let route = Route::builder("tw-paused")
        .target(
            Target::new(
                "tw-paused-primary",
                Uri::from_static("https://primary.example/v1"),
            )
            .policy(Policy::new().max(2)),
        )
        .target(
            Target::new(
                "tw-paused-fallback",
                Uri::from_static("https://fallback.example/v1"),
            )
            .silence(Duration::from_secs(5)),
        )
        .build()
        .unwrap();
    let service = RouteService::new(network(Duration::from_secs(60)), route);
    let failed = service
        .oneshot(
            http::Request::get("/v1/models")
                .body(String::new())
                .unwrap(),
        )
        .await
        .unwrap_err();
    assert_eq!(failed.failure().reason(), RouteStop::NoTargetLeft);
    assert!(matches!(
        failed.failure().tried()[1].error(),
        TargetError::Silent(_)
    ));
    assert_eq!(failed.classify(), ErrorClass::Transient);
    assert_eq!(failed.variant(), "Elapsed");
    assert!(failed.last_response().is_none());
    let primary = &failed.failure().tried()[0];
    assert_eq!((primary.attempts(), primary.then()), (2, Then::Next));
    let answer = primary.error().answer().and_then(AttemptError::response);
    assert_eq!(
        answer.map(http::Response::body).map(String::as_str),
        Some("https://primary.example/v1/models")
    );
}

#[tokio::test(start_paused = true)]
async fn an_answer_in_time_from_the_fallback_serves_and_says_so() {
    let route = Route::builder("tw-paused-ok")
        .target(Target::new(
            "tw-paused-ok-primary",
            Uri::from_static("https://primary.example/v1"),
        ))
        .target(
            Target::new(
                "tw-paused-ok-fallback",
                Uri::from_static("https://fallback.example/v1"),
            )
            .silence(Duration::from_secs(5)),
        )
        .build()
        .unwrap();
    let service = RouteService::new(network(Duration::from_secs(1)), route);
    let response = service
        .oneshot(http::Request::get("/models").body(String::new()).unwrap())
        .await
        .unwrap();
    let served = served_by(&response);
    assert_eq!(
        (served.name(), served.index(), served.attempts()),
        ("tw-paused-ok-fallback", 1, 1)
    );
    assert_eq!(response.body(), "https://fallback.example/v1/models");
}
