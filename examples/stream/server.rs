//! The mock chat-completion server: axum on `127.0.0.1:0`, one route,
//! `POST /v1/messages`, answering with an Anthropic-like event stream —
//! `message_start`, a `ping`, one `content_block_delta` per token (each
//! with its SSE `id`: 1, 2, ...), a comment keepalive every few tokens,
//! `message_stop` — and meeting each prompt's requests with the faults of
//! its [`plan`](super::faults::plan) first.
//!
//! It honours `Last-Event-ID`: a request that carries one gets the tokens
//! after that id (after a fresh `message_start`, as any new connection).
//! It logs every request it served ([`Served`]), so a run can say what the
//! client asked for and what it was given.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures_util::stream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::faults::{Fault, PROMPTS};

/// The time between two tokens of an answer.
pub const TOKEN_GAP: Duration = Duration::from_millis(10);
/// A comment keepalive after every this many tokens.
const KEEPALIVE_EVERY: usize = 4;
/// The time between two keepalives of a stalled stream.
const STALL_PING: Duration = Duration::from_millis(40);
/// The most keepalives a stalled stream sends before it ends (a bound:
/// the client hangs up long before).
const STALL_PINGS: usize = 250;

/// One request the server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// Which prompt (index in [`PROMPTS`]); `None` for a prompt it does not know.
    pub prompt: Option<usize>,
    /// The request's number among this prompt's, from 1.
    pub request: usize,
    /// The `Last-Event-ID` it carried.
    pub last_event_id: Option<String>,
    /// The fault it was met with, if any.
    pub fault: Option<Fault>,
}

/// What the handler reads and writes.
#[derive(Debug)]
struct Books {
    plans: Vec<Vec<Fault>>,
    /// Requests served per prompt since the last rewind.
    requests: Vec<usize>,
    log: Vec<Served>,
}

type Shared = Arc<Mutex<Books>>;

fn books(shared: &Shared) -> std::sync::MutexGuard<'_, Books> {
    // Nothing is left half-written under the lock.
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running mock server.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    shared: Shared,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl MockServer {
    /// Binds `127.0.0.1:0` and serves, on the current tokio runtime, with
    /// `plans` (one list of faults per prompt of [`PROMPTS`]).
    ///
    /// # Errors
    ///
    /// If the port cannot be bound.
    pub async fn start(plans: Vec<Vec<Fault>>) -> io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Mutex::new(Books {
            requests: vec![0; plans.len()],
            plans,
            log: Vec::new(),
        }));
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .with_state(Arc::clone(&shared));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(error) = served.await {
                eprintln!("mock server: {error}");
            }
        });
        Ok(Self {
            addr,
            shared,
            stop: Some(stop),
            task,
        })
    }

    /// Where it listens.
    pub const fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Starts every prompt's plan over: the next request of each prompt
    /// meets its first fault again.
    pub fn rewind(&self) {
        let mut books = books(&self.shared);
        books.requests.iter_mut().for_each(|n| *n = 0);
    }

    /// Every request served so far, in order.
    pub fn log(&self) -> Vec<Served> {
        books(&self.shared).log.clone()
    }

    /// Stops it: no new connection, the open ones finish (a second at
    /// most, then they are cut).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if tokio::time::timeout(Duration::from_secs(1), &mut self.task)
            .await
            .is_err()
        {
            self.task.abort();
        }
    }
}

/// `POST /v1/messages`: the request's prompt, answered as its plan says.
async fn messages(State(shared): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let question = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|request| {
            request["messages"][0]["content"]
                .as_str()
                .map(str::to_owned)
        });
    let prompt = question
        .as_deref()
        .and_then(|question| PROMPTS.iter().position(|p| p.question == question));
    let last_event_id = headers
        .get("last-event-id")
        .and_then(|id| id.to_str().ok())
        .map(str::to_owned);
    let fault = {
        let mut books = books(&shared);
        let (request, fault) = match prompt {
            Some(prompt) => {
                books.requests[prompt] += 1;
                let request = books.requests[prompt];
                (request, books.plans[prompt].get(request - 1).copied())
            }
            None => (1, None),
        };
        books.log.push(Served {
            prompt,
            request,
            last_event_id: last_event_id.clone(),
            fault,
        });
        fault
    };
    let Some(prompt) = prompt else {
        return error_status(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "unknown prompt",
        );
    };
    // Tokens after the last one the client has (ids are 1-based).
    let from = last_event_id
        .and_then(|id| id.parse::<usize>().ok())
        .unwrap_or(0);
    match fault {
        Some(Fault::Status(529)) => error_status(
            StatusCode::from_u16(529).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
            "overloaded_error",
            "Overloaded",
        ),
        Some(Fault::Status(status)) => error_status(
            StatusCode::from_u16(status).unwrap_or(StatusCode::SERVICE_UNAVAILABLE),
            "api_error",
            "Service Unavailable",
        ),
        fault => event_stream(script(prompt, from, fault)),
    }
}

