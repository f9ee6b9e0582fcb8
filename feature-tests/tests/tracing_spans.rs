//! Feature `tracing`: one span per call, one child span per attempt,
//! entered while the attempt runs, with OpenTelemetry's names
//! (`http.request.resend_count`, `error.type`, `otel.status_code`) and
//! `tenacious.*` ones, seen by a capturing subscriber on each test's own
//! thread. Async tests run on tokio's paused clock, so waits are exact.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[path = "support/fields.rs"]
mod fields;
use fields::{Fields, Value};

use tenacious::{Classify, RetryBudget, retry};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(rate_limited)]
    TooManyRequests(#[classify(retry_after)] Duration),
    #[classify(invalid)]
    BadArguments,
}

use ToolError::{BadArguments, Timeout, TooManyRequests};

#[derive(Debug, Clone)]
struct SpanRec {
    name: &'static str,
    parent: Option<u64>,
    fields: BTreeMap<String, Value>,
}

impl SpanRec {
    fn u64(&self, name: &str) -> Option<u64> {
        match self.fields.get(name) {
            Some(Value::U64(n)) => Some(*n),
            None => None,
            other => panic!("`{name}` is {other:?}, not a u64"),
        }
    }

    fn str(&self, name: &str) -> Option<&str> {
        match self.fields.get(name) {
            Some(Value::Str(s)) => Some(s),
            None => None,
            other => panic!("`{name}` is {other:?}, not a str"),
        }
    }
}

#[derive(Default)]
struct Seen {
    /// By id - 1.
    spans: Vec<SpanRec>,
    /// The spans entered, innermost last.
    stack: Vec<u64>,
    /// Each event's message and the span it was emitted in.
    events: Vec<(String, Option<u64>)>,
}

/// Records every span, with its parent and fields, and the span each
/// event was emitted in.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Seen>>);

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut seen = self.0.lock().unwrap();
        let parent = match attrs.parent() {
            Some(parent) => Some(parent.into_u64()),
            None if attrs.is_contextual() => seen.stack.last().copied(),
            None => None,
        };
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        seen.spans.push(SpanRec {
            name: attrs.metadata().name(),
            parent,
            fields,
        });
        Id::from_u64(seen.spans.len() as u64)
    }
    fn record(&self, id: &Id, values: &Record<'_>) {
        let mut seen = self.0.lock().unwrap();
        let span = &mut seen.spans[id.into_u64() as usize - 1];
        values.record(&mut Fields(&mut span.fields));
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let mut seen = self.0.lock().unwrap();
        let message = match fields.get("message") {
            Some(Value::Other(m) | Value::Str(m)) => m.clone(),
            _ => String::new(),
        };
        let current = seen.stack.last().copied();
        seen.events.push((message, current));
    }
    fn enter(&self, id: &Id) {
        self.0.lock().unwrap().stack.push(id.into_u64());
    }
    fn exit(&self, id: &Id) {
        let mut seen = self.0.lock().unwrap();
        let top = seen.stack.pop();
        assert_eq!(top, Some(id.into_u64()), "spans exit in the order entered");
    }
}

impl Capture {
    /// Runs `f` on a paused tokio runtime with this subscriber.
    fn during<T>(f: impl std::future::Future<Output = T>) -> (T, Seen) {
        let capture = Capture::default();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let value = tracing::subscriber::with_default(capture.clone(), || runtime.block_on(f));
        let seen = std::mem::take(&mut *capture.0.lock().unwrap());
        (value, seen)
    }
}

impl Seen {
    fn calls(&self) -> Vec<(u64, &SpanRec)> {
        self.named("retry")
    }

    fn attempts(&self) -> Vec<(u64, &SpanRec)> {
        self.named("attempt")
    }

    fn named(&self, name: &str) -> Vec<(u64, &SpanRec)> {
        self.spans
            .iter()
            .enumerate()
            .filter(|(_, span)| span.name == name)
            .map(|(i, span)| (i as u64 + 1, span))
            .collect()
    }
}

/// Fails with each of `errors` in turn, then succeeds, saying so inside
/// each attempt.
#[retry(max = 3, base = "100ms", jitter = "none")]
async fn scripted(errors: &mut Vec<ToolError>) -> Result<(), ToolError> {
    tracing::info!("calling the tool");
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.remove(0))
    }
}

