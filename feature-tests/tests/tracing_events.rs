//! Feature `tracing`: one `WARN` event per retry, one event per give-up
//! at the level of its stop reason, and a retried stream's events (committed, stalled, resuming,
//! failed partway), on the target `tenacious`, with stable field names and
//! types, seen by a capturing subscriber set for each test's own thread.
//! Async tests run on tokio's paused clock, so `delay_ms` and `elapsed_ms`
//! are exact.
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[path = "support/fields.rs"]
mod fields;
use fields::{Fields, Value};

use tenacious::stats::CallStats;
use tenacious::{Classify, Jitter, Policy, retry};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(rate_limited)]
    TooManyRequests(#[classify(retry_after)] Duration),
    #[classify(invalid)]
    BadArguments,
    #[classify(fatal)]
    BadCredentials,
}

use ToolError::{BadArguments, BadCredentials, Timeout, TooManyRequests};

#[derive(Debug, Clone)]
struct Captured {
    level: Level,
    target: String,
    fields: BTreeMap<String, Value>,
}

impl Captured {
    fn u64(&self, name: &str) -> u64 {
        match self.fields.get(name) {
            Some(Value::U64(n)) => *n,
            other => panic!("`{name}` is {other:?}, not a u64"),
        }
    }

    fn str(&self, name: &str) -> &str {
        match self.fields.get(name) {
            Some(Value::Str(s)) => s,
            other => panic!("`{name}` is {other:?}, not a str"),
        }
    }

    fn names(&self) -> Vec<&str> {
        self.fields.keys().map(String::as_str).collect()
    }
}

/// Records every event it is given; spans are not used.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

impl Capture {
    fn events(&self) -> Vec<Captured> {
        self.0.lock().unwrap().clone()
    }

    /// Captures what `f` emits on this thread.
    fn during<T>(f: impl FnOnce() -> T) -> (T, Vec<Captured>) {
        let capture = Capture::default();
        let value = tracing::subscriber::with_default(capture.clone(), f);
        (value, capture.events())
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push(Captured {
            level: *event.metadata().level(),
            target: event.metadata().target().to_owned(),
            fields,
        });
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

const RETRY_FIELDS: [&str; 8] = [
    "attempt",
    "class",
    "delay_ms",
    "elapsed_ms",
    "fn",
    "max",
    "message",
    "variant",
];

const GIVE_UP_FIELDS: [&str; 8] = [
    "attempt",
    "class",
    "elapsed_ms",
    "fn",
    "max",
    "message",
    "reason",
    "variant",
];

/// Each attempt takes 50 ms, then times out.
#[retry(max = 3, base = "100ms", jitter = "none")]
async fn slow_and_flaky() -> Result<(), ToolError> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    Err(Timeout)
}

#[test]
fn each_retry_is_one_warn_and_the_give_up_one_error() {
    let (result, events) = Capture::during(|| paused_runtime().block_on(slow_and_flaky()));
    assert_eq!(result, Err(Timeout));
    let levels: Vec<Level> = events.iter().map(|e| e.level).collect();
    assert_eq!(levels, [Level::WARN, Level::WARN, Level::ERROR]);
    for event in &events {
        assert_eq!(event.target, "tenacious");
        assert_eq!(event.str("fn"), "tracing_events::slow_and_flaky");
        assert_eq!(event.u64("max"), 3);
        assert_eq!(event.str("class"), "transient");
        assert_eq!(event.str("variant"), "Timeout");
    }
    let (first, second, last) = (&events[0], &events[1], &events[2]);
    assert_eq!(first.names(), RETRY_FIELDS);
    assert_eq!(first.fields["message"], Value::Other("retrying".into()));
    // The clock starts with the call: the first attempt's 50 ms count.
    assert_eq!(
        (
            first.u64("attempt"),
            first.u64("delay_ms"),
            first.u64("elapsed_ms")
        ),
        (1, 100, 50)
    );
    assert_eq!(
        (
            second.u64("attempt"),
            second.u64("delay_ms"),
            second.u64("elapsed_ms")
        ),
        (2, 200, 200)
    );
    assert_eq!(last.names(), GIVE_UP_FIELDS);
    assert_eq!(last.fields["message"], Value::Other("gave up".into()));
    assert_eq!(last.u64("attempt"), 3);
    assert_eq!(last.u64("elapsed_ms"), 450);
    assert_eq!(last.str("reason"), "exhausted");
}

#[retry(base = "10ms")]
async fn fine() -> Result<u32, ToolError> {
    Ok(1)
}

#[retry(stats = false, max = 2, base = "10ms")]
async fn unobserved() -> Result<u32, ToolError> {
    Err(Timeout)
}

#[test]
fn a_success_and_an_unobserved_fn_emit_nothing() {
    let (results, events) =
        Capture::during(|| paused_runtime().block_on(async { (fine().await, unobserved().await) }));
    assert_eq!(results, (Ok(1), Err(Timeout)));
    assert!(events.is_empty(), "{events:?}");
}

/// Fails with the errors given, in order, then succeeds.
#[retry(max = 3, base = "10ms", jitter = "none", max_retry_after = "5s")]
async fn scripted(errors: &mut Vec<ToolError>) -> Result<(), ToolError> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.remove(0))
    }
}

