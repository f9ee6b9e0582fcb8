//! A provider on loopback: an axum server whose chat-completions route
//! keeps a quota (a token bucket), answering over-quota requests 429 with
//! `Retry-After` and the rate-limit headers OpenAI sends; and a route that
//! is down, answering every request 503. Shared by `tests/fleet_http.rs`
//! (one process) and `tests/redis_fleet.rs` (a fleet of processes).
#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use tokio::net::TcpListener;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// The route with the quota.
pub const COMPLETIONS: &str = "/v1/chat/completions";
/// The route that is down.
pub const UNAVAILABLE: &str = "/v1/unavailable";
/// The route with the quota and noise: a tenth of its requests, picked
/// by a hash of their number (whatever the rate), answered 529 or 503,
/// half each, with no header and not charged to the quota.
pub const NOISY: &str = "/v1/noisy";

/// The server's quota: a token bucket, and what it answered.
struct Quota {
    /// Tokens a second, and the bucket's size.
    rate: f64,
    burst: f64,
    bucket: Mutex<(f64, Instant)>,
    requests: AtomicU64,
    rejected: AtomicU64,
    unavailable: AtomicU64,
    noisy: AtomicU64,
    noise: AtomicU64,
}

/// A running server on 127.0.0.1, stopped when dropped.
pub struct QuotaServer {
    base: String,
    quota: Arc<Quota>,
    task: tokio::task::JoinHandle<()>,
}

impl QuotaServer {
    /// Starts one on a free loopback port, its bucket full: `rate`
    /// requests a second, `burst` at once. On the tokio runtime it is
    /// called on.
    pub async fn start(rate: f64, burst: f64) -> Self {
        let quota = Arc::new(Quota {
            rate,
            burst,
            bucket: Mutex::new((burst, Instant::now())),
            requests: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            unavailable: AtomicU64::new(0),
            noisy: AtomicU64::new(0),
            noise: AtomicU64::new(0),
        });
        let app = Router::new()
            .route(COMPLETIONS, post(complete))
            .route(UNAVAILABLE, post(unavailable))
            .route(NOISY, post(noisy))
            .with_state(Arc::clone(&quota));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self { base, quota, task }
    }

    /// The URL of the route with the quota.
    pub fn url(&self) -> String {
        format!("{}{COMPLETIONS}", self.base)
    }

    /// The URL of the route that answers 503.
    pub fn unavailable_url(&self) -> String {
        format!("{}{UNAVAILABLE}", self.base)
    }

    /// The URL of the route with the quota and noise.
    pub fn noisy_url(&self) -> String {
        format!("{}{NOISY}", self.base)
    }

    /// Requests the noisy route answered 529 or 503 (they are counted in
    /// [`requests`](QuotaServer::requests) too).
    pub fn noise(&self) -> u64 {
        self.quota.noise.load(Ordering::Relaxed)
    }

    /// Requests the quota's route received.
    pub fn requests(&self) -> u64 {
        self.quota.requests.load(Ordering::Relaxed)
    }

    /// Of them, answered 429.
    pub fn rejected(&self) -> u64 {
        self.quota.rejected.load(Ordering::Relaxed)
    }

    /// Requests the route that is down received (all answered 503).
    pub fn unavailable(&self) -> u64 {
        self.quota.unavailable.load(Ordering::Relaxed)
    }
}

impl Drop for QuotaServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One chat completion: 200, or 429 with `Retry-After` (whole seconds,
/// until a token is back, at least 1) and the rate-limit headers OpenAI
/// sends (`remaining` whole tokens, `reset` until the bucket is full
/// again, `limit` its size).
async fn complete(State(quota): State<Arc<Quota>>) -> Response {
    quota.requests.fetch_add(1, Ordering::Relaxed);
    let (rate, burst) = (quota.rate, quota.burst);
    let mut bucket = quota.bucket.lock().await;
    let now = Instant::now();
    let (tokens, last) = *bucket;
    let tokens = (tokens + (now - last).as_secs_f64() * rate).min(burst);
    let served = tokens >= 1.0;
    let tokens = if served { tokens - 1.0 } else { tokens };
    *bucket = (tokens, now);
    drop(bucket);
    let reset_ms = ((burst - tokens) / rate * 1000.0).ceil();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let headers = [
        ("x-ratelimit-limit-requests", format!("{burst}")),
        (
            "x-ratelimit-remaining-requests",
            format!("{}", tokens.floor() as u64),
        ),
        ("x-ratelimit-reset-requests", format!("{reset_ms}ms")),
    ];
    if served {
        (StatusCode::OK, headers, "{\"choices\":[]}").into_response()
    } else {
        quota.rejected.fetch_add(1, Ordering::Relaxed);
        let wait = ((1.0 - tokens) / rate).ceil().max(1.0);
        let mut response = (StatusCode::TOO_MANY_REQUESTS, headers, "rate limited").into_response();
        response
            .headers_mut()
            .insert("retry-after", format!("{wait}").parse().unwrap());
        response
    }
}

/// The quota's route with noise: one request in ten answered 529 or 503,
/// chosen by a hash of its number, before the quota is asked.
async fn noisy(State(quota): State<Arc<Quota>>) -> Response {
    let n = quota.noisy.fetch_add(1, Ordering::Relaxed);
    let draw = n.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54; // 0..1024
    if draw < 102 {
        quota.requests.fetch_add(1, Ordering::Relaxed);
        quota.noise.fetch_add(1, Ordering::Relaxed);
        let status = if draw % 2 == 0 {
            StatusCode::from_u16(529).unwrap()
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        return (status, "overloaded").into_response();
    }
    complete(State(quota)).await
}

/// The route that is down: 503, no header.
async fn unavailable(State(quota): State<Arc<Quota>>) -> Response {
    quota.unavailable.fetch_add(1, Ordering::Relaxed);
    (StatusCode::SERVICE_UNAVAILABLE, "down").into_response()
}
