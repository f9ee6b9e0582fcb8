//! Feature `metrics`: the counters and the histograms each observed call
//! (and each retried stream) reports through the `metrics` facade, read
//! back from `metrics-util`'s debugging recorder (set for each test's own
//! thread), with their labels.
use std::collections::BTreeMap;
use std::time::Duration;

use metrics_util::MetricKind;
use metrics_util::debugging::{DebugValue, DebuggingRecorder};
use tenacious::stats::{self, CallStats};
use tenacious::{Classify, ErrorClass, Limit, Policy, StopReason, retry};

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(rate_limited)]
    TooManyRequests,
    #[classify(invalid)]
    BadArguments,
}

use ToolError::{BadArguments, Timeout, TooManyRequests};

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Counter(u64),
    Histogram(Vec<f64>),
}

/// Every metric `f` reported on this thread, keyed
/// `name{label=value,...}` with the labels sorted.
fn recorded<T>(f: impl FnOnce() -> T) -> (T, BTreeMap<String, Value>) {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let value = metrics::with_local_recorder(&recorder, f);
    let mut metrics = BTreeMap::new();
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let (kind, key) = key.into_parts();
        let mut labels: Vec<String> = key
            .labels()
            .map(|l| format!("{}={}", l.key(), l.value()))
            .collect();
        labels.sort();
        let value = match (kind, value) {
            (MetricKind::Counter, DebugValue::Counter(n)) => Value::Counter(n),
            (MetricKind::Histogram, DebugValue::Histogram(values)) => {
                Value::Histogram(values.into_iter().map(|v| v.0).collect())
            }
            other => panic!("unexpected metric {other:?}"),
        };
        metrics.insert(format!("{}{{{}}}", key.name(), labels.join(",")), value);
    }
    (value, metrics)
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// Fails with the errors given, in order, then succeeds.
#[retry(max = 3, base = "10ms")]
async fn scripted(errors: &mut Vec<ToolError>) -> Result<(), ToolError> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.remove(0))
    }
}

#[test]
fn each_call_reports_its_attempts_errors_retries_and_give_up() {
    let (results, metrics) = recorded(|| {
        paused_runtime().block_on(async {
            [
                // Recovers at the third attempt.
                scripted(&mut vec![Timeout, TooManyRequests]).await,
                // At once.
                scripted(&mut vec![]).await,
                // Not retried.
                scripted(&mut vec![BadArguments]).await,
            ]
        })
    });
    assert_eq!(results, [Ok(()), Ok(()), Err(BadArguments)]);
    let name = "fn=metrics::scripted";
    let expected: BTreeMap<String, Value> = [
        (
            format!("tenacious_attempts_total{{{name}}}"),
            Value::Counter(5),
        ),
        (
            format!("tenacious_errors_total{{class=transient,{name},variant=Timeout}}"),
            Value::Counter(1),
        ),
        (
            format!("tenacious_errors_total{{class=rate_limited,{name},variant=TooManyRequests}}"),
            Value::Counter(1),
        ),
        (
            format!("tenacious_errors_total{{class=invalid,{name},variant=BadArguments}}"),
            Value::Counter(1),
        ),
        (
            format!("tenacious_retries_total{{class=transient,{name},variant=Timeout}}"),
            Value::Counter(1),
        ),
        (
            format!("tenacious_retries_total{{class=rate_limited,{name},variant=TooManyRequests}}"),
            Value::Counter(1),
        ),
        (
            format!("tenacious_gave_up_total{{{name},reason=not_retryable}}"),
            Value::Counter(1),
        ),
        (
            format!("tenacious_attempts_per_call{{{name}}}"),
            Value::Histogram(vec![3.0, 1.0, 1.0]),
        ),
    ]
    .into_iter()
    .collect();
    assert_eq!(metrics, expected);
}

#[retry(max = 2, base = "10ms")]
async fn always_times_out() -> Result<(), ToolError> {
    Err(Timeout)
}

