//! Per-fn statistics through `#[retry]`: what each record counts, how the
//! four figures come out of it, how records are named and turned off, and
//! that `Policy` loops count exactly as the macro does. Async tests run on
//! tokio's paused clock.
//!
//! Tests in this binary run in parallel and share the global registry, so
//! each test reads the record of fns only it calls.
use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Duration;

use tenacious::stats::{self, CallStats, ErrorCount, FnStats};
use tenacious::{Classify, ErrorClass, Failure, Jitter, Policy, RetryBudget, StopReason, retry};

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(rate_limited)]
    TooManyRequests(#[classify(retry_after)] Option<Duration>),
    #[classify(invalid)]
    BadArguments,
    #[classify(fatal)]
    Unauthorized,
}

use ToolError::{BadArguments, Timeout, TooManyRequests, Unauthorized};

/// The results of the next attempts, in order; then `Ok(0)`.
#[derive(Default)]
struct Script(RefCell<VecDeque<Result<u32, ToolError>>>);

impl Script {
    fn new(steps: impl IntoIterator<Item = Result<u32, ToolError>>) -> Self {
        Self(RefCell::new(steps.into_iter().collect()))
    }

    fn then(&self, steps: impl IntoIterator<Item = Result<u32, ToolError>>) {
        self.0.borrow_mut().extend(steps);
    }

    fn next(&self) -> Result<u32, ToolError> {
        self.0.borrow_mut().pop_front().unwrap_or(Ok(0))
    }

    fn is_done(&self) -> bool {
        self.0.borrow().is_empty()
    }
}

/// The row of the fn `name` in this module.
fn row(name: &str) -> Option<FnStats> {
    stats::snapshot()
        .get(&format!("{}::{name}", module_path!()))
        .cloned()
}

/// The error distribution as (class, variant, count) triples.
fn errors(stats: &FnStats) -> Errors {
    stats
        .errors()
        .iter()
        .map(|e: &ErrorCount| (e.class, e.variant, e.count))
        .collect()
}

