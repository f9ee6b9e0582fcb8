//! The retry machinery does not touch the heap: a counting global allocator
//! sees no allocation on a happy-path call, nor on a call that retries twice
//! (once the thread's jitter RNG and tokio's timer have been used), nor when
//! the attempts read their context and key and run under a timeout, a
//! deadline and a retry budget; nor when the policy counts its calls in a
//! statistics record, from the record's first use on (which joins it to the
//! registry); nor under every provider guard, closed, throttling and
//! waiting.
use std::cell::Cell;
use std::time::Duration;

use tenacious_alloc_counter::{Counting, allocations_awaiting, allocations_in};
use tenacious_runtime::stats::CallStats;
use tenacious_runtime::{Attempt, Classify, Elapsed, ErrorClass, Jitter, Policy, RetryBudget};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Debug, PartialEq)]
struct Blip;

impl Classify for Blip {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<Elapsed> for Blip {
    fn from(_: Elapsed) -> Self {
        Blip
    }
}

/// Fails `failures` times, then succeeds; allocates nothing itself.
fn op(calls: &Cell<u32>, failures: u32) -> Result<u32, Blip> {
    calls.set(calls.get() + 1);
    if calls.get() > failures {
        Ok(calls.get())
    } else {
        Err(Blip)
    }
}

// Without jitter every retry really sleeps (full jitter may draw zero and
// skip the timer); `JITTERED` covers drawing from the RNG.
const POLICY: Policy = Policy::new()
    .max(3)
    .base(Duration::from_micros(1))
    .cap(Duration::from_micros(4))
    .jitter(Jitter::None);

const JITTERED: Policy = POLICY.jitter(Jitter::Full);

static BUDGET: RetryBudget = RetryBudget::new();

const GUARDED: Policy = POLICY
    .timeout(Duration::from_secs(1))
    .deadline(Duration::from_secs(10))
    .budget(&BUDGET);

/// [`op`], after reading the attempt's key.
fn keyed(calls: &Cell<u32>, failures: u32) -> Result<u32, Blip> {
    let key = Attempt::current().map(|a| a.idempotency_key());
    assert!(key.is_some());
    op(calls, failures)
}

#[test]
fn guarded_calls_do_not_allocate() {
    let calls = Cell::new(0);
    assert_eq!(GUARDED.retry_blocking(|| keyed(&calls, 2)), Ok(3));
    let calls = Cell::new(0);
    let (result, allocations) = allocations_in(|| GUARDED.retry_blocking(|| keyed(&calls, 2)));
    assert_eq!((result, allocations), (Ok(3), 0), "blocking, two retries");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let calls = Cell::new(0);
        let warm_up = GUARDED
            .retry_timed(|| std::future::ready(keyed(&calls, 2)))
            .await;
        assert_eq!(warm_up, Ok(3));

        let calls = Cell::new(0);
        let (result, allocations) =
            allocations_awaiting(GUARDED.retry_timed(|| std::future::ready(keyed(&calls, 0))))
                .await;
        assert_eq!((result, allocations), (Ok(1), 0), "timed, happy path");

        let calls = Cell::new(0);
        let (result, allocations) =
            allocations_awaiting(GUARDED.retry_timed(|| std::future::ready(keyed(&calls, 2))))
                .await;
        assert_eq!((result, allocations), (Ok(3), 0), "timed, two retries");
    });
}

static COUNTED: CallStats = CallStats::new("counted");
static COUNTED_ASYNC: CallStats = CallStats::new("counted async");

#[test]
fn counted_calls_do_not_allocate_from_the_records_first_use() {
    // Warm-up: seeds this thread's jitter RNG, with no record.
    let calls = Cell::new(0);
    assert_eq!(POLICY.retry_blocking(|| op(&calls, 2)), Ok(3));

    let counted = POLICY.stats(&COUNTED);
    let calls = Cell::new(0);
    let (result, allocations) = allocations_in(|| counted.retry_blocking(|| op(&calls, 0)));
    assert_eq!((result, allocations), (Ok(1), 0), "first use, happy path");
    let calls = Cell::new(0);
    let (result, allocations) = allocations_in(|| counted.retry_blocking(|| op(&calls, 2)));
    assert_eq!(
        (result, allocations),
        (Ok(3), 0),
        "first errors, two retries"
    );
    let stats = COUNTED.snapshot();
    assert_eq!(
        (stats.calls(), stats.attempts(), stats.recovered()),
        (2, 4, 1)
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let calls = Cell::new(0);
        let warm_up = POLICY.retry(|| std::future::ready(op(&calls, 2))).await;
        assert_eq!(warm_up, Ok(3));

        let counted = POLICY.stats(&COUNTED_ASYNC);
        let calls = Cell::new(0);
        let (result, allocations) =
            allocations_awaiting(counted.retry(|| std::future::ready(op(&calls, 2)))).await;
        assert_eq!((result, allocations), (Ok(3), 0), "first use, two retries");
        let calls = Cell::new(0);
        let (result, allocations) =
            allocations_awaiting(counted.retry(|| std::future::ready(op(&calls, 0)))).await;
        assert_eq!((result, allocations), (Ok(1), 0), "happy path");
    });
    assert_eq!(COUNTED_ASYNC.snapshot().attempts(), 4);
}