#[test]
fn the_metrics_agree_with_the_statistics() {
    let (_, metrics) = recorded(|| {
        paused_runtime().block_on(async {
            for _ in 0..3 {
                let _ = always_times_out().await;
            }
        })
    });
    let snapshot = stats::snapshot();
    let stats = snapshot.get("metrics::always_times_out").unwrap();
    let counter = |key: &str| match metrics.get(key) {
        Some(Value::Counter(n)) => *n,
        other => panic!("{key}: {other:?}"),
    };
    let labels = "fn=metrics::always_times_out";
    assert_eq!(
        counter(&format!("tenacious_attempts_total{{{labels}}}")),
        stats.attempts()
    );
    assert_eq!(
        counter(&format!(
            "tenacious_retries_total{{class=transient,{labels},variant=Timeout}}"
        )),
        stats.retries()
    );
    assert_eq!(
        counter(&format!(
            "tenacious_errors_total{{class=transient,{labels},variant=Timeout}}"
        )),
        stats.errors_of(ErrorClass::Transient)
    );
    assert_eq!(
        counter(&format!(
            "tenacious_gave_up_total{{{labels},reason=exhausted}}"
        )),
        stats.gave_up(StopReason::Exhausted)
    );
    assert_eq!(stats.attempts(), 6);
}

/// An error with as many variants as asked for.
#[derive(Debug)]
struct Numbered(usize);

static VARIANTS: [&str; 18] = [
    "E0", "E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "E10", "E11", "E12", "E13", "E14",
    "E15", "E16", "E17",
];

impl Classify for Numbered {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Invalid
    }
    fn variant(&self) -> &'static str {
        VARIANTS[self.0]
    }
}

#[retry]
fn many_variants(n: usize) -> Result<(), Numbered> {
    Err(Numbered(n))
}

#[test]
fn variants_beyond_the_records_slots_are_labelled_other() {
    let (_, metrics) = recorded(|| {
        for n in 0..VARIANTS.len() {
            let _ = many_variants(n);
        }
    });
    let errors = |variant: &str| {
        metrics.get(&format!(
            "tenacious_errors_total{{class=invalid,fn=metrics::many_variants,variant={variant}}}"
        ))
    };
    assert_eq!(errors("E15"), Some(&Value::Counter(1)));
    assert_eq!(errors("E16"), None);
    assert_eq!(errors("(other)"), Some(&Value::Counter(2)));
}

#[retry(stats = false)]
fn unobserved() -> Result<(), ToolError> {
    Err(BadArguments)
}

#[test]
fn a_policy_reports_under_its_records_name_and_no_record_reports_nothing() {
    static SEARCH: CallStats = CallStats::new("search");
    let policy = Policy::new().base(Duration::ZERO);
    let (_, metrics) = recorded(|| {
        let _ = policy
            .stats(&SEARCH)
            .retry_blocking(|| Ok::<_, ToolError>(()));
        let _ = policy.retry_blocking(|| Err::<(), _>(BadArguments));
        let _ = unobserved();
    });
    let keys: Vec<&str> = metrics.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "tenacious_attempts_per_call{fn=search}",
            "tenacious_attempts_total{fn=search}"
        ]
    );
}

