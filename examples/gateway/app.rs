//! The gateway: an OpenAI-compatible `POST /v1/chat/completions` (axum)
//! that sends each request through a route of upstream models (reqwest),
//! streaming (SSE) or plain JSON. This file is all the user code.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::{StreamExt, TryStreamExt};
use serde_json::{Value, json};
use tenacious::route::{Resume, Route, RouteFailure, Target, TargetError};
use tenacious::sse::openai::{self, Chunk};
use tenacious::{Breaker, Classify, Cooldown, Elapsed, ErrorClass, HttpError, Policy};

/// One upstream model: its name, its provider's base URL, its context
/// window, and whether it continues an answer from an assistant prefill.
#[derive(Debug, Clone)]
pub struct Upstream {
    pub model: String,
    pub base: String,
    pub context: u64,
    pub prefill: bool,
}

/// What one attempt at an upstream can fail with.
#[derive(Debug, tenacious::Classify)]
pub enum UpstreamError {
    #[classify(transparent)]
    Status(HttpError),
    #[classify(transparent)]
    Send(reqwest::Error),
    #[classify(transparent)]
    Stream(openai::Error<reqwest::Error>),
    #[classify(transparent)]
    Timer(Elapsed),
}

impl From<Elapsed> for UpstreamError {
    fn from(elapsed: Elapsed) -> Self {
        Self::Timer(elapsed)
    }
}

impl std::fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Status(e) => e.fmt(f),
            Self::Send(e) => e.fmt(f),
            Self::Stream(e) => e.fmt(f),
            Self::Timer(e) => e.fmt(f),
        }
    }
}

/// Each upstream: 3 attempts, a 30 s first-token and stall limit, a 2 s
/// longest wait for a rate limit; a breaker and a cooldown of its own.
const POLICY: Policy = Policy::new()
    .max(3)
    .base(Duration::from_millis(200))
    .timeout(Duration::from_secs(30))
    .first_item(Duration::from_secs(30))
    .idle(Duration::from_secs(30))
    .max_retry_after(Duration::from_secs(2));

pub struct Gateway {
    pub upstreams: Vec<Upstream>,
    /// The fallback chain of a request that names none.
    pub chain: Vec<String>,
    pub client: reqwest::Client,
    routes: Mutex<HashMap<Vec<String>, Arc<Route<Upstream>>>>,
}

impl Gateway {
    pub fn new(upstreams: Vec<Upstream>, chain: Vec<String>, client: reqwest::Client) -> Self {
        Self {
            upstreams,
            chain,
            client,
            routes: Mutex::default(),
        }
    }

    /// The route for a request: its model, then its `fallbacks` (or the
    /// configured chain), each upstream once, unknown names left out.
    fn route(&self, request: &Value) -> Arc<Route<Upstream>> {
        let asked = request["fallbacks"]
            .as_array()
            .map(|names| names.iter().filter_map(Value::as_str));
        let chain = asked.map_or_else(
            || self.chain.clone(),
            |names| names.map(str::to_owned).collect(),
        );
        let mut seen = std::collections::HashSet::new();
        let names: Vec<String> = request["model"]
            .as_str()
            .map(str::to_owned)
            .into_iter()
            .chain(chain)
            .filter(|name| {
                self.upstreams.iter().any(|up| &up.model == name) && seen.insert(name.clone())
            })
            .collect();
        let mut routes = self.routes.lock().unwrap();
        let route = routes.entry(names.clone()).or_insert_with(|| {
            let targets = names
                .iter()
                .filter_map(|name| self.upstreams.iter().find(|up| &up.model == name));
            let route = targets.fold(Route::builder("gateway"), |route, up| {
                route.target(
                    Target::new(up.model.clone(), up.clone())
                        .policy(POLICY)
                        .breaker(Breaker::new().open_for(Duration::from_secs(10)))
                        .cooldown(Cooldown::new())
                        .context(up.context)
                        .continues(up.prefill),
                )
            });
            Arc::new(
                route
                    .deadline(Duration::from_secs(120))
                    .build()
                    .expect("the upstreams make a route"),
            )
        });
        Arc::clone(route)
    }
}