#[test]
fn blocking_calls_do_not_allocate() {
    // Warm-up: seeds this thread's jitter RNG.
    let calls = Cell::new(0);
    assert_eq!(POLICY.retry_blocking(|| op(&calls, 2)), Ok(3));

    let calls = Cell::new(0);
    let (result, allocations) = allocations_in(|| POLICY.retry_blocking(|| op(&calls, 0)));
    assert_eq!((result, allocations), (Ok(1), 0), "happy path");

    let calls = Cell::new(0);
    let (result, allocations) = allocations_in(|| POLICY.retry_blocking(|| op(&calls, 2)));
    assert_eq!((result, allocations), (Ok(3), 0), "two retries");

    // The first draw on this thread seeds the RNG; later ones are free.
    let calls = Cell::new(0);
    let _ = JITTERED.retry_blocking(|| op(&calls, 2));
    let calls = Cell::new(0);
    let (result, allocations) = allocations_in(|| JITTERED.retry_blocking(|| op(&calls, 2)));
    assert_eq!((result, allocations), (Ok(3), 0), "two jittered retries");
}

#[test]
fn async_calls_do_not_allocate() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let calls = Cell::new(0);
        let warm_up = POLICY.retry(|| std::future::ready(op(&calls, 2))).await;
        assert_eq!(warm_up, Ok(3));

        let calls = Cell::new(0);
        let (result, allocations) =
            allocations_awaiting(POLICY.retry(|| std::future::ready(op(&calls, 0)))).await;
        assert_eq!((result, allocations), (Ok(1), 0), "happy path");

        let calls = Cell::new(0);
        let (result, allocations) =
            allocations_awaiting(POLICY.retry(|| std::future::ready(op(&calls, 2)))).await;
        assert_eq!((result, allocations), (Ok(3), 0), "two retries");

        let calls = Cell::new(0);
        let _ = JITTERED.retry(|| std::future::ready(op(&calls, 2))).await;
        let calls = Cell::new(0);
        let (result, allocations) =
            allocations_awaiting(JITTERED.retry(|| std::future::ready(op(&calls, 2)))).await;
        assert_eq!((result, allocations), (Ok(3), 0), "two jittered retries");
    });
}

#[test]
fn the_counter_sees_allocations() {
    // Guards the two tests above against a counter that never counts.
    let (_, allocations) = allocations_in(|| std::hint::black_box(vec![1u8; 16]));
    assert!(allocations >= 1);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (_, allocations) = runtime.block_on(allocations_awaiting(async {
        tokio::task::yield_now().await;
        std::hint::black_box(vec![1u8; 16])
    }));
    assert!(allocations >= 1, "across an await too");
}

/// A rate-limit answer with a hint: closes a cooldown, turns a throttle on.
#[derive(Debug, PartialEq)]
struct Limited;

impl Classify for Limited {
    fn classify(&self) -> ErrorClass {
        ErrorClass::RateLimited
    }
    fn retry_after(&self) -> Option<Duration> {
        Some(Duration::from_millis(5))
    }
}

static PROVIDER_COOLDOWN: tenacious_runtime::Cooldown = tenacious_runtime::Cooldown::new();
/// A high least rate, so its waits on this blocking test's real clock stay
/// in milliseconds.
static PROVIDER_THROTTLE: tenacious_runtime::Throttle =
    tenacious_runtime::Throttle::new().min_rate(1000.0);
static PROVIDER_BREAKER: tenacious_runtime::Breaker = tenacious_runtime::Breaker::new();
static PROVIDER_BUDGET: RetryBudget = RetryBudget::new();

/// Every provider guard, and the budget.
const PROVIDER: Policy = Policy::new()
    .max(4)
    .base(Duration::ZERO)
    .jitter(Jitter::None)
    .breaker(&PROVIDER_BREAKER)
    .cooldown(&PROVIDER_COOLDOWN)
    .throttle(&PROVIDER_THROTTLE)
    .budget(&PROVIDER_BUDGET);

#[test]
fn the_provider_guards_do_not_allocate() {
    let transient = |calls: &Cell<u32>, failures: u32| op(calls, failures);
    let limited = |calls: &Cell<u32>| {
        calls.set(calls.get() + 1);
        if calls.get() == 1 {
            Err(Limited)
        } else {
            Ok(calls.get())
        }
    };
    // Warm-up: the guards' records join the registry, the RNG is seeded.
    let calls = Cell::new(0);
    assert_eq!(PROVIDER.retry_blocking(|| transient(&calls, 2)), Ok(3));

    let calls = Cell::new(0);
    let (result, allocations) = allocations_in(|| PROVIDER.retry_blocking(|| transient(&calls, 0)));
    assert_eq!(
        (result, allocations),
        (Ok(1), 0),
        "happy path, every guard asked"
    );

    let calls = Cell::new(0);
    let (result, allocations) = allocations_in(|| PROVIDER.retry_blocking(|| transient(&calls, 2)));
    assert_eq!((result, allocations), (Ok(3), 0), "two transient retries");

    // A 429 closes the cooldown and turns the throttle on: the retry and
    // the calls after it wait for both, and the lock, the bucket and the
    // waits allocate nothing either.
    for round in 0..3 {
        let calls = Cell::new(0);
        let (result, allocations) = allocations_in(|| PROVIDER.retry_blocking(|| limited(&calls)));
        assert_eq!(
            (result, allocations),
            (Ok(2), 0),
            "rate-limited, round {round}"
        );
    }
}
