//! A retried tool call traced the OpenTelemetry way: the agent's step is a
//! span of its own, the `#[retry]` call a child span, and each attempt a
//! child of that, with `http.request.resend_count`, `error.type` and the
//! `tenacious.*` attributes; exported to stdout through
//! `tracing-opentelemetry`.
//!
//! `cargo run -p tenacious-feature-tests --example otel`
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tenacious::{Classify, retry};
use tracing_subscriber::layer::SubscriberExt;

#[derive(Debug, Classify)]
enum SearchError {
    #[classify(transient)]
    Timeout,
    #[classify(rate_limited)]
    TooManyRequests(#[classify(retry_after)] Duration),
}

static CALLS: AtomicU32 = AtomicU32::new(0);

/// Times out, then answers 429 with a 20 ms Retry-After, then succeeds.
#[retry(max = 4, base = "10ms", jitter = "none")]
async fn search(query: &str) -> Result<String, SearchError> {
    match CALLS.fetch_add(1, Ordering::Relaxed) {
        0 => Err(SearchError::Timeout),
        1 => Err(SearchError::TooManyRequests(Duration::from_millis(20))),
        _ => Ok(format!("3 results for {query:?}")),
    }
}

fn main() {
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(opentelemetry_stdout::SpanExporter::default())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("agent")));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let answer = tracing::subscriber::with_default(subscriber, || {
        // The agent's own span: the operation's `gen_ai.*` attributes are
        // the caller's to set, spelled here rather than taken from the
        // semantic-conventions crate, which deprecates its copies.
        let step = tracing::info_span!(
            "agent.step",
            otel.name = "execute_tool search",
            "gen_ai.operation.name" = "execute_tool",
            "gen_ai.tool.name" = "search",
        );
        runtime.block_on(tracing::Instrument::instrument(search("rust retry"), step))
    });
    println!("answer: {}", answer.expect("the third attempt succeeds"));
    provider.shutdown().expect("the exporter flushes");
}
