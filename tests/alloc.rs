//! `#[retry]` allocates nothing: a counting global allocator sees no heap
//! allocation for a call that succeeds at once, nor for one that retries
//! twice, sync or async (after a first call has warmed up the thread: the
//! jitter RNG and tokio's timer allocate once, on first use). That holds
//! too for calls that read their attempt context, draw an idempotency key,
//! nest another retried call, and run under a timeout, a deadline and a
//! retry budget, and for calls under a concurrency limit with a permit
//! free.
//!
//! Statistics are on, as by default: every call here also counts itself in
//! its fn's record, and a fn's first call after the warm-up, which joins its
//! record to the registry and claims a slot for its first error's variant,
//! allocates nothing either.
//!
//! One test in its own binary, counting on its own thread only, so the test
//! harness and other tests add no noise.
use std::cell::Cell;
use std::time::Duration;

use tenacious::{Attempt, Classify, Concurrency, Elapsed, ErrorClass, RetryBudget, retry};
use tenacious_alloc_counter::{Counting, allocations_awaiting, allocations_in as allocations};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Debug, PartialEq)]
enum Flaky {
    Timeout,
}

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<Elapsed> for Flaky {
    fn from(_: Elapsed) -> Self {
        Flaky::Timeout
    }
}

thread_local! {
    static FAILURES_LEFT: Cell<u32> = const { Cell::new(0) };
    /// The idempotency key the last guarded attempt saw.
    static KEY: Cell<u128> = const { Cell::new(0) };
}

/// Fails the next `n` attempts.
fn fail_next(n: u32) {
    FAILURES_LEFT.with(|f| f.set(n));
}

fn attempt() -> Result<u32, Flaky> {
    FAILURES_LEFT.with(|left| match left.get() {
        0 => Ok(7),
        n => {
            left.set(n - 1);
            Err(Flaky::Timeout)
        }
    })
}

#[retry(max = 3, base = "1us", cap = "2us", jitter = "full")]
fn sync_call(key: &str) -> Result<u32, Flaky> {
    let _ = key.len();
    attempt()
}

#[retry(max = 3, base = "10ms", jitter = "decorrelated")]
async fn async_call(key: &str) -> Result<u32, Flaky> {
    let _ = key.len();
    attempt()
}

static BUDGET: RetryBudget = RetryBudget::new();

#[retry(max = 1)]
fn sync_inner() -> Result<u128, Flaky> {
    Ok(Attempt::current().map_or(0, |a| a.idempotency_key().as_u128()))
}

#[retry(max = 3, base = "1us", cap = "2us", deadline = "10s", budget = BUDGET)]
fn sync_guarded() -> Result<u32, Flaky> {
    let key = Attempt::current().map_or(0, |a| a.idempotency_key().as_u128());
    KEY.with(|k| k.set(key));
    sync_inner()?;
    attempt()
}

#[retry(max = 1)]
async fn async_inner() -> Result<u128, Flaky> {
    Ok(Attempt::current().map_or(0, |a| a.idempotency_key().as_u128()))
}

#[retry(max = 3, base = "10ms", timeout = "1s", deadline = "10s", budget = BUDGET)]
async fn async_guarded() -> Result<u32, Flaky> {
    let key = Attempt::current().map_or(0, |a| a.idempotency_key().as_u128());
    KEY.with(|k| k.set(key));
    async_inner().await?;
    attempt()
}

/// An error type that can say a guard refused the call, as a fn naming a
/// concurrency limit needs.
#[derive(Debug, Classify)]
enum Limited {
    #[classify(transient)]
    Timeout,
    #[classify(refused)]
    Refused(tenacious::Refused),
}

static LIMIT: Concurrency = Concurrency::new(4);

#[retry(max = 3, base = "1us", cap = "2us", concurrency = LIMIT, budget = BUDGET)]
fn sync_limited() -> Result<u32, Limited> {
    attempt().map_err(|_| Limited::Timeout)
}

#[retry(max = 3, base = "10ms", concurrency = LIMIT)]
async fn async_limited() -> Result<u32, Limited> {
    attempt().map_err(|_| Limited::Timeout)
}

#[test]
fn calls_under_a_concurrency_limit_with_a_permit_free_do_not_allocate() {
    fail_next(2);
    assert!(sync_limited().is_ok());
    let (result, happy) = allocations(sync_limited);
    assert!(matches!(result, Ok(7)));
    assert_eq!(
        happy, 0,
        "a limited sync call that succeeds at once allocated"
    );
    fail_next(2);
    let (result, retried) = allocations(sync_limited);
    assert!(matches!(result, Ok(7)));
    assert_eq!(
        retried, 0,
        "a limited sync call that retried twice allocated"
    );
    assert!(!matches!(sync_limited(), Err(Limited::Refused(_))));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        fail_next(2);
        assert!(async_limited().await.is_ok());
        let (result, happy) = allocations_awaiting(async_limited()).await;
        assert!(matches!(result, Ok(7)));
        assert_eq!(
            happy, 0,
            "a limited async call that succeeds at once allocated"
        );
        fail_next(2);
        let (result, retried) = allocations_awaiting(async_limited()).await;
        assert!(matches!(result, Ok(7)));
        assert_eq!(
            retried, 0,
            "a limited async call that retried twice allocated"
        );
    });
    assert_eq!(LIMIT.in_flight(), 0);
}