#[test]
fn a_first_error_the_policy_does_not_retry_is_info_not_error() {
    let (result, events) =
        Capture::during(|| paused_runtime().block_on(scripted(&mut vec![BadArguments])));
    assert_eq!(result, Err(BadArguments));
    assert_eq!(events.len(), 1);
    let declined = &events[0];
    // An `Invalid` answer is the model's to fix, by design: `INFO`.
    assert_eq!(declined.level, Level::INFO);
    assert_eq!(declined.names(), GIVE_UP_FIELDS);
    assert_eq!(
        declined.fields["message"],
        Value::Other("not retried".into())
    );
    assert_eq!(declined.str("reason"), "not_retryable");
    assert_eq!(declined.str("class"), "invalid");

    // After a retry, it is the retried call giving up; still at the level
    // of its reason and class.
    let (result, events) =
        Capture::during(|| paused_runtime().block_on(scripted(&mut vec![Timeout, BadArguments])));
    assert_eq!(result, Err(BadArguments));
    let levels: Vec<Level> = events.iter().map(|e| e.level).collect();
    assert_eq!(levels, [Level::WARN, Level::INFO]);
    assert_eq!(events[1].fields["message"], Value::Other("gave up".into()));
    assert_eq!(events[1].str("reason"), "not_retryable");
    assert_eq!(events[1].str("variant"), "BadArguments");
}

#[test]
fn a_fatal_error_is_an_error_at_once_for_a_human_must_fix_it() {
    let (result, events) =
        Capture::during(|| paused_runtime().block_on(scripted(&mut vec![BadCredentials])));
    assert_eq!(result, Err(BadCredentials));
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].level, Level::ERROR);
    assert_eq!(
        (events[0].str("class"), events[0].str("reason")),
        ("fatal", "not_retryable")
    );
}

#[test]
fn a_server_hint_is_the_delay_and_one_too_long_returns_at_once() {
    let hint = TooManyRequests(Duration::from_secs(2));
    let (result, events) = Capture::during(|| paused_runtime().block_on(scripted(&mut vec![hint])));
    assert_eq!(result, Ok(()));
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].level, Level::WARN);
    assert_eq!(events[0].str("class"), "rate_limited");
    assert_eq!(events[0].str("variant"), "TooManyRequests");
    // The hint, plus the backoff (10 ms, without jitter) on top.
    assert_eq!(events[0].u64("delay_ms"), 2010);

    let too_long = TooManyRequests(Duration::from_secs(60));
    let (result, events) =
        Capture::during(|| paused_runtime().block_on(scripted(&mut vec![too_long])));
    assert_eq!(result, Err(too_long));
    assert_eq!(events.len(), 1);
    // A limit doing its job: `WARN`.
    assert_eq!(events[0].level, Level::WARN);
    assert_eq!(
        (events[0].u64("attempt"), events[0].str("reason")),
        (1, "hint_too_long")
    );
}

#[test]
fn a_policy_with_a_record_emits_the_same_events_under_its_name() {
    static LOOKUP: CallStats = CallStats::new("lookup");
    let policy = Policy::new()
        .max(2)
        .base(Duration::from_millis(1))
        .jitter(Jitter::None)
        .stats(&LOOKUP);
    let (result, events) = Capture::during(|| policy.retry_blocking(|| Err::<(), _>(Timeout)));
    assert_eq!(result, Err(Timeout));
    let summary: Vec<(Level, &str, u64)> = events
        .iter()
        .map(|e| (e.level, e.str("fn"), e.u64("attempt")))
        .collect();
    assert_eq!(
        summary,
        [(Level::WARN, "lookup", 1), (Level::ERROR, "lookup", 2)]
    );
    assert_eq!(events[0].u64("delay_ms"), 1);

    // Without a record, nothing.
    let (_, events) = Capture::during(|| {
        Policy::new()
            .max(2)
            .base(Duration::from_millis(1))
            .retry_blocking(|| Err::<(), _>(Timeout))
    });
    assert!(events.is_empty(), "{events:?}");
}

static PROVIDER: tenacious::Breaker = tenacious::Breaker::new().name("provider").min_throughput(2);

