//! `Policy::retry` and `Policy::retry_blocking` on tokio's paused clock:
//! attempts, waits and hooks, observed through counters, recorded delays and
//! paused-clock time, never the wall clock.
use std::cell::{Cell, RefCell};
use std::io;
use std::time::Duration;

use tenacious_runtime::{Classify, ErrorClass, Jitter, Policy, RetryEvent, RetryOn, seed_jitter};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Transient,
    RateLimited(Option<Duration>),
    Invalid,
    Fatal,
}

impl Classify for Fault {
    fn classify(&self) -> ErrorClass {
        match self {
            Fault::Transient => ErrorClass::Transient,
            Fault::RateLimited(_) => ErrorClass::RateLimited,
            Fault::Invalid => ErrorClass::Invalid,
            Fault::Fatal => ErrorClass::Fatal,
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Fault::RateLimited(hint) => *hint,
            _ => None,
        }
    }
}

const MS: Duration = Duration::from_millis(1);

/// Tokio's timer fires on whole milliseconds, so a paused clock may pass a
/// sleep by up to one.
const TICK: Duration = MS;

/// An operation that fails with `fault` on its first `failures` calls, then
/// returns the call number.
struct Op {
    calls: Cell<u32>,
    failures: u32,
    fault: Fault,
}

impl Op {
    fn failing(fault: Fault) -> Self {
        Self::failing_first(u32::MAX, fault)
    }

    fn failing_first(failures: u32, fault: Fault) -> Self {
        Self {
            calls: Cell::new(0),
            failures,
            fault,
        }
    }

    fn call(&self) -> Result<u32, Fault> {
        let n = self.calls.get() + 1;
        self.calls.set(n);
        if n <= self.failures {
            Err(self.fault)
        } else {
            Ok(n)
        }
    }

    async fn call_async(&self) -> Result<u32, Fault> {
        // An await point, so an attempt really is a future that yields.
        tokio::task::yield_now().await;
        self.call()
    }

    fn calls(&self) -> u32 {
        self.calls.get()
    }
}

/// Runs `op` under `policy` on the paused clock, recording each notified
/// event; returns the result, the events and the paused time elapsed.
async fn run(policy: &Policy, op: &Op) -> (Result<u32, Fault>, Vec<RetryEvent>, Duration) {
    let events = RefCell::new(Vec::new());
    let start = Instant::now();
    let result = policy
        .retry_with(
            || op.call_async(),
            |_| true,
            |_, event| events.borrow_mut().push(*event),
        )
        .await;
    (result, events.into_inner(), start.elapsed())
}

fn delays(events: &[RetryEvent]) -> Vec<Duration> {
    events.iter().map(|e| e.delay).collect()
}

