//! An OpenAI-compatible gateway on a route of models: when one model or
//! provider cannot serve, the next one does — before the stream commits,
//! with the right rule per error — and the answer says who served.
//!
//! ```sh
//! cargo run --example gateway
//! ```
//!
//! Three mock providers on loopback (`examples/gateway/provider.rs`), one
//! model each: `gpt-main` (8k context), `claude-backup` (8k, continues an
//! answer from an assistant prefill) and `gemini-long` (1M). The gateway
//! (`examples/gateway/app.rs`, all of the user code: axum in front,
//! reqwest behind, `tenacious::route` between) serves
//! `POST /v1/chat/completions`, streaming or not, with the fallback chain
//! from its configuration or the request's own `fallbacks`. This demo
//! sends it one request per fault the providers know and prints who
//! served each, with what; `tests/gateway.rs` checks the same on the
//! paused clock. Real HTTP on the real clock: about a minute, as some
//! faults are a provider that never answers (left after 30 s).
use std::time::Instant;

#[allow(
    dead_code,
    reason = "shared with tests/gateway.rs, which reads what is not printed here"
)]
mod gateway {
    pub mod app;
    pub mod demo;
    pub mod provider;
}

use gateway::demo::{ask, start_gateway};
use gateway::provider::Provider;

/// The faults the demo shows, and whether it streams them. (Those that
/// take 30 s of silence to show, `tests/gateway.rs` shows on the paused
/// clock.) The last two open `gpt-main`'s breaker: every request after
/// them, for 10 s, goes straight to the fallback.
const SCENARIOS: [(&str, bool); 9] = [
    ("429-retry-after", false),
    ("429-bare", true),
    ("500-once", false),
    ("cut-40", true),
    ("reject-prefill", true),
    ("context-length", true),
    ("content-filter", false),
    ("503-persists", false),
    ("reset", true),
];

#[tokio::main]
async fn main() {
    let (gpt, claude, gemini) = tokio::join!(
        Provider::start("gpt-main"),
        Provider::start("claude-backup"),
        Provider::start("gemini-long"),
    );
    let addr = start_gateway(&gpt, &claude, &gemini, reqwest::Client::new()).await;
    let client = reqwest::Client::new();
    println!(
        "gateway on http://{addr}/v1/chat/completions, chain gpt-main → claude-backup → gemini-long\n"
    );
    println!(
        "{:<16} {:<6} {:<6} {:<27} {:>5} {:>7}  requests: gpt / claude / gemini",
        "fault", "mode", "status", "served by", "words", "time"
    );
    for (scenario, stream) in SCENARIOS {
        let start = Instant::now();
        let answer = ask(&client, addr, scenario, stream, None).await;
        let (status, words) = (answer.status, answer.words.len());
        let served_by = match answer.models.is_empty() {
            true => "-".to_owned(),
            false => answer.models.join(" → "),
        };
        let asked = [&gpt, &claude, &gemini].map(|p| p.asked(scenario));
        println!(
            "{scenario:<16} {:<6} {status:<6} {served_by:<27} {words:>5} {:>7.1?}  {} / {} / {}",
            if stream { "stream" } else { "json" },
            start.elapsed(),
            asked[0],
            asked[1],
            asked[2]
        );
        if let Some(error) = answer.error {
            println!(
                "{:<16} error: {}",
                "",
                error.chars().take(100).collect::<String>()
            );
        }
    }
}