/// An error status with Anthropic's JSON error body.
fn error_status(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = error_json(kind, message);
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn error_json(kind: &str, message: &str) -> String {
    serde_json::json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

/// One step of a response body.
#[derive(Debug, Clone)]
enum Step {
    /// Send these bytes.
    Send(String),
    /// Wait.
    Wait(Duration),
    /// Fail the body: hyper drops the connection mid-response.
    Drop,
}

/// What the server sends for `prompt`, from the token after `from`, with
/// `fault` (not a status: those have no stream).
fn script(prompt: usize, from: usize, fault: Option<Fault>) -> Vec<Step> {
    let tokens = PROMPTS[prompt].tokens;
    let start = serde_json::json!({
        "type": "message_start",
        "message": {"id": format!("msg_{}", prompt + 1), "role": "assistant", "model": "mock-1"},
    });
    let mut steps = vec![
        Step::Send(event("message_start", None, &start.to_string())),
        Step::Send(event("ping", None, r#"{"type":"ping"}"#)),
    ];
    match fault {
        Some(Fault::Stall) => {
            for n in 0..STALL_PINGS {
                steps.push(Step::Wait(STALL_PING));
                steps.push(Step::Send(if n % 2 == 0 {
                    ": keepalive\n\n".to_owned()
                } else {
                    event("ping", None, r#"{"type":"ping"}"#)
                }));
            }
            return steps;
        }
        Some(Fault::Overloaded) => {
            steps.push(Step::Wait(TOKEN_GAP));
            let error = error_json("overloaded_error", "Overloaded");
            steps.push(Step::Send(event("error", None, &error)));
            return steps;
        }
        _ => {}
    }
    let cut = match fault {
        Some(Fault::Drop { after }) => Some(after),
        _ => None,
    };
    for (sent, (n, text)) in tokens.iter().enumerate().skip(from).enumerate() {
        if cut == Some(sent) {
            // A wait first, so hyper flushes the last token before the drop.
            steps.extend([Step::Wait(TOKEN_GAP), Step::Drop]);
            return steps;
        }
        if sent > 0 && sent % KEEPALIVE_EVERY == 0 {
            steps.push(Step::Send(": keepalive\n\n".to_owned()));
        }
        steps.push(Step::Wait(TOKEN_GAP));
        let delta = serde_json::json!({
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": text},
        });
        let id = (n + 1).to_string();
        steps.push(Step::Send(event(
            "content_block_delta",
            Some(&id),
            &delta.to_string(),
        )));
    }
    if cut.is_some() {
        // Cut after the last token: before `message_stop`.
        steps.extend([Step::Wait(TOKEN_GAP), Step::Drop]);
        return steps;
    }
    steps.push(Step::Wait(TOKEN_GAP));
    steps.push(Step::Send(event(
        "message_stop",
        None,
        r#"{"type":"message_stop"}"#,
    )));
    steps
}

/// One SSE event, written out.
fn event(kind: &str, id: Option<&str>, data: &str) -> String {
    match id {
        Some(id) => format!("id: {id}\nevent: {kind}\ndata: {data}\n\n"),
        None => format!("event: {kind}\ndata: {data}\n\n"),
    }
}

/// A 200 `text/event-stream` whose body plays `steps`.
fn event_stream(steps: Vec<Step>) -> Response {
    let body = stream::unfold(steps.into_iter(), |mut steps| async move {
        loop {
            match steps.next()? {
                Step::Wait(wait) => tokio::time::sleep(wait).await,
                Step::Send(bytes) => return Some((Ok::<_, io::Error>(bytes), steps)),
                Step::Drop => {
                    let cut = io::Error::new(io::ErrorKind::ConnectionAborted, "injected drop");
                    return Some((Err(cut), Vec::new().into_iter()));
                }
            }
        }
    });
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}
