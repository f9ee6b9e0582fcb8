//! A faulty OpenAI-compatible provider on loopback: axum on
//! `127.0.0.1:0`, `POST /v1/chat/completions`, streaming (SSE chunks, then
//! a usage chunk and `[DONE]`) or plain JSON, for one model.
//!
//! Every answer is the same 60 words, `w0 w1 … w59 `; a request that ends
//! with an assistant message (a prefill) gets the words after those it
//! already has, so a client that continued a cut answer gets each word
//! once. The user message names a scenario (`"scenario 503-persists: …"`),
//! and [`fault`] says what each provider does to each of its requests of
//! that scenario. It counts what it was asked ([`Provider::requests`]).
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures_util::{StreamExt, stream};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// Words in a whole answer.
pub const WORDS: usize = 60;
/// The time between two words of a streamed answer.
const WORD_GAP: Duration = Duration::from_millis(20);

/// What a provider does to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answers.
    None,
    /// 429, with a `Retry-After` of so many seconds, or none.
    TooMany(Option<u64>),
    /// This status, with an OpenAI error body.
    Status(u16),
    /// A 400 `context_length_exceeded`.
    ContextLength,
    /// A 400 `content_filter`.
    ContentFilter,
    /// The connection reset before any header.
    Reset,
    /// No header, ever.
    Silent,
    /// The head, then the first word after this long.
    FirstWordAfter(Duration),
    /// The connection cut after this many words.
    CutAfter(usize),
    /// Nothing more after this many words (the connection stays open).
    StallAfter(usize),
}

/// What `provider` does to its `nth` request (from 1) of `scenario`, made
/// `since` the scenario's first request to it; a prefill request says
/// `prefill`.
#[must_use]
pub fn fault(provider: &str, scenario: &str, nth: usize, since: Duration, prefill: bool) -> Fault {
    let primary = provider == "gpt-main";
    match scenario {
        "429-retry-after" if primary && nth == 1 => Fault::TooMany(Some(2)),
        "429-bare" if primary && nth == 1 => Fault::TooMany(None),
        "429-long" if primary => Fault::TooMany(Some(600)),
        "500-once" if primary && nth == 1 => Fault::Status(500),
        "503-persists" if primary => Fault::Status(503),
        "reset" if primary => Fault::Reset,
        "silent" if primary => Fault::Silent,
        "first-word-20s" if primary => Fault::FirstWordAfter(Duration::from_secs(20)),
        "cut-40" | "reject-prefill" if primary => Fault::CutAfter(40),
        "stall-30" if primary => Fault::StallAfter(30),
        "context-length" if provider != "gemini-long" => Fault::ContextLength,
        "content-filter" => Fault::ContentFilter,
        "reject-prefill" if prefill => Fault::Status(400),
        "down-60s" if primary && since < Duration::from_secs(60) => Fault::Status(503),
        _ => Fault::None,
    }
}

/// One request a provider was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub scenario: String,
    pub stream: bool,
    /// The assistant message it was to continue, if any.
    pub prefill: Option<String>,
    pub fault: Fault,
}

#[derive(Debug)]
struct Books {
    name: &'static str,
    requests: Mutex<Vec<(Request, Instant)>>,
    /// Connections to reset, by the client's address.
    resets: Mutex<Vec<(SocketAddr, Arc<AtomicBool>)>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running provider; stopped when dropped.
#[derive(Debug)]
pub struct Provider {
    addr: SocketAddr,
    books: Arc<Books>,
    task: tokio::task::JoinHandle<()>,
}

impl Provider {
    /// Serves model `name` on `127.0.0.1:0`, on the current runtime.
    pub async fn start(name: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().expect("its address");
        let books = Arc::new(Books {
            name,
            requests: Mutex::new(Vec::new()),
            resets: Mutex::new(Vec::new()),
        });
        let app = Router::new()
            .route("/v1/chat/completions", post(complete))
            .with_state(Arc::clone(&books));
        let listener = Resettable {
            listener,
            books: Arc::clone(&books),
        };
        let task = tokio::spawn(async move {
            let app = app.into_make_service_with_connect_info::<Peer>();
            axum::serve(listener, app)
                .await
                .expect("the provider serves");
        });
        Self { addr, books, task }
    }