#[test]
fn one_span_per_call_and_one_child_per_attempt_entered_while_it_runs() {
    let (result, seen) = Capture::during(scripted(&mut vec![Timeout, Timeout]));
    assert_eq!(result, Ok(()));
    let calls = seen.calls();
    assert_eq!(calls.len(), 1);
    let (call_id, call) = calls[0];
    assert_eq!(call.str("otel.name"), Some("tracing_spans::scripted"));
    assert_eq!(call.str("tenacious.fn"), Some("tracing_spans::scripted"));
    assert_eq!(call.u64("tenacious.max"), Some(3));
    assert_eq!(call.u64("tenacious.attempts"), Some(3));
    assert_eq!(call.str("tenacious.outcome"), Some("recovered"));
    assert_eq!(call.str("otel.status_code"), Some("OK"));
    assert_eq!(call.str("error.type"), None);

    let attempts = seen.attempts();
    assert_eq!(attempts.len(), 3);
    for (n, (_, attempt)) in attempts.iter().enumerate() {
        let n = n as u64 + 1;
        assert_eq!(attempt.parent, Some(call_id), "attempt {n}");
        assert_eq!(attempt.u64("tenacious.attempt"), Some(n));
        // OpenTelemetry's count of resends: none on the first request.
        let resends = (n > 1).then(|| n - 1);
        assert_eq!(attempt.u64("http.request.resend_count"), resends);
    }
    for (_, failed) in &attempts[..2] {
        assert_eq!(failed.str("otel.status_code"), Some("ERROR"));
        assert_eq!(failed.str("error.type"), Some("Timeout"));
        assert_eq!(failed.str("tenacious.class"), Some("transient"));
        assert_eq!(failed.str("tenacious.variant"), Some("Timeout"));
    }
    assert_eq!(attempts[2].1.str("otel.status_code"), Some("OK"));
    assert_eq!(attempts[2].1.str("error.type"), None);
    // The wait before each retry, and what it came from.
    assert_eq!(attempts[0].1.str("tenacious.wait"), None);
    assert_eq!(attempts[1].1.str("tenacious.wait"), Some("backoff"));
    assert_eq!(attempts[1].1.u64("tenacious.wait_ms"), Some(100));
    assert_eq!(attempts[2].1.u64("tenacious.wait_ms"), Some(200));

    // The body's own event is emitted inside its attempt's span.
    let inside: Vec<Option<u64>> = seen
        .events
        .iter()
        .filter(|(message, _)| message == "calling the tool")
        .map(|(_, span)| *span)
        .collect();
    let attempt_ids: Vec<Option<u64>> = attempts.iter().map(|(id, _)| Some(*id)).collect();
    assert_eq!(inside, attempt_ids);
    // The retry events are the call's.
    let retrying: Vec<Option<u64>> = seen
        .events
        .iter()
        .filter(|(message, _)| message == "retrying")
        .map(|(_, span)| *span)
        .collect();
    assert_eq!(retrying, [Some(call_id), Some(call_id)]);
}

#[test]
fn a_server_hint_is_the_wait_s_source_and_a_give_up_is_the_call_s_error() {
    let hint = TooManyRequests(Duration::from_secs(2));
    let (result, seen) = Capture::during(scripted(&mut vec![hint, BadArguments]));
    assert_eq!(result, Err(BadArguments));
    let attempts = seen.attempts();
    assert_eq!(attempts.len(), 2);
    // A hint no shorter than the backoff is the wait's source.
    assert_eq!(attempts[1].1.str("tenacious.wait"), Some("hint"));
    // The hint plus the backoff on top.
    assert_eq!(attempts[1].1.u64("tenacious.wait_ms"), Some(2100));
    assert_eq!(attempts[1].1.str("error.type"), Some("BadArguments"));
    assert_eq!(attempts[1].1.str("tenacious.class"), Some("invalid"));
    let (_, call) = seen.calls()[0];
    assert_eq!(call.str("tenacious.outcome"), Some("gave_up"));
    assert_eq!(call.str("tenacious.stop_reason"), Some("not_retryable"));
    assert_eq!(call.str("error.type"), Some("BadArguments"));
    assert_eq!(call.str("otel.status_code"), Some("ERROR"));
    assert_eq!(call.u64("tenacious.attempts"), Some(2));
}

static BUDGET: RetryBudget = RetryBudget::with_capacity(100);

#[retry(max = 3, base = "10ms", jitter = "none", budget = BUDGET)]
async fn budgeted() -> Result<(), ToolError> {
    Err(Timeout)
}

#[test]
fn each_attempt_says_what_is_left_of_the_budget() {
    let (result, seen) = Capture::during(budgeted());
    assert_eq!(result, Err(Timeout));
    let left: Vec<Option<u64>> = seen
        .attempts()
        .iter()
        .map(|(_, a)| a.u64("tenacious.budget_left"))
        .collect();
    // Each retry takes 5 tokens.
    assert_eq!(left, [Some(100), Some(95), Some(90)]);
    let (_, call) = seen.calls()[0];
    assert_eq!(call.str("tenacious.stop_reason"), Some("exhausted"));
}

#[retry(max = 2, stats = false)]
async fn unobserved() -> Result<(), ToolError> {
    Err(Timeout)
}

#[test]
fn a_fn_without_a_record_has_no_spans() {
    let (_, seen) = Capture::during(unobserved());
    assert!(seen.spans.is_empty());
}

#[test]
fn a_sync_fn_s_attempts_are_spans_too() {
    #[retry(max = 2, base = "1ms")]
    fn lookup() -> Result<u32, ToolError> {
        tracing::info!("looking up");
        Err(Timeout)
    }
    let (result, seen) = Capture::during(async { lookup() });
    assert_eq!(result, Err(Timeout));
    let attempts = seen.attempts();
    assert_eq!(attempts.len(), 2);
    // The retry's and the give-up's events are the call's, outside any
    // attempt; the body's are inside its own.
    let body: Vec<Option<u64>> = seen
        .events
        .iter()
        .filter(|(m, _)| m == "looking up")
        .map(|(_, s)| *s)
        .collect();
    assert_eq!(body, [Some(attempts[0].0), Some(attempts[1].0)]);
}