#[derive(Debug, Classify)]
enum Limited {
    #[classify(rate_limited)]
    TooMany(#[classify(retry_after)] Duration),
    #[classify(refused)]
    Refused(tenacious::Refused),
}

/// One attempt, answered 429 with a 2 s hint.
#[retry(max = 1, cooldown = QUOTA)]
async fn limited() -> Result<(), Limited> {
    Err(Limited::TooMany(Duration::from_secs(2)))
}

/// One attempt that succeeds.
#[retry(max = 1, cooldown = QUOTA)]
async fn served() -> Result<(), Limited> {
    Ok(())
}

static QUOTA: tenacious::Cooldown = tenacious::Cooldown::new().name("quota");

#[test]
fn a_guard_reports_its_waits_and_changes_labelled_with_its_name() {
    let (_, metrics) = recorded(|| {
        paused_runtime().block_on(async {
            // Closes the cooldown (a change); the next call waits for it.
            let _ = limited().await;
            let _ = served().await;
        });
    });
    let labels = "guard=quota,kind=cooldown";
    assert_eq!(
        metrics.get(&format!("tenacious_guard_changes_total{{{labels}}}")),
        Some(&Value::Counter(1))
    );
    assert_eq!(
        metrics.get(&format!("tenacious_guard_waits_total{{{labels}}}")),
        Some(&Value::Counter(1))
    );
    let snapshot = stats::snapshot();
    let quota = snapshot.guard("quota").unwrap();
    assert_eq!((quota.waits, quota.changes), (1, 1));
}

#[path = "support/streams.rs"]
mod streams;

/// What retried streams report: one that meets every timer once, one cut
/// after its first item.
#[test]
fn a_stream_reports_its_first_item_stalls_resumes_and_partial_failures() {
    static CHAT: CallStats = CallStats::new("chat");
    let (_, metrics) = recorded(|| {
        streams::every_timer_once(&CHAT);
        streams::cut_after_one(&CHAT);
    });
    // The streams' own metrics; their attempts, retries and give-ups have
    // theirs.
    let metrics: BTreeMap<String, Value> = metrics
        .into_iter()
        .filter(|(key, _)| key.starts_with("tenacious_stream_"))
        .collect();
    let expected: BTreeMap<String, Value> = [
        (
            "tenacious_stream_first_item_seconds{fn=chat}",
            Value::Histogram(vec![1.25, 0.5]),
        ),
        (
            "tenacious_stream_stalls_total{fn=chat,timer=first_item}",
            Value::Counter(1),
        ),
        (
            "tenacious_stream_stalls_total{fn=chat,timer=idle}",
            Value::Counter(2),
        ),
        (
            "tenacious_stream_stalls_total{fn=chat,timer=deadline}",
            Value::Counter(1),
        ),
        ("tenacious_stream_resumes_total{fn=chat}", Value::Counter(1)),
        (
            "tenacious_stream_partial_total{fn=chat,reason=deadline}",
            Value::Counter(1),
        ),
        (
            "tenacious_stream_partial_total{fn=chat,reason=partial_output}",
            Value::Counter(1),
        ),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_owned(), value))
    .collect();
    assert_eq!(metrics, expected);
    let stats = CHAT.snapshot();
    assert_eq!(stats.stalls_of(Limit::Idle), 2);
    assert_eq!(stats.partial_failures(), 2);
}

static SHUT: tenacious::Breaker = tenacious::Breaker::new().min_throughput(2);

#[test]
fn a_call_refused_before_its_first_attempt_counts_as_refused_and_given_up() {
    static REFUSED: CallStats = CallStats::new("refused");
    let policy = Policy::new().max(1).breaker(&SHUT).stats(&REFUSED);
    let timed_out = || std::io::Error::from(std::io::ErrorKind::TimedOut);
    for _ in 0..2 {
        let _ = policy.retry_blocking(|| Err::<(), _>(timed_out()));
    }
    let (_, metrics) = recorded(|| {
        let _ = policy.retry_blocking(|| Ok::<_, std::io::Error>(()));
    });
    let labels = "fn=refused,reason=circuit_open";
    assert_eq!(
        metrics.get(&format!("tenacious_refused_total{{{labels}}}")),
        Some(&Value::Counter(1)),
        "{metrics:?}"
    );
    assert_eq!(
        metrics.get(&format!("tenacious_gave_up_total{{{labels}}}")),
        Some(&Value::Counter(1))
    );
    assert!(
        !metrics.contains_key("tenacious_attempts_total{fn=refused}"),
        "no attempt: {metrics:?}"
    );
    let row = REFUSED.snapshot();
    assert_eq!((row.calls(), row.refused(), row.attempts()), (3, 1, 2));
}
