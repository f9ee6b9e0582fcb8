//! `tenacious::reqwest_middleware::RouteMiddleware` over real HTTP on
//! loopback: each target an axum server started here, counting the
//! requests it gets and the path, query and key of each.
//!
//! On the real clock (tokio's paused clock would jump past a socket's
//! waits), with backoffs of a millisecond and one `Retry-After: 1`; the
//! tests assert statuses, counts, paths and which target served, never
//! durations. The last test, which needs no socket, runs on the paused
//! clock.
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use reqwest::Url;
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};
use tenacious::reqwest_middleware::{AttemptError, RouteFailed, RouteMiddleware, ServedBy};
use tenacious::route::{Route, RouteStop, Target, TargetError, Then};
use tenacious::{Classify, ErrorClass, Policy, Reject, StopReason};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

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

    /// The server's URL with the path `path`: a target's base.
    fn base(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{path}", self.addr)).unwrap()
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
async fn dead_base(path: &str) -> Url {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    Url::parse(&format!("http://{addr}{path}")).unwrap()
}

/// Retries within a target a millisecond or two apart.
const fn quick(max: u32) -> Policy {
    Policy::new().max(max).base(Duration::from_millis(1))
}

fn client(route: Route<Url>) -> ClientWithMiddleware {
    ClientBuilder::new(
        reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
    )
    .with(RouteMiddleware::new(route))
    .build()
}

fn served_by(response: &reqwest::Response) -> ServedBy {
    response.extensions().get::<ServedBy>().cloned().unwrap()
}

/// The route failure a request ended with.
fn route_failed(error: &reqwest_middleware::Error) -> &RouteFailed {
    match error {
        reqwest_middleware::Error::Middleware(error) => {
            error.downcast_ref::<RouteFailed>().unwrap()
        }
        reqwest_middleware::Error::Reqwest(error) => panic!("not a route failure: {error}"),
    }
}

#[tokio::test]
async fn a_primary_that_answers_503_every_time_is_retried_then_the_fallback_serves() {
    let primary = Server::start(|_, _| unavailable()).await;
    let fallback = Server::start(|_, _| ok("from the fallback")).await;
    let route = Route::builder("rq-503")
        .target(Target::new("rq-503-primary", primary.base("/v1")).policy(quick(3)))
        .target(Target::new("rq-503-fallback", fallback.base("/v1")).policy(quick(3)))
        .build()
        .unwrap();
    let response = client(route)
        .post(primary.base("/v1/chat/completions"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let served = served_by(&response);
    assert_eq!(
        (
            served.name(),
            served.index(),
            served.attempts(),
            served.fell_back()
        ),
        ("rq-503-fallback", 1, 1, true)
    );
    assert_eq!(response.text().await.unwrap(), "from the fallback");
    assert_eq!((primary.count(), fallback.count()), (3, 1));
    // One key on every attempt at the primary; the fallback's is its own call's.
    let keys: Vec<_> = primary
        .seen()
        .into_iter()
        .map(|seen| seen.key.unwrap())
        .collect();
    assert!(keys.iter().all(|key| *key == keys[0]));
    let fallback_key = fallback.seen()[0].key.clone().unwrap();
    assert_ne!(fallback_key, keys[0]);
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
    let route = Route::builder("rq-filter")
        .target(Target::new("rq-filter-primary", primary.base("/v1")).policy(quick(3)))
        .target(Target::new("rq-filter-fallback", fallback.base("/v1")))
        .build()
        .unwrap();
    let error = client(route)
        .post(primary.base("/v1/chat/completions"))
        .body("{}")
        .send()
        .await
        .unwrap_err();
    // The client's error classifies as the primary's answer.
    assert_eq!(error.classify(), ErrorClass::Invalid);
    assert_eq!(error.rejected(), Some(Reject::ContentFilter));
    let failed = route_failed(&error);
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
        ("rq-filter-primary", 1, StopReason::NotRetryable, Then::Stop)
    );
    assert_eq!(
        failed.last_response().map(reqwest::Response::status),
        Some(StatusCode::BAD_REQUEST)
    );
    assert_eq!((primary.count(), fallback.count()), (1, 0));
    // The answer, body whole, for the caller to read.
    let reqwest_middleware::Error::Middleware(error) = error else {
        unreachable!()
    };
    let failed = error.downcast::<RouteFailed>().unwrap();
    let body = failed.into_last_response().unwrap().text().await.unwrap();
    assert!(body.contains("content_filter"), "{body}");
}

#[tokio::test]
async fn a_primary_that_refuses_connections_is_left_for_the_fallback() {
    let fallback = Server::start(|_, _| ok("from the fallback")).await;
    let route = Route::builder("rq-down")
        .target(Target::new("rq-down-primary", dead_base("/v1").await).policy(quick(2)))
        .target(Target::new("rq-down-fallback", fallback.base("/v1")))
        .build()
        .unwrap();
    let response = client(route)
        .get(fallback.base("/v1/models"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(served_by(&response).name(), "rq-down-fallback");
    assert_eq!(fallback.count(), 1);
    assert_eq!(fallback.seen()[0].path, "/v1/models");
}

#[tokio::test]
async fn every_target_down_is_a_transient_route_failure() {
    let route = Route::builder("rq-all-down")
        .target(Target::new("rq-all-down-a", dead_base("/v1").await).policy(quick(2)))
        .target(Target::new("rq-all-down-b", dead_base("/v1").await).policy(quick(1)))
        .build()
        .unwrap();
    let error = client(route)
        .get("http://127.0.0.1:1/v1/models")
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.classify(), ErrorClass::Transient);
    assert!(error.not_sent(), "a refused connection sent nothing");
    let failed = route_failed(&error);
    assert_eq!(failed.failure().reason(), RouteStop::NoTargetLeft);
    let attempts: Vec<_> = failed
        .failure()
        .tried()
        .iter()
        .map(|tried| (tried.target(), tried.attempts()))
        .collect();
    assert_eq!(attempts, [("rq-all-down-a", 2), ("rq-all-down-b", 1)]);
    assert!(failed.last_response().is_none());
    match failed.failure().last().unwrap().error() {
        TargetError::Answer(AttemptError::Sent(error)) => assert!(error.is_connect()),
        other => panic!("a connect error, not {other:?}"),
    }
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
    let route = Route::builder("rq-429-wait")
        .target(
            Target::new("rq-429-wait-primary", primary.base("/v1"))
                .policy(quick(3).max_retry_after(Duration::from_secs(5))),
        )
        .target(Target::new("rq-429-wait-fallback", fallback.base("/v1")))
        .build()
        .unwrap();
    let response = client(route)
        .post(primary.base("/v1/chat/completions"))
        .body("{}")
        .send()
        .await
        .unwrap();
    let served = served_by(&response);
    assert_eq!(
        (served.name(), served.attempts()),
        ("rq-429-wait-primary", 2)
    );
    assert_eq!(response.text().await.unwrap(), "from the primary");
    assert_eq!((primary.count(), fallback.count()), (2, 0));
}

#[tokio::test]
async fn a_429_whose_hint_exceeds_max_retry_after_moves_on() {
    let primary = Server::start(|_, _| rate_limited()).await;
    let fallback = Server::start(|_, _| ok("from the fallback")).await;
    let route = Route::builder("rq-429-long")
        .target(
            Target::new("rq-429-long-primary", primary.base("/v1"))
                .policy(quick(3).max_retry_after(Duration::from_millis(100))),
        )
        .target(Target::new("rq-429-long-fallback", fallback.base("/v1")))
        .build()
        .unwrap();
    let response = client(route)
        .post(primary.base("/v1/chat/completions"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(served_by(&response).name(), "rq-429-long-fallback");
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
    let route = Route::builder("rq-paths")
        .target(Target::new("rq-paths-primary", primary.base("/v1/")).policy(quick(1)))
        .target(Target::new(
            "rq-paths-fallback",
            fallback.base("/openai/deployments/gpt?api-version=2024-10-21"),
        ))
        .build()
        .unwrap();
    let client = client(route);
    // Against the first target's base, on its host or any other ...
    for url in [
        primary.base("/v1/chat/completions?stream=false"),
        Url::parse("http://route.invalid/v1/chat/completions?stream=false").unwrap(),
        // ... or the path after the base alone.
        Url::parse("http://route.invalid/chat/completions?stream=false").unwrap(),
    ] {
        let response = client.post(url).body("{}").send().await.unwrap();
        assert_eq!(served_by(&response).name(), "rq-paths-fallback");
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

/// A body of one chunk that cannot be cloned, as a stream's.
struct OneChunk(Option<Bytes>);

impl http_body::Body for OneChunk {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
        std::task::Poll::Ready(self.0.take().map(|chunk| Ok(http_body::Frame::data(chunk))))
    }
}

fn streaming() -> reqwest::Body {
    reqwest::Body::wrap(OneChunk(Some(Bytes::from_static(b"{}"))))
}

#[tokio::test]
async fn a_body_that_cannot_be_cloned_is_sent_once_to_the_first_target() {
    let primary = Server::start(|n, _| {
        if n == 1 {
            unavailable()
        } else {
            ok("from the primary")
        }
    })
    .await;
    let fallback = Server::start(|_, _| ok("from the fallback")).await;
    let route = Route::builder("rq-stream")
        .target(Target::new("rq-stream-primary", primary.base("/v1")).policy(quick(3)))
        .target(Target::new("rq-stream-fallback", fallback.base("/v2")))
        .build()
        .unwrap();
    let client = client(route);
    // A 503: neither retried nor sent to the fallback.
    let error = client
        .post("http://route.invalid/v1/upload")
        .body(streaming())
        .send()
        .await
        .unwrap_err();
    assert_eq!(error.classify(), ErrorClass::Transient);
    let reqwest_middleware::Error::Middleware(error) = error else {
        panic!("the 503, in the middleware's error")
    };
    let attempt = error.downcast_ref::<AttemptError>().unwrap();
    assert_eq!(
        attempt.response().map(reqwest::Response::status),
        Some(StatusCode::SERVICE_UNAVAILABLE)
    );
    assert_eq!((primary.count(), fallback.count()), (1, 0));
    // An answer says the first target served.
    let response = client
        .post("http://route.invalid/upload")
        .body(streaming())
        .send()
        .await
        .unwrap();
    let served = served_by(&response);
    assert_eq!((served.name(), served.index()), ("rq-stream-primary", 0));
    assert_eq!((primary.count(), fallback.count()), (2, 0));
    assert_eq!(primary.seen()[1].path, "/v1/upload");
    assert!(primary.seen()[1].key.is_some());
}

/// The network, without a socket: every host answers 503, but
/// `fallback.example`, which answers 200 on the paused clock after
/// `delay`; each answer names the URL it was sent to in `x-url`.
struct Network {
    delay: Duration,
}

#[async_trait::async_trait]
impl reqwest_middleware::Middleware for Network {
    async fn handle(
        &self,
        request: reqwest::Request,
        _: &mut http::Extensions,
        _: reqwest_middleware::Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let status = if request.url().host_str() == Some("fallback.example") {
            tokio::time::sleep(self.delay).await;
            200
        } else {
            503
        };
        Ok(http::Response::builder()
            .status(status)
            .header("x-url", request.url().as_str())
            .body("")
            .unwrap()
            .into())
    }
}

#[tokio::test(start_paused = true)]
async fn a_silent_fallback_is_left_and_the_route_fails_with_the_last_answer() {
    let route = Route::builder("rq-paused")
        .target(
            Target::new(
                "rq-paused-primary",
                Url::parse("https://primary.example/v1").unwrap(),
            )
            .policy(Policy::new().max(2)),
        )
        .target(
            Target::new(
                "rq-paused-fallback",
                Url::parse("https://fallback.example/v1").unwrap(),
            )
            .silence(Duration::from_secs(5)),
        )
        .build()
        .unwrap();
    let client = ClientBuilder::new(reqwest::Client::new())
        .with(RouteMiddleware::new(route))
        .with(Network {
            delay: Duration::from_secs(60),
        })
        .build();
    let error = client
        .get("https://primary.example/v1/models")
        .send()
        .await
        .unwrap_err();
    let failed = route_failed(&error);
    assert_eq!(failed.failure().reason(), RouteStop::NoTargetLeft);
    // The fallback was silent: the error is its silence, transient.
    assert!(matches!(
        failed.failure().tried()[1].error(),
        TargetError::Silent(_)
    ));
    assert_eq!(error.classify(), ErrorClass::Transient);
    assert_eq!(error.variant(), "Elapsed");
    assert!(failed.last_response().is_none());
    let primary = &failed.failure().tried()[0];
    assert_eq!((primary.attempts(), primary.then()), (2, Then::Next));
    let answer = primary.error().answer().and_then(AttemptError::response);
    assert_eq!(
        answer.map(|response| response.headers()["x-url"].to_str().unwrap()),
        Some("https://primary.example/v1/models")
    );
}