#[test]
fn guarded_calls_do_not_allocate() {
    // Warm up: the jitter RNG (which also draws the keys).
    fail_next(2);
    assert_eq!(sync_guarded(), Ok(7));

    let (result, happy) = allocations(sync_guarded);
    assert_eq!(result, Ok(7));
    assert_ne!(KEY.with(Cell::get), 0, "the attempt saw no key");
    assert_eq!(
        happy, 0,
        "a guarded sync call that succeeds at once allocated"
    );

    fail_next(2);
    let (result, retried) = allocations(sync_guarded);
    assert_eq!(result, Ok(7));
    assert_eq!(FAILURES_LEFT.with(Cell::get), 0, "the call did not retry");
    assert_eq!(
        retried, 0,
        "a guarded sync call that retried twice allocated"
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        fail_next(2);
        assert_eq!(async_guarded().await, Ok(7));

        let (result, happy) = allocations_awaiting(async_guarded()).await;
        assert_eq!(result, Ok(7));
        assert_eq!(
            happy, 0,
            "a guarded async call that succeeds at once allocated"
        );

        fail_next(2);
        let (result, retried) = allocations_awaiting(async_guarded()).await;
        assert_eq!(result, Ok(7));
        assert_eq!(FAILURES_LEFT.with(Cell::get), 0, "the call did not retry");
        assert_eq!(
            retried, 0,
            "a guarded async call that retried twice allocated"
        );
    });
}

#[retry(max = 3, base = "1us", cap = "2us")]
fn first_use_sync() -> Result<u32, Flaky> {
    attempt()
}

#[retry(max = 3, base = "10ms")]
async fn first_use_async() -> Result<u32, Flaky> {
    attempt()
}

#[retry(max = 3, base = "1us", cap = "2us")]
fn first_use_failing() -> Result<u32, Flaky> {
    attempt()
}

#[test]
fn a_fns_first_call_registers_its_record_without_allocating() {
    // Warm up the jitter RNG with another fn.
    fail_next(2);
    assert_eq!(sync_call("k"), Ok(7));

    let (result, first) = allocations(first_use_sync);
    assert_eq!(result, Ok(7));
    assert_eq!(first, 0, "a sync fn's first call allocated");

    fail_next(2);
    let (result, first) = allocations(first_use_failing);
    assert_eq!(result, Ok(7));
    assert_eq!(FAILURES_LEFT.with(Cell::get), 0, "the call did not retry");
    assert_eq!(first, 0, "a first call that retried twice allocated");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        // Warm up tokio's timer on this runtime.
        fail_next(2);
        assert_eq!(async_call("k").await, Ok(7));

        fail_next(1);
        let (result, first) = allocations_awaiting(first_use_async()).await;
        assert_eq!(result, Ok(7));
        assert_eq!(first, 0, "an async fn's first call allocated");
    });

    // The records were counted and registered.
    let snapshot = tenacious::stats::snapshot();
    let calls = |name: &str| snapshot.get(name).map(|s| (s.calls(), s.attempts()));
    assert_eq!(calls("alloc::first_use_sync"), Some((1, 1)));
    assert_eq!(calls("alloc::first_use_failing"), Some((1, 3)));
    assert_eq!(calls("alloc::first_use_async"), Some((1, 2)));
}

#[test]
fn retried_calls_do_not_allocate() {
    // Warm up: the first retrying call seeds this thread's jitter RNG.
    fail_next(2);
    assert_eq!(sync_call("k"), Ok(7));

    let (result, happy) = allocations(|| sync_call("k"));
    assert_eq!(result, Ok(7));
    assert_eq!(happy, 0, "a sync call that succeeds at once allocated");

    fail_next(2);
    let (result, retried) = allocations(|| sync_call("k"));
    assert_eq!(result, Ok(7));
    assert_eq!(FAILURES_LEFT.with(Cell::get), 0, "the call did not retry");
    assert_eq!(retried, 0, "a sync call that retried twice allocated");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        // Warm up tokio's timer on this runtime.
        fail_next(2);
        assert_eq!(async_call("k").await, Ok(7));

        let (result, happy) = allocations_awaiting(async_call("k")).await;
        assert_eq!(result, Ok(7));
        assert_eq!(happy, 0, "an async call that succeeds at once allocated");

        fail_next(2);
        let started = tokio::time::Instant::now();
        let (result, retried) = allocations_awaiting(async_call("k")).await;
        assert_eq!(result, Ok(7));
        assert!(
            started.elapsed() >= Duration::from_millis(20),
            "the call did not back off"
        );
        assert_eq!(retried, 0, "an async call that retried twice allocated");
    });

    // The counter counts: a `Vec` of one byte is one allocation.
    let (_, one) = allocations(|| std::hint::black_box(vec![1u8]));
    assert_eq!(one, 1);
}
