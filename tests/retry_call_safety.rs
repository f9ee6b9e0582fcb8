//! Call-layer safety, through `#[retry]`: per-attempt timeouts, deadlines,
//! the attempt context and its idempotency key, nested calls, retry budgets
//! and `Failure<E>`. Async tests run on tokio's paused clock and assert
//! attempt counts, recorded contexts and paused-clock time; nothing sleeps
//! for real.
use std::cell::RefCell;
use std::time::Duration;

use tenacious::{
    Attempt, Classify, Elapsed, ErrorClass, Failure, IdempotencyKey, Jitter, Policy, RetryBudget,
    StopReason, retry, seed_jitter,
};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout(Elapsed),
    #[classify(transient)]
    Reset,
    #[classify(rate_limited)]
    Busy(#[classify(retry_after)] Duration),
    #[classify(invalid)]
    BadRequest,
}

impl From<Elapsed> for ToolError {
    fn from(elapsed: Elapsed) -> Self {
        ToolError::Timeout(elapsed)
    }
}

const MS: Duration = Duration::from_millis(1);
const SEC: Duration = Duration::from_secs(1);

/// What the next attempt does.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Never answers (an hour on the paused clock).
    Stall,
    /// Fails at once.
    Fail(ToolError),
    /// Takes this long, then fails with `Reset`.
    SlowFail(Duration),
}

thread_local! {
    static SCRIPT: RefCell<Vec<Step>> = const { RefCell::new(Vec::new()) };
    /// The context each attempt saw, in order.
    static SEEN: RefCell<Vec<Attempt>> = const { RefCell::new(Vec::new()) };
    /// What `Attempt::elapsed` said as each attempt started.
    static ELAPSED: RefCell<Vec<Duration>> = const { RefCell::new(Vec::new()) };
}

/// Resets the recorder and scripts the next attempts; after the script,
/// attempts succeed.
fn script(steps: &[Step]) {
    SEEN.with_borrow_mut(Vec::clear);
    ELAPSED.with_borrow_mut(Vec::clear);
    SCRIPT.with_borrow_mut(|s| {
        s.clear();
        s.extend(steps.iter().rev().copied());
    });
}

fn seen() -> Vec<Attempt> {
    SEEN.with_borrow(Clone::clone)
}

fn attempts() -> usize {
    SEEN.with_borrow(Vec::len)
}

/// One attempt: records its context, then does what the script says.
async fn attempt() -> Result<u32, ToolError> {
    let context = Attempt::current().expect("an attempt has a context");
    SEEN.with_borrow_mut(|s| s.push(context));
    ELAPSED.with_borrow_mut(|e| e.push(context.elapsed()));
    match SCRIPT.with_borrow_mut(Vec::pop) {
        None => Ok(context.number()),
        Some(Step::Fail(error)) => Err(error),
        Some(Step::Stall) => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(context.number())
        }
        Some(Step::SlowFail(run)) => {
            tokio::time::sleep(run).await;
            Err(ToolError::Reset)
        }
    }
}

fn attempt_blocking() -> Result<u32, ToolError> {
    let context = Attempt::current().expect("an attempt has a context");
    SEEN.with_borrow_mut(|s| s.push(context));
    match SCRIPT.with_borrow_mut(Vec::pop) {
        None => Ok(context.number()),
        Some(Step::Fail(error)) => Err(error),
        Some(step) => panic!("a sync attempt cannot {step:?}"),
    }
}

// ---------------------------------------------------------------- timeout

#[retry(max = 3, base = "100ms", jitter = "none", timeout = "1s")]
async fn timed() -> Result<u32, ToolError> {
    attempt().await
}

#[tokio::test(start_paused = true)]
async fn an_attempt_past_its_timeout_is_dropped_and_retried_as_transient() {
    script(&[Step::Stall]);
    let started = Instant::now();
    assert_eq!(timed().await, Ok(2));
    assert_eq!(attempts(), 2);
    // The stalled attempt was cut at 1 s, then the first backoff.
    assert_eq!(started.elapsed(), SEC + 100 * MS);
}

