//! The deadline holds for any sequence of errors, server hints and attempt
//! run times, on tokio's paused clock: with a per-attempt timeout the call
//! ends by the deadline; without one, by the deadline plus the last
//! attempt's own run time (an attempt already running is not interrupted).
use std::cell::Cell;
use std::time::Duration;

use proptest::prelude::*;
use tenacious_runtime::{
    Classify, Elapsed, ErrorClass, Failure, Jitter, Policy, StopReason, seed_jitter,
};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Transient,
    RateLimited(Duration),
    Invalid,
    TimedOut(Elapsed),
}

impl Classify for Fault {
    fn classify(&self) -> ErrorClass {
        match self {
            Fault::Transient | Fault::TimedOut(_) => ErrorClass::Transient,
            Fault::RateLimited(_) => ErrorClass::RateLimited,
            Fault::Invalid => ErrorClass::Invalid,
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Fault::RateLimited(hint) => Some(*hint),
            _ => None,
        }
    }
}

impl From<Elapsed> for Fault {
    fn from(elapsed: Elapsed) -> Self {
        Fault::TimedOut(elapsed)
    }
}

const MS: Duration = Duration::from_millis(1);

/// One scripted attempt: how long it runs, then what it returns.
type Step = (Duration, Option<Fault>);

/// Runs `policy` over `script` (attempts past its end succeed at once) on
/// a fresh paused clock; returns the time the call took and how long its
/// last attempt was scripted to run.
fn run(policy: Policy, script: &[Step], timed: bool) -> (Duration, Duration, u32) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let next = Cell::new(0usize);
        let last_run = Cell::new(Duration::ZERO);
        let op = || {
            let (run, fault) = script
                .get(next.get())
                .copied()
                .unwrap_or((Duration::ZERO, None));
            next.set(next.get() + 1);
            last_run.set(run);
            async move {
                tokio::time::sleep(run).await;
                fault.map_or(Ok(()), Err)
            }
        };
        let started = Instant::now();
        let _ = if timed {
            policy.retry_timed(op).await
        } else {
            policy.retry(op).await
        };
        let attempts = u32::try_from(next.get()).unwrap();
        (started.elapsed(), last_run.get(), attempts)
    })
}

fn ms(range: std::ops::Range<u64>) -> impl Strategy<Value = Duration> {
    range.prop_map(Duration::from_millis)
}

fn step() -> impl Strategy<Value = Step> {
    let fault = prop_oneof![
        4 => Just(Some(Fault::Transient)),
        2 => ms(0..3_000).prop_map(|hint| Some(Fault::RateLimited(hint))),
        1 => Just(Some(Fault::Invalid)),
        1 => Just(None),
    ];
    (ms(0..2_000), fault)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_call_never_runs_past_its_deadline(
        script in proptest::collection::vec(step(), 0..25),
        max in 1..20u32,
        base in ms(1..500),
        deadline in ms(1..5_000),
        timeout_share in proptest::option::of(1..=100u64),
        jitter in prop_oneof![Just(Jitter::None), Just(Jitter::Full), Just(Jitter::Decorrelated)],
        seed in any::<u64>(),
    ) {
        seed_jitter(seed);
        let mut policy = Policy::new()
            .max(max)
            .base(base)
            .cap(Duration::from_secs(2))
            .jitter(jitter)
            .deadline(deadline);
        // A timeout between 1 % and 100 % of the deadline.
        let timeout = timeout_share.map(|share| (deadline * u32::try_from(share).unwrap() / 100).max(MS));
        if let Some(timeout) = timeout {
            policy = policy.timeout(timeout);
        }
        // Tokio's timer fires on whole milliseconds: with whole-millisecond
        // waits the bound is exact, with jittered ones a sleep may end up
        // to a millisecond late.
        let tick = if jitter == Jitter::None { Duration::ZERO } else { MS };
        let (elapsed, last_run, attempts) = run(policy, &script, timeout.is_some());
        prop_assert!(attempts >= 1 && attempts <= max);
        if timeout.is_some() {
            prop_assert!(elapsed <= deadline + tick, "{elapsed:?} > {deadline:?}");
        } else {
            prop_assert!(
                elapsed <= deadline + last_run + tick,
                "{elapsed:?} > {deadline:?} + {last_run:?}"
            );
        }
    }
}

/// A property that cannot fail proves nothing: without the deadline the
/// same kind of script does run past it.
#[test]
fn without_a_deadline_the_same_script_runs_past_it() {
    let script = [(400 * MS, Some(Fault::Transient)); 5];
    let policy = Policy::new().max(5).base(100 * MS).jitter(Jitter::None);
    let (elapsed, ..) = run(policy, &script, false);
    assert!(elapsed > Duration::from_secs(1), "{elapsed:?}");
    let (elapsed, _, attempts) = run(policy.deadline(Duration::from_secs(1)), &script, false);
    // 400 + 100 + 400 = 900 ms; a 200 ms backoff would end past 1 s.
    assert_eq!((elapsed, attempts), (900 * MS, 2));
    let (elapsed, _, attempts) = run(
        policy.deadline(Duration::from_secs(1)).timeout(300 * MS),
        &script,
        true,
    );
    // Attempts cut at 300 ms: 300 + 100 + 300 + 200 = 900 ms; the third
    // attempt gets the 100 ms left and is cut exactly at the deadline.
    assert_eq!((elapsed, attempts), (Duration::from_secs(1), 3));
}

#[test]
fn the_stop_reason_is_deadline() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let failure: Failure<Fault> = runtime.block_on(async {
        Policy::new()
            .max(10)
            .base(100 * MS)
            .jitter(Jitter::None)
            .deadline(Duration::from_millis(250))
            .retry_failure(|| async { Err::<(), _>(Fault::Transient) })
            .await
            .unwrap_err()
    });
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert_eq!(failure.attempts().len(), 2);
    let waits: Vec<_> = failure.attempts().iter().map(|r| r.delay).collect();
    assert_eq!(waits, [Some(100 * MS), None]);
}