/// The error distribution: (class, variant, count).
type Errors = Vec<(ErrorClass, &'static str, u64)>;

/// Calls, attempts, retried, recovered, give-ups by reason, errors.
type Counts = (u64, u64, u64, u64, Vec<u64>, Errors);

/// Everything but the name.
fn counts(stats: &FnStats) -> Counts {
    let gave_up = StopReason::ALL.iter().map(|r| stats.gave_up(*r)).collect();
    (
        stats.calls(),
        stats.attempts(),
        stats.retried(),
        stats.recovered(),
        gave_up,
        errors(stats),
    )
}

/// Five calls: at once; recovered after a timeout; exhausted by three
/// timeouts; an invalid error, not retried; a rate limit retried, then a
/// fatal error.
const FIVE_CALLS: [Result<u32, ToolError>; 9] = [
    Ok(1),
    Err(Timeout),
    Ok(2),
    Err(Timeout),
    Err(Timeout),
    Err(Timeout),
    Err(BadArguments),
    Err(TooManyRequests(None)),
    Err(Unauthorized),
];

#[retry(max = 3, base = "10ms")]
async fn counted(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[tokio::test(start_paused = true)]
async fn a_fn_counts_its_calls_attempts_outcomes_and_errors() {
    assert!(row("counted").is_none(), "a fn that never ran has no row");
    let script = Script::new(FIVE_CALLS);
    let results = [
        counted(&script).await,
        counted(&script).await,
        counted(&script).await,
        counted(&script).await,
        counted(&script).await,
    ];
    assert!(script.is_done());
    assert_eq!(
        results,
        [
            Ok(1),
            Ok(2),
            Err(Timeout),
            Err(BadArguments),
            Err(Unauthorized)
        ]
    );

    let stats = row("counted").unwrap();
    assert_eq!(stats.name(), "stats::counted");
    assert_eq!(
        (stats.calls(), stats.attempts(), stats.retries()),
        (5, 9, 4)
    );
    assert_eq!((stats.retried(), stats.recovered()), (3, 1));
    assert_eq!(stats.gave_up(StopReason::Exhausted), 1);
    assert_eq!(stats.gave_up(StopReason::NotRetryable), 2);
    assert_eq!(stats.gave_up_total(), 3);

    // The four figures.
    assert_eq!(stats.retry_rate(), Some(3.0 / 5.0));
    assert_eq!(stats.retry_success_rate(), Some(1.0 / 3.0));
    assert_eq!(stats.mean_attempts(), Some(9.0 / 5.0));
    assert_eq!(
        errors(&stats),
        [
            (ErrorClass::Transient, "Timeout", 4),
            (ErrorClass::RateLimited, "TooManyRequests", 1),
            (ErrorClass::Invalid, "BadArguments", 1),
            (ErrorClass::Fatal, "Unauthorized", 1),
        ]
    );
    assert_eq!(stats.error_total(), 7);
    assert_eq!(stats.class_share(ErrorClass::Transient), Some(4.0 / 7.0));
    assert_eq!(stats.error_share(stats.errors()[0].count), Some(4.0 / 7.0));

    // And the table shows the row.
    let table = stats::snapshot().to_string();
    let line = table
        .lines()
        .find(|line| line.starts_with("stats::counted "))
        .unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        cells[..8],
        [
            "stats::counted",
            "5",
            "9",
            "3",
            "1",
            "60.0%",
            "33.3%",
            "1.80"
        ]
    );
    assert!(line.ends_with("3 (exhausted 1, not retryable 2)"), "{line}");
}

static BY_HAND: CallStats = CallStats::new("by hand");

const BY_HAND_POLICY: Policy = Policy::new()
    .max(3)
    .base(Duration::from_millis(10))
    .stats(&BY_HAND);

#[retry(max = 3, base = "10ms")]
async fn by_macro(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[tokio::test(start_paused = true)]
async fn policy_loops_count_exactly_as_the_macro() {
    let script = Script::new(FIVE_CALLS);
    for _ in 0..5 {
        let _ = by_macro(&script).await;
    }
    script.then(FIVE_CALLS);
    for _ in 0..5 {
        let _ = BY_HAND_POLICY
            .retry(|| std::future::ready(script.next()))
            .await;
    }
    assert!(script.is_done());
    let by_hand = BY_HAND.snapshot();
    assert_eq!(by_hand.name(), "by hand");
    assert_eq!(counts(&by_hand), counts(&row("by_macro").unwrap()));
    assert_eq!(by_hand.calls(), 5);
}

#[retry(max = 3, base = "1us")]
fn blocking(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[test]
fn blocking_loops_count_exactly_as_async_ones() {
    static BLOCKING: CallStats = CallStats::new("blocking by hand");
    let script = Script::new(FIVE_CALLS);
    for _ in 0..5 {
        let _ = blocking(&script);
    }
    script.then(FIVE_CALLS);
    let policy = Policy::new()
        .base(Duration::from_micros(1))
        .stats(&BLOCKING);
    for _ in 0..5 {
        let _ = policy.retry_blocking(|| script.next());
    }
    let blocking = row("blocking").unwrap();
    assert_eq!(counts(&blocking), counts(&BLOCKING.snapshot()));
    assert_eq!((blocking.calls(), blocking.attempts()), (5, 9));
}

#[retry(stats = false, base = "1us")]
fn unobserved(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[retry(stats = "search tool", base = "1us")]
fn renamed(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[test]
fn stats_false_leaves_a_fn_out_and_a_name_renames_it() {
    let script = Script::new([Err(Timeout), Ok(1), Err(Timeout), Ok(1)]);
    assert_eq!(unobserved(&script), Ok(1));
    assert_eq!(renamed(&script), Ok(1));
    let snapshot = stats::snapshot();
    assert!(row("unobserved").is_none());
    assert!(
        snapshot
            .fns()
            .iter()
            .all(|f| !f.name().contains("unobserved"))
    );
    assert!(row("renamed").is_none());
    let renamed = snapshot.get("search tool").unwrap();
    assert_eq!((renamed.calls(), renamed.recovered()), (1, 1));
}

/// A record shared by every fn of one policy, as `Policy::stats` gives it.
static SHARED: CallStats = CallStats::new("stats: the policy's record");
const COUNTED: Policy = Policy::new().base(Duration::from_micros(1)).stats(&SHARED);
const UNCOUNTED: Policy = Policy::new().base(Duration::from_micros(1));

#[retry(policy = COUNTED, stats = false)]
fn in_the_policys_record(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[retry(policy = COUNTED)]
fn in_a_record_of_its_own(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[retry(policy = UNCOUNTED, stats = false)]
fn in_no_record(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[test]
fn stats_false_beside_a_policy_counts_in_the_policys_record_if_it_has_one() {
    let script = Script::new([
        Err(Timeout),
        Ok(1),
        Err(Timeout),
        Ok(1),
        Err(Timeout),
        Ok(1),
    ]);
    assert_eq!(in_the_policys_record(&script), Ok(1));
    assert_eq!(in_a_record_of_its_own(&script), Ok(1));
    assert_eq!(in_no_record(&script), Ok(1));
    // `stats = false`: no record of the fn's own; its calls count in the
    // record the policy names, and only there.
    assert!(row("in_the_policys_record").is_none());
    let shared = SHARED.snapshot();
    assert_eq!(
        (shared.calls(), shared.attempts(), shared.recovered()),
        (1, 2, 1)
    );
    // Without `stats = false` the fn's own record replaces the policy's.
    let own = row("in_a_record_of_its_own").unwrap();
    assert_eq!((own.calls(), own.attempts()), (1, 2));
    // A policy without a record and `stats = false`: counted nowhere.
    assert!(row("in_no_record").is_none());
    assert!(
        stats::snapshot()
            .fns()
            .iter()
            .all(|f| !f.name().contains("in_no_record"))
    );
}

#[retry(base = "1us")]
fn generic<T: From<u32>>(script: &Script) -> Result<T, ToolError> {
    script.next().map(T::from)
}

#[test]
fn a_generic_fns_instantiations_share_one_record() {
    let script = Script::new([Ok(1), Err(Timeout), Ok(2)]);
    assert_eq!(generic::<u64>(&script), Ok(1));
    assert_eq!(generic::<f64>(&script), Ok(2.0));
    let stats = row("generic").unwrap();
    assert_eq!(
        (stats.calls(), stats.attempts(), stats.recovered()),
        (2, 3, 1)
    );
}

struct Client {
    script: Script,
}

impl Client {
    #[retry(base = "10ms")]
    async fn fetch(&mut self) -> Result<u32, ToolError> {
        self.script.next()
    }

    #[retry(base = "10ms", stats = "Client::send")]
    async fn send(&self) -> Result<u32, ToolError> {
        self.script.next()
    }
}

#[tokio::test(start_paused = true)]
async fn methods_are_named_after_their_module_and_fn() {
    let mut client = Client {
        script: Script::new([Err(Timeout), Ok(1), Ok(2)]),
    };
    assert_eq!(client.fetch().await, Ok(1));
    assert_eq!(client.send().await, Ok(2));
    assert_eq!(row("fetch").unwrap().attempts(), 2);
    assert_eq!(stats::snapshot().get("Client::send").unwrap().calls(), 1);
}

#[retry(max = 3, base = "10ms")]
async fn inner(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[retry(max = 3, base = "10ms")]
async fn outer(script: &Script) -> Result<u32, ToolError> {
    inner(script).await
}

#[tokio::test(start_paused = true)]
async fn a_nested_call_gives_up_to_the_outer_one_and_both_count_it() {
    let script = Script::new([Err(Timeout), Err(Timeout), Ok(3)]);
    assert_eq!(outer(&script).await, Ok(3));
    let inner = row("inner").unwrap();
    assert_eq!((inner.calls(), inner.attempts()), (3, 3));
    assert_eq!(inner.gave_up(StopReason::Nested), 2);
    assert_eq!(inner.errors_of(ErrorClass::Transient), 2);
    let outer = row("outer").unwrap();
    assert_eq!(
        (outer.calls(), outer.attempts(), outer.recovered()),
        (1, 3, 1)
    );
    assert_eq!(outer.errors_of(ErrorClass::Transient), 2);
}

static EMPTY: RetryBudget = RetryBudget::with_capacity(0);

#[retry(max = 5, base = "1s", jitter = "none", deadline = "2500ms")]
async fn deadlined(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[retry(max = 5, budget = EMPTY)]
async fn unfunded(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[retry(max = 5, max_retry_after = "1m")]
async fn impatient(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[tokio::test(start_paused = true)]
async fn every_stop_reason_is_counted_as_a_give_up() {
    // Waits 1 s, then 2 s would end past 2.5 s.
    let script = Script::new([Err(Timeout), Err(Timeout)]);
    assert_eq!(deadlined(&script).await, Err(Timeout));
    let stats = row("deadlined").unwrap();
    assert_eq!(
        (stats.attempts(), stats.gave_up(StopReason::Deadline)),
        (2, 1)
    );

    let script = Script::new([Err(Timeout)]);
    assert_eq!(unfunded(&script).await, Err(Timeout));
    let stats = row("unfunded").unwrap();
    assert_eq!(
        (stats.attempts(), stats.gave_up(StopReason::Budget)),
        (1, 1)
    );

    let hint = TooManyRequests(Some(Duration::from_secs(3600)));
    let script = Script::new([Err(hint)]);
    assert_eq!(impatient(&script).await, Err(hint));
    let stats = row("impatient").unwrap();
    assert_eq!(stats.gave_up(StopReason::HintTooLong), 1);
    assert_eq!(stats.gave_up_total(), 1);
}

#[retry(max = 3, base = "10ms")]
async fn with_failure(script: &Script) -> Result<u32, Failure<ToolError>> {
    script.next()
}

#[tokio::test(start_paused = true)]
async fn a_failure_fn_is_counted_like_any_other() {
    let script = Script::new([
        Err(Timeout),
        Err(Timeout),
        Err(Timeout),
        Err(Timeout),
        Ok(1),
    ]);
    let failure = with_failure(&script).await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(with_failure(&script).await.unwrap(), 1);
    let stats = row("with_failure").unwrap();
    assert_eq!(
        (stats.calls(), stats.attempts(), stats.recovered()),
        (2, 5, 1)
    );
    assert_eq!(stats.gave_up(StopReason::Exhausted), 1);
}

#[retry(max = 3, base = "10s")]
async fn abandoned(script: &Script) -> Result<u32, ToolError> {
    script.next()
}

#[tokio::test(start_paused = true)]
async fn a_call_dropped_mid_way_is_not_a_call_but_its_errors_count() {
    let script = Script::new([Err(Timeout)]);
    // Dropped during its first backoff.
    let dropped = tokio::time::timeout(Duration::from_millis(1), abandoned(&script)).await;
    assert!(dropped.is_err());
    let stats = row("abandoned").unwrap();
    assert_eq!((stats.calls(), stats.attempts()), (0, 0));
    assert_eq!(errors(&stats), [(ErrorClass::Transient, "Timeout", 1)]);
    assert_eq!(stats.retry_rate(), None);
    assert_eq!(stats.mean_attempts(), None);
}

#[retry(max = 2, base = "1ns", jitter = "none")]
fn contended(fail: bool, tried: &RefCell<bool>) -> Result<u32, ToolError> {
    if fail && !tried.replace(true) {
        return Err(Timeout);
    }
    Ok(1)
}

#[test]
fn concurrent_calls_are_all_counted() {
    const THREADS: u64 = 8;
    const CALLS: u64 = 500;
    let start = std::sync::Barrier::new(8);
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let start = &start;
            scope.spawn(move || {
                start.wait();
                for call in 0..CALLS {
                    let tried = RefCell::new(false);
                    // Every other call fails once, then succeeds.
                    assert_eq!(contended((thread + call) % 2 == 0, &tried), Ok(1));
                }
            });
        }
    });
    let stats = row("contended").unwrap();
    let calls = THREADS * CALLS;
    assert_eq!(
        (stats.calls(), stats.attempts()),
        (calls, calls + calls / 2)
    );
    assert_eq!((stats.retried(), stats.recovered()), (calls / 2, calls / 2));
    assert_eq!(stats.errors_of(ErrorClass::Transient), calls / 2);
}

/// An error with as many variants as asked for.
#[derive(Debug)]
struct Numbered(usize);

static VARIANTS: [&str; 20] = [
    "E0", "E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9", "E10", "E11", "E12", "E13", "E14",
    "E15", "E16", "E17", "E18", "E19",
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
fn variants_beyond_the_records_slots_are_counted_as_other() {
    for n in 0..VARIANTS.len() {
        assert!(many_variants(n).is_err());
    }
    let stats = row("many_variants").unwrap();
    assert_eq!(stats.errors().len(), 17);
    assert_eq!(stats.errors_of(ErrorClass::Invalid), 20);
    let other = stats.errors().iter().find(|e| e.variant == "(other)");
    assert_eq!(other.map(|e| e.count), Some(4));
    assert_eq!(stats.gave_up(StopReason::NotRetryable), 20);
}

#[test]
fn a_records_reset_zeroes_its_counts() {
    static RESET: CallStats = CallStats::new("reset me");
    let policy = Policy::new()
        .base(Duration::ZERO)
        .jitter(Jitter::None)
        .stats(&RESET);
    let script = Script::new([Err(Timeout), Ok(1)]);
    assert_eq!(policy.retry_blocking(|| script.next()), Ok(1));
    assert_eq!(RESET.snapshot().attempts(), 2);
    RESET.reset();
    let stats = RESET.snapshot();
    assert_eq!(
        counts(&stats),
        (0, 0, 0, 0, vec![0; StopReason::ALL.len()], vec![])
    );
    // Still registered: it keeps its row.
    assert!(stats::snapshot().get("reset me").is_some());
}