#[tokio::test(start_paused = true)]
async fn a_last_attempt_that_times_out_returns_e_from_elapsed() {
    script(&[Step::Stall; 3]);
    let started = Instant::now();
    assert_eq!(timed().await, Err(ToolError::Timeout(Elapsed::new(SEC))));
    assert_eq!(attempts(), 3);
    assert_eq!(started.elapsed(), 3 * SEC + 300 * MS);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_leaves_quick_attempts_alone() {
    script(&[Step::SlowFail(999 * MS)]);
    let started = Instant::now();
    assert_eq!(timed().await, Ok(2));
    assert_eq!(started.elapsed(), 999 * MS + 100 * MS);
}

#[tokio::test(start_paused = true)]
async fn a_key_drawn_by_an_attempt_that_timed_out_is_the_next_attempts_key() {
    // The first attempt reads its key (and, in real life, sends it), then
    // stalls past the timeout: the retry must send the same key.
    script(&[Step::Stall, Step::Stall]);
    assert_eq!(timed().await, Ok(3));
    let keys: Vec<IdempotencyKey> = seen().iter().map(Attempt::idempotency_key).collect();
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
}

// ---------------------------------------------------------------- deadline

#[retry(max = 10, base = "100ms", jitter = "none", deadline = "1s")]
async fn within_a_second() -> Result<u32, Failure<ToolError>> {
    attempt().await
}

#[tokio::test(start_paused = true)]
async fn no_sleep_starts_that_would_end_past_the_deadline() {
    script(&[Step::Fail(ToolError::Reset); 10]);
    let started = Instant::now();
    let failure = within_a_second().await.unwrap_err();
    // Sleeps of 100, 200 and 400 ms end at 700 ms; the next, 800 ms, would
    // end past 1 s, so it never starts.
    assert_eq!(attempts(), 4);
    assert_eq!(started.elapsed(), 700 * MS);
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert_eq!(failure.into_inner(), ToolError::Reset);
}

#[tokio::test(start_paused = true)]
async fn the_attempts_own_run_time_counts_against_the_deadline() {
    script(&[Step::SlowFail(850 * MS), Step::Fail(ToolError::Reset)]);
    let started = Instant::now();
    let failure = within_a_second().await.unwrap_err();
    // 850 ms + 100 ms backoff = 950 ms, before the deadline; then 950 ms +
    // 200 ms would pass it.
    assert_eq!(attempts(), 2);
    assert_eq!(started.elapsed(), 950 * MS);
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
}

#[tokio::test(start_paused = true)]
async fn a_server_hint_past_the_deadline_is_not_waited() {
    script(&[Step::Fail(ToolError::Busy(2 * SEC))]);
    let started = Instant::now();
    let failure = within_a_second().await.unwrap_err();
    assert_eq!(attempts(), 1);
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert_eq!(failure.into_inner(), ToolError::Busy(2 * SEC));
}

#[retry(
    max = 5,
    base = "100ms",
    jitter = "none",
    timeout = "1s",
    deadline = "1500ms"
)]
async fn timed_within_a_deadline() -> Result<u32, ToolError> {
    attempt().await
}

#[tokio::test(start_paused = true)]
async fn the_last_attempts_timeout_is_cut_to_what_remains() {
    script(&[Step::Stall; 5]);
    let started = Instant::now();
    // Attempt 1 times out at 1 s; 100 ms of backoff; attempt 2 gets the
    // 400 ms left, not 1 s; the next backoff would pass the deadline.
    let result = timed_within_a_deadline().await;
    assert_eq!(result, Err(ToolError::Timeout(Elapsed::new(400 * MS))));
    assert_eq!(attempts(), 2);
    assert_eq!(started.elapsed(), 1500 * MS);
}

#[retry(max = 5, base = "1ms", jitter = "none", deadline = "1ns")]
fn sync_with_a_deadline() -> Result<u32, Failure<ToolError>> {
    attempt_blocking()
}

#[test]
fn a_sync_fn_stops_before_a_sleep_past_its_deadline() {
    script(&[Step::Fail(ToolError::Reset); 5]);
    let failure = sync_with_a_deadline().unwrap_err();
    assert_eq!(attempts(), 1);
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
}

// ---------------------------------------------------------------- context

#[retry(max = 3, base = "100ms", jitter = "none")]
async fn plain() -> Result<u32, ToolError> {
    attempt().await
}

#[retry(max = 3, base = "100ms", jitter = "none", deadline = "10s")]
async fn with_a_deadline() -> Result<u32, ToolError> {
    attempt().await
}

