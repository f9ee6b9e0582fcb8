//! `HttpError` classified by the provider's error body, against recorded
//! responses (`support/provider_errors.rs`): built from their parts, and
//! over real HTTP on loopback (an axum server answering them, reqwest
//! reading them with `HttpError::read`). A retried call tries a spent
//! account once and retries a rate limit.
//!
//! On the real clock (tokio's paused clock would jump past the waits
//! whenever the runtime waits on a socket); the one real wait is the rate
//! limit's `Retry-After: 1`, twice. They assert counts and classes, and
//! that a retry waited at least the server's hint, never an upper bound.
#[path = "support/provider_errors.rs"]
mod provider_errors;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use axum::routing::post;
use provider_errors::{
    ALL, ANTHROPIC_OVERLOADED, ANTHROPIC_PROMPT_TOO_LONG, ANTHROPIC_RATE_LIMIT,
    ANTHROPIC_SPEND_LIMIT, OPENAI_BILLING_HARD_LIMIT, OPENAI_CONTEXT_LENGTH_EXCEEDED,
    OPENAI_INSUFFICIENT_QUOTA, OPENAI_PROJECT_SPEND_LIMIT, OPENAI_RATE_LIMIT_EXCEEDED, Recorded,
    recorded_at,
};
use tenacious::ErrorClass::{Fatal, Invalid, RateLimited, Transient};
use tenacious::{Classify, ErrorClass, HttpError, Policy, Signals, retry};
use tokio::net::TcpListener;

const QUOTA: &str = "the account's quota is spent: a human must add credit or raise its plan; retrying will not help";
const SPEND: &str = "the account reached its spending limit: a human must raise the limit or add credit; retrying will not help";
const CONTEXT: &str =
    "the prompt is longer than the model's context window: shorten it or summarise earlier turns";
const OVERLOADED: &str = "the provider is overloaded; trying again later may succeed";
const RATE: &str = "the server is rate limiting; wait before trying again";

/// What each recorded response must classify as.
struct Expected {
    recorded: Recorded,
    class: ErrorClass,
    hint: &'static str,
    retry_after: Option<Duration>,
    /// As read at the time of recording.
    signals: Signals,
    code: Option<&'static str>,
    kind: Option<&'static str>,
}

fn expected() -> Vec<Expected> {
    let none = Signals::NONE;
    vec![
        Expected {
            recorded: OPENAI_INSUFFICIENT_QUOTA,
            class: Fatal,
            hint: QUOTA,
            retry_after: None,
            signals: none,
            code: Some("insufficient_quota"),
            kind: Some("insufficient_quota"),
        },
        Expected {
            recorded: OPENAI_RATE_LIMIT_EXCEEDED,
            class: RateLimited,
            hint: RATE,
            retry_after: Some(Duration::from_secs(1)),
            signals: none
                .remaining(0)
                .reset(Duration::from_millis(120))
                .limit(500),
            code: Some("rate_limit_exceeded"),
            kind: Some("requests"),
        },
        Expected {
            recorded: OPENAI_CONTEXT_LENGTH_EXCEEDED,
            class: Invalid,
            hint: CONTEXT,
            retry_after: None,
            signals: none,
            code: Some("context_length_exceeded"),
            kind: Some("invalid_request_error"),
        },
        Expected {
            recorded: OPENAI_BILLING_HARD_LIMIT,
            class: Fatal,
            hint: SPEND,
            retry_after: None,
            signals: none,
            code: Some("billing_hard_limit_reached"),
            kind: Some("invalid_request_error"),
        },
        Expected {
            recorded: OPENAI_PROJECT_SPEND_LIMIT,
            class: Fatal,
            hint: SPEND,
            retry_after: None,
            signals: none,
            code: Some("project_spend_limit_exceeded"),
            kind: Some("invalid_request_error"),
        },
        Expected {
            recorded: ANTHROPIC_OVERLOADED,
            class: Transient,
            hint: OVERLOADED,
            retry_after: None,
            signals: none.overloaded(true),
            code: None,
            kind: Some("overloaded_error"),
        },
        Expected {
            recorded: ANTHROPIC_SPEND_LIMIT,
            class: Fatal,
            hint: SPEND,
            retry_after: None,
            signals: none,
            code: Some("enforced_spend_limit_reached"),
            kind: Some("rate_limit_error"),
        },
        Expected {
            recorded: ANTHROPIC_PROMPT_TOO_LONG,
            class: Invalid,
            hint: CONTEXT,
            retry_after: None,
            signals: none,
            code: None,
            kind: Some("invalid_request_error"),
        },
        Expected {
            recorded: ANTHROPIC_RATE_LIMIT,
            class: RateLimited,
            hint: RATE,
            retry_after: Some(Duration::from_secs(30)),
            signals: none.remaining(0).reset(Duration::from_secs(30)).limit(50),
            code: None,
            kind: Some("rate_limit_error"),
        },
    ]
}