#[test]
fn a_guard_changing_state_is_an_info_event_naming_it() {
    let policy = Policy::new().max(1).breaker(&PROVIDER);
    let (_, events) = Capture::during(|| {
        for _ in 0..2 {
            let _ = policy.retry_blocking(|| Err::<(), _>(Timeout));
        }
    });
    let changes: Vec<&Captured> = events
        .iter()
        .filter(|e| e.fields.get("message") == Some(&Value::Other("guard changed state".into())))
        .collect();
    assert_eq!(changes.len(), 1, "{events:?}");
    let opened = changes[0];
    assert_eq!(opened.level, Level::INFO);
    assert_eq!(opened.target, "tenacious");
    assert_eq!(
        (opened.str("guard"), opened.str("kind"), opened.str("state")),
        ("provider", "breaker", "open")
    );
}

#[path = "support/streams.rs"]
#[allow(dead_code, reason = "the metrics tests drive the other stream")]
mod streams;

/// What a retried stream reports: a stream that meets every timer once.
#[test]
fn a_streams_commit_stalls_resume_and_partial_failure_are_events_naming_it() {
    static CHAT: CallStats = CallStats::new("chat");
    let (_, events) = Capture::during(|| streams::every_timer_once(&CHAT));
    // The stream's own events; the retries and the give-up have theirs.
    let events: Vec<_> = events
        .into_iter()
        .filter(|e| {
            matches!(&e.fields["message"], Value::Other(message)
                if message.starts_with("stream") || message == "resuming stream")
        })
        .collect();
    let summary: Vec<(Level, &str, Vec<&str>)> = events
        .iter()
        .map(|e| {
            let Value::Other(message) = &e.fields["message"] else {
                panic!("{e:?}")
            };
            (e.level, message.as_str(), e.names())
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                Level::WARN,
                "stream stalled",
                vec!["fn", "message", "timer"]
            ),
            (
                Level::DEBUG,
                "stream committed",
                vec!["first_item_ms", "fn", "message"]
            ),
            (
                Level::WARN,
                "stream stalled",
                vec!["fn", "message", "timer"]
            ),
            (
                Level::INFO,
                "resuming stream",
                vec!["delivered", "fn", "message"]
            ),
            (
                Level::WARN,
                "stream stalled",
                vec!["fn", "message", "timer"]
            ),
            (
                Level::WARN,
                "stream failed partway",
                vec!["delivered", "fn", "message", "reason"]
            ),
        ]
    );
    for event in &events {
        assert_eq!(event.target, "tenacious");
        assert_eq!(event.str("fn"), "chat");
    }
    let timers: Vec<&str> = [0, 2, 4].map(|i| events[i].str("timer")).to_vec();
    assert_eq!(timers, ["first_item", "idle", "deadline"]);
    assert_eq!(events[1].u64("first_item_ms"), 1_250);
    assert_eq!(events[3].u64("delivered"), 2);
    assert_eq!(
        (events[5].u64("delivered"), events[5].str("reason")),
        (5, "deadline")
    );
    let stats = CHAT.snapshot();
    assert_eq!(
        (stats.streams(), stats.stalls(), stats.resumes()),
        (1, 3, 1)
    );
    assert_eq!((stats.partial_failures(), stats.partial_items()), (1, 5));
    assert_eq!(stats.first_item_max(), Some(Duration::from_millis(1_250)));
}

static SHUT: tenacious::Breaker = tenacious::Breaker::new().min_throughput(2);

#[test]
fn a_call_refused_before_its_first_attempt_is_a_give_up_of_no_attempt() {
    static REFUSED: CallStats = CallStats::new("refused");
    let policy = Policy::new().max(1).breaker(&SHUT).stats(&REFUSED);
    let timed_out = || std::io::Error::from(std::io::ErrorKind::TimedOut);
    // Every call inside a capture: an event's callsite first met with no
    // subscriber would be cached as uninteresting for the other tests.
    let (_, opening) = Capture::during(|| {
        for _ in 0..2 {
            let _ = policy.retry_blocking(|| Err::<(), _>(timed_out()));
        }
    });
    assert!(!opening.is_empty());
    let (result, events) =
        Capture::during(|| policy.retry_blocking(|| Ok::<_, std::io::Error>(())));
    assert!(result.is_err(), "the open breaker refused it");
    let gave_up: Vec<&Captured> = events
        .iter()
        .filter(|e| e.fields.get("message") == Some(&Value::Other("gave up".into())))
        .collect();
    assert_eq!(gave_up.len(), 1, "{events:?}");
    let event = gave_up[0];
    // A refusal gives up at its reason's level, as any give-up.
    assert_eq!(event.level, Level::WARN);
    assert_eq!(
        (event.str("fn"), event.u64("attempt"), event.str("reason")),
        ("refused", 0, "circuit_open")
    );
    assert_eq!(
        event.fields.get("refused"),
        Some(&Value::Other("true".into()))
    );
}