/// Sends `request` to `up`, as a continuation of `prefill` when there is one.
async fn send(
    client: &reqwest::Client,
    up: &Upstream,
    request: &Value,
    prefill: String,
) -> Result<reqwest::Response, UpstreamError> {
    let mut body = request.clone();
    body["model"] = json!(up.model);
    if let Some(object) = body.as_object_mut() {
        object.remove("fallbacks");
    }
    if let (false, Some(messages)) = (prefill.is_empty(), body["messages"].as_array_mut()) {
        messages.push(json!({"role": "assistant", "content": prefill}));
    }
    let url = format!("{}/chat/completions", up.base);
    let response = client
        .post(url)
        .json(&body)
        .send()
        .await
        .map_err(UpstreamError::Send)?;
    match response.status().is_success() {
        true => Ok(response),
        false => Err(UpstreamError::Status(HttpError::read(response).await)),
    }
}

pub async fn chat_completions(
    State(gw): State<Arc<Gateway>>,
    Json(request): Json<Value>,
) -> Response {
    let route = gw.route(&request);
    if request["stream"].as_bool() != Some(true) {
        let answer = route.call(|target| {
            let (client, request) = (&gw.client, &request);
            async move {
                send(client, target.data(), request, String::new())
                    .await?
                    .json::<Value>()
                    .await
                    .map_err(UpstreamError::Send)
            }
        });
        return match answer.await {
            Ok(answer) => {
                ([("x-served-by", answer.served_by())], Json(answer.value)).into_response()
            }
            Err(failure) => refusal(&failure),
        };
    }
    // The routed stream runs in a task of its own, which stops when the
    // client goes: the response's body is the channel it fills.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<
        Result<(Chunk, &'static str), RouteFailure<UpstreamError>>,
    >(16);
    let client = gw.client.clone();
    tokio::spawn(async move {
        let mut chunks = route.stream(|target, resume: &Resume<Chunk>| {
            let (client, request, prefill) = (client.clone(), request.clone(), resume.text());
            async move {
                Ok(openai::chunks(
                    send(&client, target.data(), &request, prefill)
                        .await?
                        .bytes_stream(),
                )
                .map_err(UpstreamError::Stream))
            }
        });
        while let Some(item) = chunks.next().await {
            let item = item.map(|chunk| (chunk, chunks.served_by().unwrap_or_default()));
            if tx.send(item).await.is_err() {
                return;
            }
        }
    });
    let first = match rx.recv().await {
        Some(Ok(first)) => first,
        Some(Err(failure)) => return refusal(&failure),
        None => return StatusCode::BAD_GATEWAY.into_response(),
    };
    let served_by = first.1;
    let rest = futures_util::stream::unfold(rx, |mut rx| async {
        rx.recv().await.map(|item| (item, rx))
    });
    let events = futures_util::stream::iter([Ok(first)])
        .chain(rest)
        .map(|item| {
            Ok::<_, std::convert::Infallible>(match item {
                Ok((chunk, _)) => format!("data: {}\n\n", chunk.data()),
                Err(failure) => format!("data: {}\n\n", error_body(&failure)),
            })
        });
    let headers = [
        (header::CONTENT_TYPE, "text/event-stream"),
        (header::HeaderName::from_static("x-served-by"), served_by),
    ];
    (headers, axum::body::Body::from_stream(events)).into_response()
}

/// A route no upstream served, as the client reads it: the upstream's own
/// 4xx for a request it must change, else 429 or 502.
fn refusal(failure: &RouteFailure<UpstreamError>) -> Response {
    let status = match (
        failure.classify(),
        failure.cause().map(|cause| cause.error()),
    ) {
        (ErrorClass::Invalid, Some(TargetError::Answer(UpstreamError::Status(e)))) => e.status(),
        (ErrorClass::RateLimited, _) => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::BAD_GATEWAY,
    };
    (status, Json(error_body(failure))).into_response()
}

fn error_body(failure: &RouteFailure<UpstreamError>) -> Value {
    json!({"error": {"message": failure.to_string(), "type": "upstream_error", "class": failure.classify().as_str()}})
}