fn header_map(recorded: &Recorded) -> HeaderMap {
    let mut map = HeaderMap::new();
    for &(name, value) in recorded.headers {
        let _ = map.append(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
    map
}

fn status(recorded: &Recorded) -> StatusCode {
    StatusCode::from_u16(recorded.status).unwrap()
}

#[test]
fn every_recorded_response_has_an_expectation() {
    let named: Vec<&str> = expected().iter().map(|e| e.recorded.name).collect();
    let all: Vec<&str> = ALL.iter().map(|r| r.name).collect();
    assert_eq!(named, all);
}

/// Each recorded response, built from its parts at the time it was
/// recorded, classifies as the preset table says.
#[test]
fn recorded_responses_classify_as_the_table_says() {
    for want in expected() {
        let recorded = &want.recorded;
        let error =
            HttpError::from_parts_at(status(recorded), &header_map(recorded), recorded_at())
                .with_body(recorded.body.as_bytes());
        let name = recorded.name;
        assert_eq!(error.classify(), want.class, "{name}");
        assert_eq!(error.hint().as_deref(), Some(want.hint), "{name}");
        assert_eq!(error.retry_after(), want.retry_after, "{name}");
        assert_eq!(error.signals(), want.signals, "{name}");
        assert_eq!(error.error_code(), want.code, "{name}");
        assert_eq!(error.error_type(), want.kind, "{name}");
        assert!(error.error_message().is_some(), "{name}");
        assert_eq!(error.body(), Some(recorded.body.as_bytes()), "{name}");
        assert!(!error.is_body_truncated(), "{name}");
    }
}

/// The defect the body fixes: read from status and headers alone, a spent
/// account's 429 is a rate limit, and a retry layer waits and retries it.
#[test]
fn without_the_body_a_spent_account_looks_like_a_rate_limit() {
    for recorded in [
        OPENAI_INSUFFICIENT_QUOTA,
        ANTHROPIC_SPEND_LIMIT,
        OPENAI_PROJECT_SPEND_LIMIT,
    ] {
        let headers_only = HttpError::from_parts(status(&recorded), &header_map(&recorded));
        assert_eq!(headers_only.classify(), RateLimited, "{}", recorded.name);
        let with_body = headers_only.with_body(recorded.body.as_bytes());
        assert_eq!(with_body.classify(), Fatal, "{}", recorded.name);
    }
}

/// The loopback server: every recorded response at `/{name}`, answered
/// every time; at `/{name}/once`, answered once, then `200 ok`. It counts
/// the requests to each path.
struct Server {
    url: String,
    requests: Arc<HashMap<String, AtomicU32>>,
}

impl Server {
    async fn start() -> Self {
        let mut paths = Vec::new();
        for recorded in ALL {
            paths.push(format!("/{}", recorded.name));
            paths.push(format!("/{}/once", recorded.name));
        }
        let requests: Arc<HashMap<String, AtomicU32>> = Arc::new(
            paths
                .iter()
                .map(|path| (path.clone(), AtomicU32::new(0)))
                .collect(),
        );
        let mut app = Router::new();
        for recorded in ALL {
            for once in [false, true] {
                let path = if once {
                    format!("/{}/once", recorded.name)
                } else {
                    format!("/{}", recorded.name)
                };
                let requests = Arc::clone(&requests);
                let counted = path.clone();
                app = app.route(
                    &path,
                    post(move || async move {
                        let seen = requests[&counted].fetch_add(1, Ordering::SeqCst);
                        if once && seen > 0 {
                            return Response::new(Body::from("ok"));
                        }
                        answer(&recorded)
                    }),
                );
            }
        }
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { url, requests }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    fn requests(&self, path: &str) -> u32 {
        self.requests[path].load(Ordering::SeqCst)
    }
}

/// The recorded response, as the provider sent it.
fn answer(recorded: &Recorded) -> Response {
    let mut response = Response::new(Body::from(recorded.body));
    *response.status_mut() = status(recorded);
    *response.headers_mut() = header_map(recorded);
    response
}

/// Over HTTP, `HttpError::read` gives what the parts gave, the body
/// included; Anthropic's rate-limit reset, an RFC 3339 time, is read
/// against the clock now, long after the recording: zero.
#[tokio::test]
async fn read_over_loopback_classifies_each_recorded_response() {
    let server = Server::start().await;
    let client = reqwest::Client::new();
    for want in expected() {
        let recorded = &want.recorded;
        let name = recorded.name;
        let response = client
            .post(server.url(&format!("/{name}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), recorded.status, "{name}");
        let error = HttpError::read(response).await;
        assert_eq!(error.status().as_u16(), recorded.status, "{name}");
        assert_eq!(error.classify(), want.class, "{name}");
        assert_eq!(error.hint().as_deref(), Some(want.hint), "{name}");
        assert_eq!(error.retry_after(), want.retry_after, "{name}");
        // Anthropic's reset is a time, now long past; OpenAI's a duration.
        let signals = if name == ANTHROPIC_RATE_LIMIT.name {
            want.signals.reset(Duration::ZERO)
        } else {
            want.signals
        };
        assert_eq!(error.signals(), signals, "{name}");
        assert_eq!(error.error_code(), want.code, "{name}");
        assert_eq!(error.error_type(), want.kind, "{name}");
        assert_eq!(error.body(), Some(recorded.body.as_bytes()), "{name}");
        assert!(!error.is_body_truncated(), "{name}");
    }
}

/// A tool's error type: the provider's answer, or the network's failure.
#[derive(Debug, Classify)]
enum ApiError {
    #[classify(transparent)]
    Status(HttpError),
    #[classify(transparent)]
    Network(reqwest::Error),
}

/// One attempt of a model call.
async fn complete_once(client: &reqwest::Client, url: &str) -> Result<String, ApiError> {
    let response = client
        .post(url)
        .body("{}")
        .send()
        .await
        .map_err(ApiError::Network)?;
    if !response.status().is_success() {
        return Err(ApiError::Status(HttpError::read(response).await));
    }
    response.text().await.map_err(ApiError::Network)
}

#[retry(max = 3, base = "1ms")]
async fn complete(client: &reqwest::Client, url: &str) -> Result<String, ApiError> {
    complete_once(client, url).await
}

#[tokio::test]
async fn retry_tries_a_spent_account_once_and_retries_a_rate_limit() {
    let server = Server::start().await;
    let client = reqwest::Client::new();

    for recorded in [
        OPENAI_INSUFFICIENT_QUOTA,
        ANTHROPIC_SPEND_LIMIT,
        OPENAI_CONTEXT_LENGTH_EXCEEDED,
    ] {
        let path = format!("/{}", recorded.name);
        let Err(ApiError::Status(error)) = complete(&client, &server.url(&path)).await else {
            panic!("{path}: not the provider's error");
        };
        assert!(!error.classify().is_retryable(), "{path}");
        assert_eq!(server.requests(&path), 1, "{path}: one attempt");
    }

    // A rate limit waits its `Retry-After: 1`, then succeeds.
    let path = format!("/{}/once", OPENAI_RATE_LIMIT_EXCEEDED.name);
    let start = Instant::now();
    assert_eq!(complete(&client, &server.url(&path)).await.unwrap(), "ok");
    assert_eq!(server.requests(&path), 2);
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );

    // Overloaded is retried after a backoff of its own (no server hint).
    let path = format!("/{}/once", ANTHROPIC_OVERLOADED.name);
    assert_eq!(complete(&client, &server.url(&path)).await.unwrap(), "ok");
    assert_eq!(server.requests(&path), 2);

    // A rate limit that never clears: every attempt `max` allows.
    let path = format!("/{}", OPENAI_RATE_LIMIT_EXCEEDED.name);
    let Err(ApiError::Status(error)) = complete(&client, &server.url(&path)).await else {
        panic!("{path}: not the provider's error");
    };
    assert_eq!(error.classify(), RateLimited);
    assert_eq!(server.requests(&path), 3);
}

#[tokio::test]
async fn policy_tries_a_spent_account_once_and_retries_a_rate_limit() {
    const POLICY: Policy = Policy::new().max(3).base(Duration::from_millis(1));
    let server = Server::start().await;
    let client = reqwest::Client::new();

    let path = format!("/{}", OPENAI_BILLING_HARD_LIMIT.name);
    let url = server.url(&path);
    let result = POLICY.retry(|| complete_once(&client, &url)).await;
    let Err(ApiError::Status(error)) = result else {
        panic!("{path}: not the provider's error");
    };
    assert_eq!(error.classify(), Fatal);
    assert_eq!(server.requests(&path), 1);

    let path = format!("/{}/once", ANTHROPIC_RATE_LIMIT.name);
    let url = server.url(&path);
    // Anthropic's `retry-after: 30` is the floor of the wait: a policy
    // that may wait only 10 s ends at once, after one attempt.
    let short = POLICY.max_retry_after(Duration::from_secs(10));
    let Err(ApiError::Status(error)) = short.retry(|| complete_once(&client, &url)).await else {
        panic!("{path}: not the provider's error");
    };
    assert_eq!(error.retry_after(), Some(Duration::from_secs(30)));
    assert_eq!(server.requests(&path), 1);

    let path = format!("/{}/once", OPENAI_RATE_LIMIT_EXCEEDED.name);
    let url = server.url(&path);
    let start = Instant::now();
    assert_eq!(
        POLICY.retry(|| complete_once(&client, &url)).await.unwrap(),
        "ok"
    );
    assert_eq!(server.requests(&path), 2);
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
}

/// A body over the bound is read up to it and no further, kept cut, and
/// not parsed; the status still classifies.
#[tokio::test]
async fn read_stops_at_the_bound() {
    let mut body = OPENAI_INSUFFICIENT_QUOTA.body.as_bytes().to_vec();
    body.resize(4 * HttpError::MAX_BODY, b' ');
    let app = Router::new().route(
        "/",
        post(move || {
            let body = body.clone();
            async move {
                let mut response = Response::new(Body::from(body));
                *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
                response
            }
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let response = reqwest::Client::new().post(&url).send().await.unwrap();
    let error = HttpError::read(response).await;
    assert!(error.is_body_truncated());
    assert_eq!(error.body().map(<[u8]>::len), Some(HttpError::MAX_BODY));
    assert_eq!(error.error_code(), None);
    assert_eq!(error.classify(), RateLimited);
}

/// A connection closed mid-body: what came is kept, marked truncated, and
/// the status classifies; reading never fails.
#[tokio::test]
async fn read_keeps_a_body_cut_mid_way() {
    // A plain socket, written by hand: no HTTP server sends a short body.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut socket, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let _ = socket.read(&mut request).unwrap();
        let partial = r#"{"error": {"message": "You exceeded"#;
        let head = format!(
            "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: 2\r\ncontent-length: 400\r\n\r\n{partial}"
        );
        socket.write_all(head.as_bytes()).unwrap();
        socket.flush().unwrap();
        // Dropped: the connection closes 400 - len bytes short.
    });

    let response = reqwest::Client::new().post(&url).send().await.unwrap();
    let error = HttpError::read(response).await;
    assert!(error.is_body_truncated());
    assert_eq!(
        error.body(),
        Some(&br#"{"error": {"message": "You exceeded"#[..])
    );
    assert_eq!(error.error_message(), None);
    assert_eq!(error.classify(), RateLimited);
    assert_eq!(error.retry_after(), Some(Duration::from_secs(2)));
    server.join().unwrap();
}