#[tokio::test(start_paused = true)]
async fn each_attempt_sees_its_number_the_max_and_one_key_per_call() {
    assert!(Attempt::current().is_none());
    script(&[Step::Fail(ToolError::Reset), Step::Fail(ToolError::Reset)]);
    assert_eq!(plain().await, Ok(3));
    let first = seen();
    let numbers: Vec<(u32, u32)> = first.iter().map(|a| (a.number(), a.max())).collect();
    assert_eq!(numbers, [(1, 3), (2, 3), (3, 3)]);
    assert!(
        first
            .iter()
            .all(|a| a.idempotency_key() == first[0].idempotency_key())
    );
    assert!(
        Attempt::current().is_none(),
        "the context ends with the call"
    );

    script(&[]);
    assert_eq!(plain().await, Ok(1));
    assert_ne!(seen()[0].idempotency_key(), first[0].idempotency_key());
}

#[tokio::test(start_paused = true)]
async fn elapsed_counts_from_the_first_attempt_with_a_deadline() {
    script(&[Step::SlowFail(50 * MS), Step::Fail(ToolError::Reset)]);
    assert_eq!(with_a_deadline().await, Ok(3));
    let elapsed = ELAPSED.with_borrow(Clone::clone);
    // Recorded at the start of each attempt: 0; 50 ms run + 100 ms; + 200 ms.
    assert_eq!(elapsed, [Duration::ZERO, 150 * MS, 350 * MS]);
}

#[tokio::test(start_paused = true)]
async fn without_a_deadline_elapsed_counts_from_the_first_time_the_body_asks() {
    // The loop reads no clock of its own; the body asks at the start of
    // each attempt, so the figures are those of a deadline's clock.
    script(&[Step::SlowFail(50 * MS), Step::Fail(ToolError::Reset)]);
    assert_eq!(plain().await, Ok(3));
    let elapsed = ELAPSED.with_borrow(Clone::clone);
    assert_eq!(elapsed, [Duration::ZERO, 150 * MS, 350 * MS]);
}

#[retry(max = 2, base = "1us")]
fn sync_plain() -> Result<u32, ToolError> {
    attempt_blocking()
}

#[test]
fn a_sync_fn_has_the_same_context() {
    script(&[Step::Fail(ToolError::Reset)]);
    assert_eq!(sync_plain(), Ok(2));
    let seen = seen();
    assert_eq!(seen.len(), 2);
    assert_eq!((seen[1].number(), seen[1].max()), (2, 2));
    assert_eq!(seen[0].idempotency_key(), seen[1].idempotency_key());
    assert!(Attempt::current().is_none());
}

#[retry(max = 1)]
async fn spawns() -> Result<(bool, bool), ToolError> {
    let inside = Attempt::current().is_some();
    let spawned = tokio::spawn(async { Attempt::current().is_some() })
        .await
        .unwrap();
    Ok((inside, spawned))
}

#[tokio::test(start_paused = true)]
async fn a_task_spawned_by_an_attempt_is_not_inside_it() {
    assert_eq!(spawns().await, Ok((true, false)));
}

