//! The demo's and the test's side of the gateway: it started over the
//! three providers, and a client that asks it for a scenario's answer.
use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::{Value, json};

use super::app::{Gateway, Upstream, chat_completions};
use super::provider::Provider;

/// Starts the gateway on `127.0.0.1:0` over the three providers, with
/// the chain `gpt-main` → `claude-backup` → `gemini-long`, sending with
/// `client`.
pub async fn start_gateway(
    gpt: &Provider,
    claude: &Provider,
    gemini: &Provider,
    client: reqwest::Client,
) -> SocketAddr {
    let upstream = |model: &str, p: &Provider, context, prefill| Upstream {
        model: model.to_owned(),
        base: p.base(),
        context,
        prefill,
    };
    let gateway = Gateway::new(
        vec![
            upstream("gpt-main", gpt, 8_000, false),
            upstream("claude-backup", claude, 8_000, true),
            upstream("gemini-long", gemini, 1_000_000, false),
        ],
        vec!["claude-backup".into(), "gemini-long".into()],
        client,
    );
    let app = axum::Router::new()
        .route(
            "/v1/chat/completions",
            axum::routing::post(chat_completions),
        )
        .with_state(Arc::new(gateway));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        axum::serve(listener, app)
            .await
            .expect("the gateway serves")
    });
    addr
}

/// The gateway's answer, as its client reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: u16,
    /// Its `x-served-by` header: the upstream that served first.
    pub served_by: Option<String>,
    /// The answer's words, in order.
    pub words: Vec<String>,
    /// The models that wrote it, in order, each once.
    pub models: Vec<String>,
    /// Each usage reported: prompt and completion tokens.
    pub usage: Vec<(u64, u64)>,
    /// An error's message (the status's, or an in-band event's).
    pub error: Option<String>,
    /// An error's class.
    pub class: Option<String>,
}

/// Asks the gateway for `scenario`'s answer from `gpt-main`, with the
/// request's own `fallbacks` if given.
pub async fn ask(
    client: &reqwest::Client,
    addr: SocketAddr,
    scenario: &str,
    stream: bool,
    fallbacks: Option<&[&str]>,
) -> Answer {
    let mut body = json!({
        "model": "gpt-main",
        "stream": stream,
        "messages": [{"role": "user", "content": format!("scenario {scenario}: tell me the words")}],
    });
    if let Some(fallbacks) = fallbacks {
        body["fallbacks"] = json!(fallbacks);
    }
    let response = client
        .post(format!("http://{addr}/v1/chat/completions"))
        .json(&body)
        .send()
        .await
        .expect("the gateway answers");
    let status = response.status().as_u16();
    let served_by = response
        .headers()
        .get("x-served-by")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response.text().await.unwrap_or_default();
    let values: Vec<Value> = match serde_json::from_str::<Value>(&body) {
        Ok(value) => vec![value],
        Err(_) => body
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str(data).ok())
            .collect(),
    };
    let mut answer = Answer {
        status,
        served_by,
        words: Vec::new(),
        models: Vec::new(),
        usage: Vec::new(),
        error: None,
        class: None,
    };
    for value in values {
        if let Some(message) = value["error"]["message"].as_str() {
            answer.error = Some(message.to_owned());
            answer.class = value["error"]["class"].as_str().map(str::to_owned);
        }
        let choice = &value["choices"][0];
        let text = choice["message"]["content"]
            .as_str()
            .or(choice["delta"]["content"].as_str())
            .unwrap_or("");
        answer
            .words
            .extend(text.split_whitespace().map(str::to_owned));
        if let Some(model) = value["model"].as_str()
            && !text.is_empty()
            && answer.models.last().is_none_or(|last| last != model)
        {
            answer.models.push(model.to_owned());
        }
        let usage = &value["usage"];
        if let (Some(prompt), Some(completion)) = (
            usage["prompt_tokens"].as_u64(),
            usage["completion_tokens"].as_u64(),
        ) {
            answer.usage.push((prompt, completion));
        }
    }
    answer
}
