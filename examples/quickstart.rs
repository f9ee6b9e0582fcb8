//! The quickstart: a flaky tool call, classified and retried.
//!
//! Run it with `cargo run --example quickstart`. The "service" fails the way
//! real ones do (a timeout, then a 429 with a Retry-After hint) before it
//! answers; `#[retry]` absorbs both, and a bad request is handed back at once.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tenacious::{Classify, RetryEvent, retry};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(rate_limited, hint = "the service asked us to wait {wait:?}")]
    TooManyRequests {
        #[classify(retry_after)]
        wait: Option<Duration>,
    },
    #[classify(invalid, hint = "fix the query: {0}")]
    BadQuery(String),
}

static CALLS: AtomicU32 = AtomicU32::new(0);

/// One attempt at the search tool: fails twice, then answers.
#[retry(max = 4, base = "50ms", jitter = "full", notify = log_retry)]
async fn search(query: &str) -> Result<Vec<String>, ToolError> {
    if query.is_empty() {
        return Err(ToolError::BadQuery("the query is empty".into()));
    }
    match CALLS.fetch_add(1, Ordering::Relaxed) {
        0 => Err(ToolError::Timeout),
        1 => Err(ToolError::TooManyRequests {
            wait: Some(Duration::from_millis(300)),
        }),
        _ => Ok(vec![format!("result for {query:?}")]),
    }
}

fn log_retry(error: &ToolError, event: &RetryEvent) {
    println!(
        "  attempt {}/{} failed ({:?}, {}): retrying in {:?}",
        event.attempt, event.max, error, event.class, event.delay
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    println!("search(\"rust retry\"):");
    match search("rust retry").await {
        Ok(hits) => println!(
            "  ok after {} attempts: {hits:?}",
            CALLS.load(Ordering::Relaxed)
        ),
        Err(e) => println!("  gave up: {e:?}"),
    }

    println!("search(\"\"):");
    match search("").await {
        Ok(hits) => println!("  ok: {hits:?}"),
        Err(e) => println!(
            "  not retried ({}): {e:?}; advice for the model: {}",
            e.classify(),
            e.hint().unwrap_or_default()
        ),
    }
}