fn assert_slept(elapsed: Duration, events: &[RetryEvent]) {
    let slept: Duration = events.iter().map(|e| e.delay).sum();
    let slack = TICK * u32::try_from(events.len()).unwrap();
    assert!(
        elapsed >= slept && elapsed <= slept + slack,
        "elapsed {elapsed:?}, notified delays sum to {slept:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn transient_is_retried_up_to_max() {
    let policy = Policy::new().max(4);
    let op = Op::failing(Fault::Transient);
    let (result, events, elapsed) = run(&policy, &op).await;
    assert_eq!(result, Err(Fault::Transient));
    assert_eq!(op.calls(), 4);
    assert_eq!(events.len(), 3);
    assert_slept(elapsed, &events);
}

#[tokio::test(start_paused = true)]
async fn default_policy_makes_three_attempts() {
    let op = Op::failing(Fault::Transient);
    let result = Policy::new().retry(|| op.call_async()).await;
    assert_eq!(result, Err(Fault::Transient));
    assert_eq!(op.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn success_after_failures_returns_the_value() {
    let op = Op::failing_first(2, Fault::Transient);
    let (result, events, _) = run(&Policy::new().max(5), &op).await;
    assert_eq!(result, Ok(3));
    assert_eq!(op.calls(), 3);
    assert_eq!(events.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn invalid_and_fatal_return_after_one_attempt() {
    for fault in [Fault::Invalid, Fault::Fatal] {
        let op = Op::failing(fault);
        let (result, events, elapsed) = run(&Policy::new().max(10), &op).await;
        assert_eq!(result, Err(fault));
        assert_eq!(op.calls(), 1);
        assert!(events.is_empty());
        assert_eq!(elapsed, Duration::ZERO);
    }
}

#[tokio::test(start_paused = true)]
async fn rate_limited_without_a_hint_backs_off_like_transient() {
    let policy = Policy::new().max(4).jitter(Jitter::None).base(100 * MS);
    let op = Op::failing(Fault::RateLimited(None));
    let (result, events, elapsed) = run(&policy, &op).await;
    assert_eq!(result, Err(Fault::RateLimited(None)));
    assert_eq!(op.calls(), 4);
    assert_eq!(delays(&events), [100 * MS, 200 * MS, 400 * MS]);
    assert_eq!(elapsed, 700 * MS);
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_hint_is_waited_at_least_and_boundedly_more() {
    let hint = Duration::from_secs(2);
    for seed in 0..20 {
        seed_jitter(seed);
        let op = Op::failing_first(1, Fault::RateLimited(Some(hint)));
        let (result, events, elapsed) = run(&Policy::new(), &op).await;
        assert_eq!(result, Ok(2));
        assert_eq!(events.len(), 1);
        // At least the hint; at most the first backoff window more (and a
        // timer tick).
        let window = Policy::new().get_base();
        assert!(events[0].delay >= hint && events[0].delay <= hint + window);
        assert!(
            elapsed >= hint && elapsed <= hint + window + TICK,
            "{elapsed:?}"
        );
    }
    // Without jitter, the hint and the first backoff ceiling.
    let op = Op::failing_first(1, Fault::RateLimited(Some(hint)));
    let (_, _, elapsed) = run(&Policy::new().jitter(Jitter::None), &op).await;
    assert_eq!(elapsed, hint + Policy::new().get_base());
}

#[tokio::test(start_paused = true)]
async fn a_long_hint_is_not_capped_by_cap() {
    // `cap` bounds computed backoff; a hint is bounded by max_retry_after.
    let hint = Duration::from_secs(90);
    let policy = Policy::new()
        .cap(Duration::from_secs(1))
        .jitter(Jitter::None);
    let op = Op::failing_first(1, Fault::RateLimited(Some(hint)));
    let (result, _, elapsed) = run(&policy, &op).await;
    assert_eq!(result, Ok(2));
    // The hint in full, plus the (capped) backoff on top.
    assert_eq!(
        elapsed,
        hint + Duration::from_secs(1).min(policy.get_base())
    );
}

#[tokio::test(start_paused = true)]
async fn a_hint_above_max_retry_after_stops_at_once() {
    let policy = Policy::new()
        .max(5)
        .max_retry_after(Duration::from_secs(30));
    let op = Op::failing(Fault::RateLimited(Some(Duration::from_secs(31))));
    let (result, events, elapsed) = run(&policy, &op).await;
    assert_eq!(
        result,
        Err(Fault::RateLimited(Some(Duration::from_secs(31))))
    );
    assert_eq!(op.calls(), 1);
    assert!(events.is_empty());
    assert_eq!(elapsed, Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn elapsed_time_stays_within_each_jitters_bounds() {
    // Ceilings for retries 1..=4 with base 100 ms and cap 1 s.
    let ceilings = [100 * MS, 200 * MS, 400 * MS, 800 * MS];
    let policy = Policy::new()
        .max(5)
        .base(100 * MS)
        .cap(Duration::from_secs(1));
    for jitter in [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ] {
        for seed in 0..10 {
            seed_jitter(seed);
            let op = Op::failing(Fault::Transient);
            let (_, events, elapsed) = run(&policy.jitter(jitter), &op).await;
            assert_eq!(op.calls(), 5);
            assert_slept(elapsed, &events);
            let mut prev = 100 * MS;
            for (event, ceiling) in events.iter().zip(ceilings) {
                let d = event.delay;
                let ok = match jitter {
                    Jitter::None => d == ceiling,
                    Jitter::Full => d <= ceiling,
                    Jitter::Equal => d >= ceiling / 2 && d <= ceiling,
                    Jitter::Decorrelated => {
                        d >= 100 * MS && d <= (prev * 3).min(Duration::from_secs(1))
                    }
                };
                assert!(
                    ok,
                    "{jitter:?} seed {seed}: retry {} waited {d:?}",
                    event.attempt
                );
                prev = d;
            }
            let total: Duration = ceilings.iter().sum();
            let (lo, hi) = match jitter {
                Jitter::None => (total, total),
                Jitter::Full => (Duration::ZERO, total),
                Jitter::Equal => (total / 2, total),
                Jitter::Decorrelated => (400 * MS, Duration::from_secs(4)),
            };
            assert!(
                elapsed >= lo && elapsed <= hi + 4 * TICK,
                "{jitter:?} seed {seed}: {elapsed:?} not in [{lo:?}, {hi:?}]"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn the_same_seed_gives_the_same_waits() {
    let policy = Policy::new().max(6).jitter(Jitter::Decorrelated);
    let waits = |seed| async move {
        seed_jitter(seed);
        let op = Op::failing(Fault::Transient);
        let (_, events, elapsed) = run(&policy, &op).await;
        (delays(&events), elapsed)
    };
    let first = waits(1).await;
    assert_eq!(waits(1).await, first);
    assert_ne!(waits(2).await.0, first.0);
}

#[tokio::test(start_paused = true)]
async fn when_is_anded_with_on() {
    let asked = Cell::new(0);
    let policy = Policy::new().max(4).base(MS).on(RetryOn::TRANSIENT);

    // `when` says no: one attempt.
    let op = Op::failing(Fault::Transient);
    let result = policy
        .retry_with(
            || op.call_async(),
            |_| {
                asked.set(asked.get() + 1);
                false
            },
            |_, _| {},
        )
        .await;
    assert_eq!(result, Err(Fault::Transient));
    assert_eq!((op.calls(), asked.get()), (1, 1));

    // `when` says yes but `on` leaves the class out: one attempt, and `when`
    // is not even asked.
    asked.set(0);
    let op = Op::failing(Fault::RateLimited(None));
    let _ = policy
        .retry_with(
            || op.call_async(),
            |_| {
                asked.set(asked.get() + 1);
                true
            },
            |_, _| {},
        )
        .await;
    assert_eq!((op.calls(), asked.get()), (1, 0));

    // Both say yes: retried to max, `when` asked after every failure.
    asked.set(0);
    let op = Op::failing(Fault::Transient);
    let _ = policy
        .retry_with(
            || op.call_async(),
            |e| {
                asked.set(asked.get() + 1);
                *e == Fault::Transient
            },
            |_, _| {},
        )
        .await;
    assert_eq!((op.calls(), asked.get()), (4, 4));
}

#[tokio::test(start_paused = true)]
async fn notify_gets_the_attempt_the_delay_and_the_error() {
    let policy = Policy::new().max(3).jitter(Jitter::None).base(10 * MS);
    let calls = Cell::new(0);
    let seen = RefCell::new(Vec::new());
    let start = Instant::now();
    let result = policy
        .retry_with(
            || {
                calls.set(calls.get() + 1);
                let fault = if calls.get() == 1 {
                    Fault::RateLimited(None)
                } else {
                    Fault::Transient
                };
                async move { Err::<(), _>(fault) }
            },
            |_| true,
            |e: &Fault, event| {
                // Called before the sleep, not after it.
                seen.borrow_mut().push((*e, *event, start.elapsed()));
            },
        )
        .await;
    assert_eq!(result, Err(Fault::Transient));
    let seen = seen.into_inner();
    assert_eq!(seen.len(), 2);
    let (e1, ev1, at1) = seen[0];
    assert_eq!(e1, Fault::RateLimited(None));
    assert_eq!(
        (ev1.attempt, ev1.max, ev1.delay, ev1.class),
        (1, 3, 10 * MS, ErrorClass::RateLimited)
    );
    assert_eq!(at1, Duration::ZERO);
    let (e2, ev2, at2) = seen[1];
    assert_eq!(e2, Fault::Transient);
    assert_eq!(
        (ev2.attempt, ev2.max, ev2.delay, ev2.class),
        (2, 3, 20 * MS, ErrorClass::Transient)
    );
    assert_eq!(at2, 10 * MS);
    assert_eq!(start.elapsed(), 30 * MS);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_during_a_backoff_makes_no_further_attempt() {
    let policy = Policy::new()
        .max(5)
        .jitter(Jitter::None)
        .base(Duration::from_secs(1));
    let op = Op::failing(Fault::Transient);
    let call = policy.retry(|| op.call_async());
    // The first attempt fails at once; the deadline falls inside the 1 s
    // backoff that follows it.
    let outcome = tokio::time::timeout(500 * MS, call).await;
    assert!(outcome.is_err(), "the call should still be backing off");
    assert_eq!(op.calls(), 1);
    // Long past every backoff the dropped call would have slept.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(op.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn max_u32_attempts_with_success_on_the_second_try() {
    let policy = Policy::new().max(u32::MAX).jitter(Jitter::None).base(MS);
    let op = Op::failing_first(1, Fault::Transient);
    let (result, events, elapsed) = run(&policy, &op).await;
    assert_eq!(result, Ok(2));
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].max, u32::MAX);
    assert_eq!(elapsed, MS);
}

#[tokio::test(start_paused = true)]
async fn extreme_durations_do_not_panic() {
    // Duration::MAX everywhere: the one backoff is huge, so cut the call
    // short and check it is still waiting rather than panicking.
    let policy = Policy::new()
        .base(Duration::MAX)
        .cap(Duration::MAX)
        .max_retry_after(Duration::MAX)
        .jitter(Jitter::None);
    let op = Op::failing(Fault::Transient);
    let outcome =
        tokio::time::timeout(Duration::from_secs(3600), policy.retry(|| op.call_async())).await;
    assert!(outcome.is_err());
    assert_eq!(op.calls(), 1);

    // A zero base never waits.
    let op = Op::failing(Fault::Transient);
    let (_, events, elapsed) = run(&Policy::new().max(50).base(Duration::ZERO), &op).await;
    assert_eq!(op.calls(), 50);
    assert!(events.iter().all(|e| e.delay.is_zero()));
    assert_eq!(elapsed, Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn io_errors_follow_the_table() {
    let policy = Policy::new().max(3).base(MS);
    for (kind, attempts) in [
        (io::ErrorKind::ConnectionReset, 3),
        (io::ErrorKind::TimedOut, 3),
        (io::ErrorKind::NotFound, 1),
        (io::ErrorKind::PermissionDenied, 1),
    ] {
        let calls = Cell::new(0);
        let result: Result<(), io::Error> = policy
            .retry(|| {
                calls.set(calls.get() + 1);
                async move { Err(io::Error::from(kind)) }
            })
            .await;
        assert_eq!(result.unwrap_err().kind(), kind);
        assert_eq!(calls.get(), attempts, "{kind:?}");
    }
}

#[test]
fn retry_blocking_retries_and_sleeps_the_thread() {
    // Microsecond backoff: this test really sleeps, a few microseconds.
    let policy = Policy::new()
        .max(4)
        .base(Duration::from_micros(1))
        .cap(Duration::from_micros(8));
    let op = Op::failing(Fault::Transient);
    let result = policy.retry_blocking(|| op.call());
    assert_eq!(result, Err(Fault::Transient));
    assert_eq!(op.calls(), 4);

    let op = Op::failing(Fault::Invalid);
    assert_eq!(policy.retry_blocking(|| op.call()), Err(Fault::Invalid));
    assert_eq!(op.calls(), 1);

    let op = Op::failing_first(2, Fault::RateLimited(None));
    assert_eq!(policy.retry_blocking(|| op.call()), Ok(3));
}

#[test]
fn retry_blocking_with_hooks() {
    let policy = Policy::new()
        .max(5)
        .base(Duration::from_micros(1))
        .jitter(Jitter::None);
    let op = Op::failing(Fault::Transient);
    let mut events = Vec::new();
    let mut asked = 0;
    let result = policy.retry_blocking_with(
        || op.call(),
        |_| {
            asked += 1;
            asked < 3
        },
        |_, event| events.push(*event),
    );
    assert_eq!(result, Err(Fault::Transient));
    assert_eq!(op.calls(), 3);
    let attempts: Vec<_> = events.iter().map(|e| e.attempt).collect();
    assert_eq!(attempts, [1, 2]);
    assert_eq!(
        delays(&events),
        [Duration::from_micros(1), Duration::from_micros(2)]
    );
}

#[tokio::test(start_paused = true)]
async fn async_and_blocking_loops_wait_the_same_for_the_same_seed() {
    let policy = Policy::new()
        .max(8)
        .base(Duration::from_micros(1))
        .cap(Duration::from_micros(20))
        .jitter(Jitter::Decorrelated);

    seed_jitter(77);
    let op = Op::failing(Fault::Transient);
    let (_, events, _) = run(&policy, &op).await;

    seed_jitter(77);
    let blocking_op = Op::failing(Fault::Transient);
    let mut blocking = Vec::new();
    let _ = policy.retry_blocking_with(
        || blocking_op.call(),
        |_| true,
        |_, event| blocking.push(*event),
    );

    assert_eq!(events.len(), 7);
    assert_eq!(events, blocking);
    assert_eq!(op.calls(), blocking_op.calls());
}

#[test]
fn the_retry_future_is_send_when_its_parts_are() {
    fn assert_send<T: Send>(_: &T) {}
    static POLICY: Policy = Policy::new();
    let call = POLICY.retry(|| async { Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut)) });
    assert_send(&call);
}

#[derive(Debug)]
struct Stalled;

impl Classify for Stalled {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<tenacious_runtime::Elapsed> for Stalled {
    fn from(_: tenacious_runtime::Elapsed) -> Self {
        Stalled
    }
}

static TIMED_BUDGET: tenacious_runtime::RetryBudget =
    tenacious_runtime::RetryBudget::with_capacity(100);

#[tokio::test(start_paused = true)]
async fn a_timed_out_attempt_makes_its_retry_cost_the_budget_ten() {
    const TIMED: Policy = Policy::new()
        .max(2)
        .base(Duration::from_millis(1))
        .timeout(Duration::from_secs(1))
        .budget(&TIMED_BUDGET);
    let stalls = TIMED
        .retry_timed(std::future::pending::<Result<(), Stalled>>)
        .await;
    assert!(stalls.is_err());
    assert_eq!(TIMED_BUDGET.balance(), 90, "one retry after a timeout");
    let fails = TIMED.retry_timed(|| async { Err::<(), _>(Stalled) }).await;
    assert!(fails.is_err());
    assert_eq!(TIMED_BUDGET.balance(), 85, "one retry after an error");
}
