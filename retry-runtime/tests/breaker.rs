//! `Breaker`: only transient and overload failures open it, at its ratio
//! past its minimum throughput; while open a retry stops with
//! `StopReason::CircuitOpen` and no attempt; after its break it admits its
//! probes and their outcome closes or reopens it. Through `Policy`, on
//! tokio's paused clock, counted, not timed.
//!
//! Today a guard's refusal before a call's *first* attempt lets the
//! attempt go (there is no error to return yet), so these tests count the
//! attempts *beyond* the first; the breaker's own unit tests show it refuses
//! first attempts too.
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tenacious_alloc_counter::{Counting, allocations_in};
use tenacious_runtime::{
    Breaker, BreakerState, Classify, ErrorClass, Failure, Jitter, Policy, Refused, RetryBudget,
    Signals, StopReason,
};
use tokio::task::JoinSet;

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Transient,
    Invalid,
    Fatal,
    RateLimited,
    /// A 529: rate-limited class, but the provider says it is overloaded.
    Overloaded,
    /// An open circuit refused the call before its first attempt.
    Refused(Refused),
}

impl Classify for Fault {
    fn classify(&self) -> ErrorClass {
        match self {
            Fault::Transient => ErrorClass::Transient,
            Fault::Invalid => ErrorClass::Invalid,
            Fault::Fatal => ErrorClass::Fatal,
            Fault::RateLimited | Fault::Overloaded => ErrorClass::RateLimited,
            Fault::Refused(refused) => refused.classify(),
        }
    }
    fn refused() -> Option<fn(Refused) -> Self> {
        Some(Fault::Refused)
    }
    fn signals(&self) -> Signals {
        Signals::NONE.overloaded(*self == Fault::Overloaded)
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A breaker of its own for each test (statics outlive the runtime):
/// opening at half of 10 outcomes, open for 10 s.
fn fresh(probes: u32) -> &'static Breaker {
    Box::leak(Box::new(
        Breaker::new()
            .min_throughput(10)
            .open_for(Duration::from_secs(10))
            .probes(probes),
    ))
}

/// Up to `max` attempts, 1 ms apart, guarded by `breaker`.
fn policy(breaker: &'static Breaker, max: u32) -> Policy {
    Policy::new()
        .max(max)
        .base(ms(1))
        .jitter(Jitter::None)
        .breaker(breaker)
}

fn state(breaker: &Breaker) -> BreakerState {
    breaker.state_at(tokio::time::Instant::now().into_std())
}

/// One call of one attempt answering `result`.
async fn once(breaker: &'static Breaker, result: Result<(), Fault>) {
    let _ = policy(breaker, 1).retry(|| async move { result }).await;
}

/// A call through `policy` answering `results` in turn, each after
/// `takes`; the attempts it made and how it ended.
async fn call(
    policy: Policy,
    takes: Duration,
    results: Vec<Result<(), Fault>>,
) -> (u32, Result<(), Failure<Fault>>) {
    let attempts = AtomicU32::new(0);
    let mut results = results.into_iter();
    let out = policy
        .retry_failure(|| {
            attempts.fetch_add(1, Ordering::Relaxed);
            let result = results.next().expect("no attempt past the script");
            async move {
                tokio::time::sleep(takes).await;
                result
            }
        })
        .await;
    (attempts.into_inner(), out)
}

/// Opens `breaker` with 10 failing one-attempt calls.
async fn trip(breaker: &'static Breaker) {
    for _ in 0..10 {
        once(breaker, Err(Fault::Transient)).await;
    }
    assert_eq!(state(breaker), BreakerState::Open);
}

#[tokio::test(start_paused = true)]
async fn invalid_fatal_and_rate_limited_failures_never_open_it() {
    let breaker = fresh(1);
    for fault in [Fault::Invalid, Fault::Fatal, Fault::RateLimited] {
        for _ in 0..300 {
            once(breaker, Err(fault)).await;
        }
    }
    assert_eq!(state(breaker), BreakerState::Closed);
    assert_eq!(breaker.stats().opened, 0);
    // Nor do they stand in for successes: ten transient failures after
    // them are the whole window, and open it.
    trip(breaker).await;
    assert_eq!(breaker.stats().opened, 1);
}

#[tokio::test(start_paused = true)]
async fn transient_failures_open_it_at_the_ratio_past_the_minimum_throughput() {
    let breaker = fresh(1);
    for _ in 0..5 {
        once(breaker, Ok(())).await;
    }
    for _ in 0..4 {
        once(breaker, Err(Fault::Transient)).await;
    }
    assert_eq!(state(breaker), BreakerState::Closed, "4 of 9, below 10");
    // The fifth failure makes 5 of 10: the first attempt goes (the breaker
    // is closed), its retry is refused at once.
    let (attempts, out) = call(policy(breaker, 5), ms(0), vec![Err(Fault::Transient); 5]).await;
    assert_eq!(
        (attempts, out.unwrap_err().stop_reason()),
        (1, StopReason::CircuitOpen)
    );
    assert_eq!(state(breaker), BreakerState::Open);
    let stats = breaker.stats();
    assert_eq!((stats.opened, stats.stopped), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn overload_opens_it_whatever_the_class() {
    let breaker = fresh(1);
    for _ in 0..9 {
        once(breaker, Err(Fault::Overloaded)).await;
    }
    assert_eq!(state(breaker), BreakerState::Closed);
    let (attempts, out) = call(policy(breaker, 5), ms(0), vec![Err(Fault::Overloaded); 5]).await;
    assert_eq!(
        (attempts, out.unwrap_err().stop_reason()),
        (1, StopReason::CircuitOpen)
    );
}

#[tokio::test(start_paused = true)]
async fn below_the_minimum_throughput_it_stays_closed() {
    let breaker = fresh(1);
    // 9 outcomes, every one a failure: not enough to weigh.
    for _ in 0..3 {
        let (attempts, _) = call(policy(breaker, 3), ms(0), vec![Err(Fault::Transient); 3]).await;
        assert_eq!(attempts, 3);
    }
    assert_eq!(state(breaker), BreakerState::Closed);
    // And the window slides: 30 s later those nine are gone.
    tokio::time::advance(Duration::from_secs(31)).await;
    for _ in 0..9 {
        once(breaker, Err(Fault::Transient)).await;
    }
    assert_eq!(state(breaker), BreakerState::Closed);
}

#[tokio::test(start_paused = true)]
async fn while_open_retries_stop_at_once_with_no_attempt() {
    let breaker = fresh(1);
    trip(breaker).await;
    let (attempts, out) = call(policy(breaker, 5), ms(0), vec![Err(Fault::Transient); 5]).await;
    assert_eq!(attempts, 0, "no attempt against an open breaker");
    assert_eq!(out.unwrap_err().stop_reason(), StopReason::CircuitOpen);
    // It says when it may admit again: the rest of its break.
    tokio::time::advance(Duration::from_secs(4)).await;
    assert_eq!(
        breaker.admits_in_at(tokio::time::Instant::now().into_std()),
        Duration::from_secs(6)
    );
}

#[tokio::test(start_paused = true)]
async fn thirty_two_calls_against_an_open_breaker_make_no_attempt() {
    let breaker = fresh(1);
    trip(breaker).await;
    let attempts = Arc::new(AtomicU32::new(0));
    let mut calls = JoinSet::new();
    for _ in 0..32 {
        let attempts = Arc::clone(&attempts);
        calls.spawn(async move {
            policy(breaker, 5)
                .retry_failure(|| {
                    attempts.fetch_add(1, Ordering::Relaxed);
                    async { Err::<(), _>(Fault::Transient) }
                })
                .await
        });
    }
    while let Some(out) = calls.join_next().await {
        assert_eq!(
            out.unwrap().unwrap_err().stop_reason(),
            StopReason::CircuitOpen
        );
    }
    assert_eq!(attempts.load(Ordering::Relaxed), 0, "no attempt at all");
    assert!(breaker.stats().stopped >= 32);
    assert_eq!(state(breaker), BreakerState::Open);
}

/// `calls` calls whose first attempt starts while `breaker` is closed and
/// ends, rate limited (which the breaker does not count), after 10.5 s —
/// after `breaker`, opened meanwhile, has gone half-open — and whose retry
/// answers `retry`; each call's attempts and stop reason, in start order.
async fn retried_when_half_open(
    breaker: &'static Breaker,
    policy: Policy,
    calls: u64,
    retry: Result<(), Fault>,
) -> Vec<(u32, Option<StopReason>)> {
    let mut set = JoinSet::new();
    for i in 0..calls {
        set.spawn(async move {
            // Start in turn, 1 ms apart, so they retry in that order.
            tokio::time::sleep(ms(i)).await;
            let out = call(
                policy,
                ms(10_500),
                vec![Err(Fault::RateLimited), retry, Err(Fault::Transient)],
            )
            .await;
            (i, out.0, out.1.err().map(|f| f.stop_reason()))
        });
    }
    tokio::time::sleep(ms(100)).await;
    trip(breaker).await;
    let mut outs = set.join_all().await;
    outs.sort_by_key(|out| out.0);
    outs.into_iter().map(|(_, a, s)| (a, s)).collect()
}

#[tokio::test(start_paused = true)]
async fn half_open_it_admits_exactly_its_probes_and_their_success_closes_it() {
    let breaker = fresh(2);
    let outs = retried_when_half_open(breaker, policy(breaker, 3), 5, Ok(())).await;
    let probed = |out: &(u32, Option<StopReason>)| *out == (2, None);
    let refused = |out: &(u32, Option<StopReason>)| *out == (1, Some(StopReason::CircuitOpen));
    assert_eq!(outs.iter().filter(|out| probed(out)).count(), 2, "{outs:?}");
    assert_eq!(
        outs.iter().filter(|out| refused(out)).count(),
        3,
        "{outs:?}"
    );
    assert_eq!(state(breaker), BreakerState::Closed);
    let stats = breaker.stats();
    assert_eq!((stats.probes, stats.closed, stats.opened), (2, 1, 1));
    // Closed with a fresh window: a call retries as usual.
    let (attempts, _) = call(policy(breaker, 3), ms(0), vec![Err(Fault::Transient); 3]).await;
    assert_eq!(attempts, 3);
}

#[tokio::test(start_paused = true)]
async fn a_probe_failure_reopens_it() {
    let breaker = fresh(1);
    let outs = retried_when_half_open(breaker, policy(breaker, 3), 3, Err(Fault::Transient)).await;
    // The probe failed and its own next retry found the breaker open again;
    // the others were refused as the probe was out.
    assert_eq!(
        outs,
        [
            (2, Some(StopReason::CircuitOpen)),
            (1, Some(StopReason::CircuitOpen)),
            (1, Some(StopReason::CircuitOpen)),
        ]
    );
    assert_eq!(state(breaker), BreakerState::Open);
    assert_eq!(breaker.stats().opened, 2);
    assert_eq!(breaker.stats().probes, 1);
}

#[tokio::test(start_paused = true)]
async fn a_probe_not_made_gives_its_slot_back() {
    let breaker = fresh(1);
    // The first call's probe is admitted by the breaker, then its empty
    // retry budget stops the call: the attempt is not made, and the slot
    // goes to the next call.
    let empty: &'static RetryBudget = Box::leak(Box::new(RetryBudget::with_capacity(0)));
    let mut set = JoinSet::new();
    set.spawn(async move {
        let out = call(
            policy(breaker, 3).budget(empty),
            ms(10_500),
            vec![Err(Fault::RateLimited), Ok(())],
        )
        .await;
        (out.0, out.1.err().map(|f| f.stop_reason()))
    });
    set.spawn(async move {
        tokio::time::sleep(ms(1)).await;
        let out = call(
            policy(breaker, 3),
            ms(10_500),
            vec![Err(Fault::RateLimited), Ok(())],
        )
        .await;
        (out.0, out.1.err().map(|f| f.stop_reason()))
    });
    tokio::time::sleep(ms(100)).await;
    trip(breaker).await;
    let mut outs = set.join_all().await;
    outs.sort_by_key(|out| out.0);
    assert_eq!(outs, [(1, Some(StopReason::Budget)), (2, None)]);
    assert_eq!(state(breaker), BreakerState::Closed);
    assert_eq!(breaker.stats().probes, 2);
}

#[test]
fn admitting_and_observing_allocate_nothing() {
    static PROVIDER: Breaker = Breaker::new();
    const GUARDED: Policy = Policy::new()
        .max(3)
        .base(Duration::from_micros(1))
        .jitter(Jitter::None)
        .breaker(&PROVIDER);
    let mut failures = 0;
    let mut flaky = || {
        failures += 1;
        if failures % 3 == 0 {
            Ok(())
        } else {
            Err(Fault::Transient)
        }
    };
    // Warm-up: the thread's jitter RNG, the guard epoch.
    assert_eq!(GUARDED.retry_blocking(&mut flaky), Ok(()));
    let (result, allocations) = allocations_in(|| GUARDED.retry_blocking(&mut flaky));
    assert_eq!((result, allocations), (Ok(()), 0), "closed, two retries");
    // Six outcomes so far, four of them failures: three more failures,
    // then a tenth opens it, and that call's retry is refused.
    let fail = || Err::<(), _>(Fault::Transient);
    let (_, allocations) = allocations_in(|| {
        let _ = GUARDED.retry_blocking(fail);
        let _ = GUARDED.retry_blocking(fail);
    });
    assert_eq!(allocations, 0, "opening, refused");
    assert!(PROVIDER.is_open());
    assert_eq!(PROVIDER.stats().stopped, 1);
}