// ------------------------------------------------ no attempt without time

static EDGE_BUDGET: tenacious_runtime::RetryBudget =
    tenacious_runtime::RetryBudget::with_capacity(100);

#[tokio::test(start_paused = true)]
async fn no_attempt_starts_that_tokio_rounding_would_leave_without_time() {
    // The backoff ends 0.5 ms before the deadline; tokio's timer rounds the
    // wake-up to the next millisecond, the deadline itself. An attempt
    // started there would get a zero time limit, be sent, time out at once
    // and replace the real error with a timeout.
    let policy = Policy::new()
        .max(3)
        .jitter(Jitter::None)
        .base(Duration::from_micros(99_500))
        .deadline(Duration::from_millis(100))
        .timeout(Duration::from_millis(50))
        .budget(&EDGE_BUDGET);
    let start = Instant::now();
    let starts = std::cell::RefCell::new(Vec::new());
    let result = policy
        .retry_timed(|| {
            starts.borrow_mut().push(Instant::now() - start);
            async { Err::<(), _>(Fault::Transient) }
        })
        .await;
    assert_eq!(result, Err(Fault::Transient), "the real error is returned");
    assert_eq!(starts.borrow().len(), 1, "{:?}", starts.borrow());
    assert_eq!(EDGE_BUDGET.balance(), 100, "no retry was paid for");
}

#[test]
fn a_blocking_loop_keeps_its_deadline_on_the_clock_it_sleeps_on() {
    // Inside a runtime whose clock is paused, tokio's clock stands still
    // while the thread sleeps: a deadline kept on it would never come.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let mut attempts = 0;
    let failure = Policy::new()
        .max(8)
        .jitter(Jitter::None)
        .base(Duration::from_millis(10))
        .deadline(Duration::from_millis(500))
        .retry_blocking_failure(|| {
            attempts += 1;
            Err::<(), _>(Fault::Transient)
        })
        .unwrap_err();
    // 10, 20, 40, 80, 160 ms: 310 ms; a sixth wait of 320 ms would end past
    // the deadline. (The thread really sleeps: the margin of 190 ms keeps a
    // busy machine's late wake-ups from ending it one attempt early.)
    assert_eq!(attempts, 6);
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// On the real clock and a multi-thread runtime, where wake-ups come
    /// late, no attempt starts at or past the deadline.
    #[test]
    fn on_the_real_clock_no_attempt_starts_at_or_past_the_deadline(
        deadline_us in 2_000..6_000u64,
        base_us in 100..2_000u64,
        run_us in 0..1_500u64,
        jitter in prop_oneof![Just(Jitter::None), Just(Jitter::Full), Just(Jitter::Decorrelated)],
    ) {
        let deadline = Duration::from_micros(deadline_us);
        let policy = Policy::new()
            .max(100)
            .jitter(jitter)
            .base(Duration::from_micros(base_us))
            .deadline(deadline);
        let late = real_runtime().block_on(async move {
            let start = std::time::Instant::now();
            let late = std::sync::atomic::AtomicU32::new(0);
            let _ = policy
                .retry(|| {
                    if start.elapsed() >= deadline {
                        late.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    async move {
                        tokio::time::sleep(Duration::from_micros(run_us)).await;
                        Err::<(), _>(Fault::Transient)
                    }
                })
                .await;
            late.into_inner()
        });
        prop_assert_eq!(late, 0, "an attempt started at or past the deadline");
    }
}

/// One multi-thread runtime on the real clock for every case.
fn real_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap()
    })
}

static LATE_BUDGET: tenacious_runtime::RetryBudget =
    tenacious_runtime::RetryBudget::with_capacity(100);
static LATE_STATS: tenacious_runtime::stats::CallStats =
    tenacious_runtime::stats::CallStats::new("late wake-up");

#[tokio::test(start_paused = true)]
async fn a_wake_up_too_late_for_another_attempt_gives_up_with_the_last_error() {
    // The retry is planned with room to spare (10 ms into a 100 ms
    // deadline), but the clock jumps past the deadline during the wait, as
    // a stalled machine's does: no attempt starts, the last error is
    // returned, the budget gets its tokens back, and the give-up is counted
    // once, under the deadline.
    let policy = Policy::new()
        .max(3)
        .jitter(Jitter::None)
        .base(Duration::from_millis(10))
        .deadline(Duration::from_millis(100))
        .budget(&LATE_BUDGET)
        .stats(&LATE_STATS);
    let attempts = Cell::new(0);
    let call = policy.retry_failure(|| {
        attempts.set(attempts.get() + 1);
        async { Err::<(), _>(Fault::Transient) }
    });
    let stall = async {
        // Runs once the call sleeps: move the clock past the deadline.
        tokio::task::yield_now().await;
        tokio::time::advance(Duration::from_millis(500)).await;
    };
    let (result, ()) = tokio::join!(call, stall);
    let failure = result.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert_eq!(*failure.last(), Fault::Transient);
    assert_eq!(attempts.get(), 1, "an attempt started past the deadline");
    assert_eq!(
        LATE_BUDGET.balance(),
        100,
        "the planned retry's tokens came back"
    );
    let snapshot = tenacious_runtime::stats::snapshot();
    let row = snapshot.get("late wake-up").unwrap();
    assert_eq!((row.calls(), row.attempts()), (1, 1));
    assert_eq!(row.gave_up(StopReason::Deadline), 1);
    assert_eq!(row.gave_up_total(), 1);
}
