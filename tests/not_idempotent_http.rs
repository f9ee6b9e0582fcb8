//! `#[retry(idempotent = false)]` over real HTTP on loopback: a request
//! that reached the server is never sent again, one that never did is.
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tenacious::agent::{Observation, Status};
use tenacious::{Attempt, Classify, ErrorClass, Failure, StopReason, retry};
use tokio::net::TcpListener;

/// A payment provider's client error: reqwest's, as it classifies, and
/// whether it proves nothing was sent.
#[derive(Debug)]
struct PayError(reqwest::Error);

impl std::fmt::Display for PayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Classify for PayError {
    fn classify(&self) -> ErrorClass {
        self.0.classify()
    }
    fn variant(&self) -> &'static str {
        self.0.variant()
    }
    fn not_sent(&self) -> bool {
        self.0.not_sent()
    }
}

/// A server that reads each request whole, counts it (it is applied: the
/// charge is made), then closes the connection without an answer.
async fn applies_then_hangs_up() -> (String, Arc<AtomicUsize>, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/charge", listener.local_addr().unwrap());
    let applied = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&applied);
    let task = tokio::spawn(async move {
        // Bounded: a test makes at most a few requests.
        for _ in 0..10 {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let mut request = Vec::new();
            let mut buf = [0; 1024];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                if socket.readable().await.is_err() {
                    break;
                }
                match socket.try_read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => break,
                }
            }
            counted.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (url, applied, task)
}

#[retry(max = 3, base = "10ms", idempotent = false)]
async fn charge(client: &reqwest::Client, url: &str) -> Result<String, Failure<PayError>> {
    let response = client
        .post(url)
        .body("amount=100")
        .send()
        .await
        .map_err(PayError)?;
    response.text().await.map_err(PayError)
}

#[retry(max = 3, base = "10ms")]
async fn charge_idempotent(
    client: &reqwest::Client,
    url: &str,
) -> Result<String, Failure<PayError>> {
    let response = client
        .post(url)
        .body("amount=100")
        .send()
        .await
        .map_err(PayError)?;
    response.text().await.map_err(PayError)
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_request_the_server_received_is_not_sent_again() {
    let (url, applied, server) = applies_then_hangs_up().await;
    let failure = charge(&client(), &url).await.unwrap_err();
    assert_eq!(applied.load(Ordering::SeqCst), 1, "charged once");
    assert_eq!(failure.stop_reason(), StopReason::NotIdempotent);
    assert_eq!(failure.attempts().len(), 1);
    assert!(!failure.last().0.is_connect(), "{:?}", failure.last());
    let obs = Observation::from_failure("call_1", &failure);
    assert_eq!(obs.status, Status::VerifyFirst);
    assert!(
        obs.system_hint.contains("check whether it took effect"),
        "{}",
        obs.system_hint
    );
    server.abort();
}

#[tokio::test]
async fn an_idempotent_call_is_sent_again_after_the_same_hang_up() {
    let (url, applied, server) = applies_then_hangs_up().await;
    let failure = charge_idempotent(&client(), &url).await.unwrap_err();
    assert_eq!(
        applied.load(Ordering::SeqCst),
        3,
        "what `idempotent = false` prevents"
    );
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    server.abort();
}

#[retry(max = 3, base = "10ms", idempotent = false)]
async fn charge_when_up(
    client: &reqwest::Client,
    port: u16,
    applied: &Arc<AtomicUsize>,
) -> Result<String, Failure<PayError>> {
    // The server comes up for the second attempt: the first is refused.
    if Attempt::current().unwrap().number() == 2 {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        let counted = Arc::clone(applied);
        let app = axum::Router::new().route(
            "/charge",
            axum::routing::post(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async { "charged" }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    }
    let url = format!("http://127.0.0.1:{port}/charge");
    let response = client
        .post(url)
        .body("amount=100")
        .send()
        .await
        .map_err(PayError)?;
    response.text().await.map_err(PayError)
}

#[tokio::test]
async fn a_refused_connection_sent_nothing_and_is_retried() {
    // A free port with nothing listening on it.
    let port = TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let applied = Arc::new(AtomicUsize::new(0));
    let answer = charge_when_up(&client(), port, &applied).await.unwrap();
    assert_eq!(answer, "charged");
    assert_eq!(applied.load(Ordering::SeqCst), 1);
}