    /// Its base URL, `http://127.0.0.1:PORT/v1`.
    #[must_use]
    pub fn base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The requests it was asked, in order.
    #[must_use]
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.books.requests)
            .iter()
            .map(|(request, _)| request.clone())
            .collect()
    }

    /// The requests of `scenario`.
    #[must_use]
    pub fn asked(&self, scenario: &str) -> usize {
        self.requests()
            .iter()
            .filter(|request| request.scenario == scenario)
            .count()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn complete(
    State(books): State<Arc<Books>>,
    ConnectInfo(Peer(client)): ConnectInfo<Peer>,
    body: axum::Json<Value>,
) -> Response {
    let user = body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let scenario = user
        .strip_prefix("scenario ")
        .and_then(|s| s.split(':').next())
        .unwrap_or("");
    // `503-persists#2`: the fault of `503-persists`, counted apart.
    let kind = scenario.split('#').next().unwrap_or(scenario);
    let prefill = body["messages"]
        .as_array()
        .and_then(|messages| messages.last())
        .filter(|m| m["role"] == "assistant")
        .and_then(|m| m["content"].as_str())
        .map(str::to_owned);
    let stream = body["stream"].as_bool() == Some(true);
    let now = Instant::now();
    let fault = {
        let mut requests = lock(&books.requests);
        let before: Vec<_> = requests
            .iter()
            .filter(|(r, _)| r.scenario == scenario)
            .collect();
        let since = before.first().map_or(Duration::ZERO, |(_, at)| now - *at);
        let fault = fault(books.name, kind, before.len() + 1, since, prefill.is_some());
        let request = Request {
            scenario: scenario.to_owned(),
            stream,
            prefill: prefill.clone(),
            fault,
        };
        requests.push((request, now));
        fault
    };
    let had = prefill
        .as_deref()
        .map_or(0, |text| text.split_whitespace().count());
    let words: Vec<String> = (had..WORDS).map(|i| format!("w{i} ")).collect();
    let usage = json!({"prompt_tokens": 12 + had, "completion_tokens": words.len()});
    let error = |status: StatusCode, code: &str| {
        let body =
            json!({"error": {"message": code, "type": "invalid_request_error", "code": code}});
        (status, axum::Json(body)).into_response()
    };
    match fault {
        Fault::TooMany(after) => {
            let mut response = error(StatusCode::TOO_MANY_REQUESTS, "rate_limit_exceeded");
            if let Some(after) = after {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, after.into());
            }
            return response;
        }
        Fault::Status(code) => return error(StatusCode::from_u16(code).unwrap(), "upstream_error"),
        Fault::ContextLength => return error(StatusCode::BAD_REQUEST, "context_length_exceeded"),
        Fault::ContentFilter => return error(StatusCode::BAD_REQUEST, "content_filter"),
        Fault::Reset => {
            if let Some((_, reset)) = lock(&books.resets).iter().find(|(addr, _)| *addr == client) {
                reset.store(true, Ordering::Relaxed);
            }
            return StatusCode::OK.into_response();
        }
        Fault::Silent => std::future::pending::<()>().await,
        _ => {}
    }
    if !stream {
        let body = json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": books.name,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": words.concat()}, "finish_reason": "stop"}],
            "usage": usage,
        });
        return axum::Json(body).into_response();
    }
    let model = books.name;
    let chunk = move |delta: Value, finish: Value| {
        let chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        Ok::<_, std::io::Error>(format!("data: {chunk}\n\n"))
    };
    let (first, cut, stall) = match fault {
        Fault::FirstWordAfter(after) => (after, None, None),
        Fault::CutAfter(n) => (WORD_GAP, Some(n), None),
        Fault::StallAfter(n) => (WORD_GAP, None, Some(n)),
        _ => (WORD_GAP, None, None),
    };
    let head = stream::iter([chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )]);
    let body = stream::iter(words.into_iter().enumerate()).then(move |(i, word)| async move {
        tokio::time::sleep(if i == 0 { first } else { WORD_GAP }).await;
        if cut == Some(i) {
            return Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        }
        if stall == Some(i) {
            std::future::pending::<()>().await;
        }
        chunk(json!({"content": word}), Value::Null)
    });
    let usage = format!(
        "data: {}\n\n",
        json!({"id": "chatcmpl-1", "model": model, "choices": [], "usage": usage})
    );
    let tail = stream::iter([
        chunk(json!({}), json!("stop")),
        Ok(usage),
        Ok("data: [DONE]\n\n".to_owned()),
    ]);
    let events = head.chain(body).chain(tail);
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(events))
        .expect("a response")
}

/// The listener: it notes each connection, so a handler can reset its own.
struct Resettable {
    listener: TcpListener,
    books: Arc<Books>,
}

impl axum::serve::Listener for Resettable {
    type Io = ResetIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            if let Ok((io, addr)) = self.listener.accept().await {
                // A reset, not a close: the client sees its connection
                // reset. (A zero linger never blocks the drop.)
                #[allow(deprecated, reason = "SO_LINGER blocks only when not zero")]
                let _ = io.set_linger(Some(Duration::ZERO));
                let reset = Arc::new(AtomicBool::new(false));
                let mut resets = lock(&self.books.resets);
                resets.retain(|(known, _)| *known != addr);
                resets.push((addr, Arc::clone(&reset)));
                return (ResetIo { io, reset }, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// The client's address, for the handler.
#[derive(Debug, Clone, Copy)]
struct Peer(SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, Resettable>> for Peer {
    fn connect_info(stream: axum::serve::IncomingStream<'_, Resettable>) -> Self {
        Self(*stream.remote_addr())
    }
}

/// A connection that fails its first write once its handler asked for a
/// reset: the server drops it before any header.
struct ResetIo {
    io: TcpStream,
    reset: Arc<AtomicBool>,
}

impl AsyncRead for ResetIo {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for ResetIo {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if self.reset.load(Ordering::Relaxed) {
            return std::task::Poll::Ready(Err(std::io::ErrorKind::ConnectionReset.into()));
        }
        std::pin::Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.io).poll_shutdown(cx)
    }
}