#[retry(max = 3, base = "1ms")]
async fn concurrent(tag: u8, out: &RefCell<Vec<(u8, IdempotencyKey)>>) -> Result<(), ToolError> {
    let key = Attempt::current().unwrap().idempotency_key();
    tokio::task::yield_now().await;
    // After other tasks ran on this thread, the context is still this
    // call's.
    assert_eq!(Attempt::current().unwrap().idempotency_key(), key);
    out.borrow_mut().push((tag, key));
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn interleaved_calls_on_one_thread_keep_their_own_context() {
    let out = RefCell::new(Vec::new());
    let (a, b) = tokio::join!(concurrent(1, &out), concurrent(2, &out));
    assert_eq!((a, b), (Ok(()), Ok(())));
    let out = out.into_inner();
    assert_eq!(out.len(), 2);
    assert_ne!(out[0].1, out[1].1);
}

// ---------------------------------------------------------------- nested

thread_local! {
    static INNER_ATTEMPTS: RefCell<Vec<Attempt>> = const { RefCell::new(Vec::new()) };
    static OUTER_ATTEMPTS: RefCell<u32> = const { RefCell::new(0) };
}

fn reset_nesting() {
    INNER_ATTEMPTS.with_borrow_mut(Vec::clear);
    OUTER_ATTEMPTS.with_borrow_mut(|n| *n = 0);
}

#[retry(max = 3, base = "10ms")]
async fn inner() -> Result<(), ToolError> {
    INNER_ATTEMPTS.with_borrow_mut(|a| a.push(Attempt::current().unwrap()));
    Err(ToolError::Reset)
}

#[retry(max = 3, base = "10ms", nested = "retry")]
async fn inner_that_retries() -> Result<(), ToolError> {
    INNER_ATTEMPTS.with_borrow_mut(|a| a.push(Attempt::current().unwrap()));
    Err(ToolError::Reset)
}

#[retry(max = 3, base = "10ms")]
async fn inner_failure() -> Result<(), Failure<ToolError>> {
    Err(ToolError::Reset)
}

#[retry(max = 3, base = "100ms")]
async fn outer() -> Result<(), ToolError> {
    OUTER_ATTEMPTS.with_borrow_mut(|n| *n += 1);
    inner().await
}

#[retry(max = 3, base = "100ms")]
async fn outer_of_one_that_retries() -> Result<(), ToolError> {
    OUTER_ATTEMPTS.with_borrow_mut(|n| *n += 1);
    inner_that_retries().await
}

#[retry(max = 1)]
async fn outer_of_failure() -> Result<StopReason, ToolError> {
    Ok(inner_failure().await.unwrap_err().stop_reason())
}

#[tokio::test(start_paused = true)]
async fn nested_retries_do_not_multiply() {
    reset_nesting();
    assert_eq!(outer().await, Err(ToolError::Reset));
    assert_eq!(OUTER_ATTEMPTS.with_borrow(|n| *n), 3);
    // 3 outer attempts of 1 inner attempt each: 3, not 9.
    let inner = INNER_ATTEMPTS.with_borrow(Clone::clone);
    assert_eq!(inner.len(), 3);
    assert!(inner.iter().all(|a| a.number() == 1 && a.max() == 1));
    assert_eq!(inner_failure_stop_reason().await, StopReason::Nested);
}

async fn inner_failure_stop_reason() -> StopReason {
    outer_of_failure().await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn nested_retry_opts_back_in() {
    reset_nesting();
    assert_eq!(outer_of_one_that_retries().await, Err(ToolError::Reset));
    assert_eq!(INNER_ATTEMPTS.with_borrow(Vec::len), 9);
}

#[tokio::test(start_paused = true)]
async fn outside_any_retried_call_the_inner_fn_retries_as_configured() {
    reset_nesting();
    assert_eq!(inner().await, Err(ToolError::Reset));
    assert_eq!(INNER_ATTEMPTS.with_borrow(Vec::len), 3);
    let failure = inner_failure().await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
}

thread_local! {
    /// Per outer attempt: its key and the keys of the two inner calls it made.
    static KEYS: RefCell<Vec<[IdempotencyKey; 3]>> = const { RefCell::new(Vec::new()) };
}

#[retry(max = 1)]
async fn create(_what: &str) -> Result<IdempotencyKey, ToolError> {
    Ok(Attempt::current().unwrap().idempotency_key())
}

#[retry(max = 3, base = "100ms")]
async fn two_side_effects() -> Result<(), ToolError> {
    let own = Attempt::current().unwrap().idempotency_key();
    let first = create("order").await?;
    let second = create("invoice").await?;
    KEYS.with_borrow_mut(|k| k.push([own, first, second]));
    Err(ToolError::Reset)
}

#[tokio::test(start_paused = true)]
async fn a_nested_call_sends_the_same_key_in_every_outer_attempt() {
    KEYS.with_borrow_mut(Vec::clear);
    assert_eq!(two_side_effects().await, Err(ToolError::Reset));
    let keys = KEYS.with_borrow(Clone::clone);
    assert_eq!(keys.len(), 3);
    // The outer retry repeats the inner calls with the keys they sent the
    // first time, so a server deduplicating by key acts once.
    assert!(keys.iter().all(|k| *k == keys[0]), "{keys:?}");
    let [own, first, second] = keys[0];
    assert_ne!(first, second);
    assert_ne!(own, first);
    assert_ne!(own, second);

    // Another logical call: other keys.
    KEYS.with_borrow_mut(Vec::clear);
    let _ = two_side_effects().await;
    assert_ne!(KEYS.with_borrow(|k| k[0][1]), first);
}

#[retry(max = 3, base = "1us")]
fn sync_inner() -> Result<(), ToolError> {
    INNER_ATTEMPTS.with_borrow_mut(|a| a.push(Attempt::current().unwrap()));
    Err(ToolError::Reset)
}

#[retry(max = 3, base = "1us")]
fn sync_outer() -> Result<(), ToolError> {
    OUTER_ATTEMPTS.with_borrow_mut(|n| *n += 1);
    sync_inner()
}

#[test]
fn sync_nested_retries_do_not_multiply_either() {
    reset_nesting();
    assert_eq!(sync_outer(), Err(ToolError::Reset));
    assert_eq!(OUTER_ATTEMPTS.with_borrow(|n| *n), 3);
    assert_eq!(INNER_ATTEMPTS.with_borrow(Vec::len), 3);
}

#[tokio::test(start_paused = true)]
async fn a_policy_loop_around_a_retried_fn_counts_as_outer() {
    reset_nesting();
    let policy = Policy::new().base(MS);
    let result = policy.retry(inner).await;
    assert_eq!(result, Err(ToolError::Reset));
    assert_eq!(INNER_ATTEMPTS.with_borrow(Vec::len), 3);
}

// ---------------------------------------------------------------- budget

static SMALL_BUDGET: RetryBudget = RetryBudget::with_capacity(10);

#[retry(max = 3, base = "1ms", budget = SMALL_BUDGET)]
async fn budgeted() -> Result<u32, Failure<ToolError>> {
    attempt().await
}

#[tokio::test(start_paused = true)]
async fn an_empty_budget_stops_retrying_at_once_and_successes_refill_it() {
    script(&[Step::Fail(ToolError::Reset); 3]);
    let failure = budgeted().await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(attempts(), 3);
    assert_eq!(SMALL_BUDGET.balance(), 0, "two retries took 5 each");

    script(&[Step::Fail(ToolError::Reset); 3]);
    let failure = budgeted().await.unwrap_err();
    assert_eq!(attempts(), 1, "an empty budget allows no retry");
    assert_eq!(failure.stop_reason(), StopReason::Budget);
    assert_eq!(
        failure.to_string(),
        "gave up after 1 attempt (budget): transient Reset"
    );

    for _ in 0..5 {
        script(&[]);
        assert_eq!(budgeted().await.unwrap(), 1);
    }
    assert_eq!(SMALL_BUDGET.balance(), 5, "each success gave back 1");
    script(&[Step::Fail(ToolError::Reset)]);
    assert_eq!(budgeted().await.unwrap(), 2);
    assert_eq!(
        SMALL_BUDGET.balance(),
        5,
        "a success after a retry gave back what the retry took"
    );
}

static TIMEOUT_BUDGET: RetryBudget = RetryBudget::with_capacity(100);

#[retry(max = 2, base = "1ms", timeout = "1s", budget = TIMEOUT_BUDGET)]
async fn timed_and_budgeted() -> Result<u32, ToolError> {
    attempt().await
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_a_timeout_costs_ten() {
    script(&[Step::Stall, Step::Stall]);
    assert!(timed_and_budgeted().await.is_err());
    assert_eq!(TIMEOUT_BUDGET.balance(), 90);
    script(&[Step::Fail(ToolError::Reset), Step::Fail(ToolError::Reset)]);
    assert!(timed_and_budgeted().await.is_err());
    assert_eq!(TIMEOUT_BUDGET.balance(), 85);
}

// ---------------------------------------------------------------- Failure<E>

#[retry(max = 3, base = "100ms", jitter = "none")]
async fn provenance() -> Result<u32, Failure<ToolError>> {
    attempt().await
}

#[tokio::test(start_paused = true)]
async fn failure_records_every_attempt_and_tells_the_story() {
    script(&[
        Step::Fail(ToolError::Reset),
        Step::Fail(ToolError::Busy(2 * SEC)),
        Step::Fail(ToolError::Reset),
    ]);
    let failure = provenance().await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    let records: Vec<_> = failure
        .attempts()
        .iter()
        .map(|a| (a.number, a.class, a.variant, a.delay))
        .collect();
    assert_eq!(
        records,
        [
            (1, ErrorClass::Transient, "Reset", Some(100 * MS)),
            // The hint, plus the second retry's backoff on top.
            (2, ErrorClass::RateLimited, "Busy", Some(2 * SEC + 200 * MS)),
            (3, ErrorClass::Transient, "Reset", None),
        ]
    );
    assert_eq!(
        failure.to_string(),
        "gave up after 3 attempts (exhausted): transient Reset, waited 100ms; \
         rate_limited Busy, waited 2.2s; transient Reset"
    );
    assert_eq!(failure.waited(), 2 * SEC + 300 * MS);
    assert_eq!(*failure.last(), ToolError::Reset);
    // `Failure` is `Classify` as its last error.
    assert_eq!(failure.classify(), ErrorClass::Transient);
    assert_eq!(failure.into_inner(), ToolError::Reset);
}

#[tokio::test(start_paused = true)]
async fn failure_says_why_it_stopped() {
    script(&[Step::Fail(ToolError::BadRequest)]);
    let failure = provenance().await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
    assert_eq!(failure.attempts().len(), 1);

    script(&[Step::Fail(ToolError::Busy(Duration::from_secs(600)))]);
    let failure = provenance().await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::HintTooLong);

    script(&[]);
    assert_eq!(provenance().await.unwrap(), 1);
}

fn parse(text: &str) -> Result<u32, ToolError> {
    text.parse().map_err(|_| ToolError::BadRequest)
}

fn only_resets(error: &ToolError) -> bool {
    matches!(error, ToolError::Reset)
}

#[retry(max = 2, base = "1ms", when = only_resets)]
async fn question_mark_and_when(text: &str) -> Result<u32, Failure<ToolError>> {
    // The body's error type is `ToolError`: `?` converts into it, and
    // `when` is asked about it.
    let n = parse(text)?;
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn a_failure_fns_body_works_in_its_inner_error_type() {
    assert_eq!(question_mark_and_when("7").await.unwrap(), 7);
    let failure = question_mark_and_when("x").await.unwrap_err();
    assert_eq!(failure.into_inner(), ToolError::BadRequest);
}

// ---------------------------------------------------------------- one engine

#[retry(max = 5, base = "50ms", jitter = "full", deadline = "400ms")]
async fn jittered() -> Result<u32, Failure<ToolError>> {
    attempt().await
}

#[tokio::test(start_paused = true)]
async fn the_macro_and_a_policy_record_the_same_story() {
    const POLICY: Policy = Policy::new()
        .max(5)
        .base(Duration::from_millis(50))
        .jitter(Jitter::Full)
        .deadline(Duration::from_millis(400));
    for seed in 0..20 {
        seed_jitter(seed);
        script(&[Step::Fail(ToolError::Reset); 5]);
        let by_macro = jittered().await.unwrap_err();
        seed_jitter(seed);
        script(&[Step::Fail(ToolError::Reset); 5]);
        let by_policy = POLICY.retry_failure(attempt).await.unwrap_err();
        assert_eq!(by_macro.attempts(), by_policy.attempts(), "seed {seed}");
        assert_eq!(by_macro.stop_reason(), by_policy.stop_reason());
    }
}

// ------------------------------------------------- a wake-up past the deadline

thread_local! {
    static LATE_ATTEMPTS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

#[retry(max = 3, base = "10ms", jitter = "none", deadline = "100ms")]
async fn late_woken() -> Result<(), Failure<ToolError>> {
    LATE_ATTEMPTS.with(|a| a.set(a.get() + 1));
    Err(ToolError::Reset)
}

#[tokio::test(start_paused = true)]
async fn a_retried_fn_woken_past_its_deadline_returns_its_last_error() {
    // The clock jumps past the deadline while the fn waits its 10 ms: the
    // expansion's `resume` gives up there, with no attempt past it.
    let stall = async {
        tokio::task::yield_now().await;
        tokio::time::advance(Duration::from_millis(500)).await;
    };
    let (result, ()) = tokio::join!(late_woken(), stall);
    let failure = result.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert_eq!(*failure.last(), ToolError::Reset);
    assert_eq!(LATE_ATTEMPTS.with(std::cell::Cell::get), 1);
}
