//! Every refusal tells the caller when to come back: the `Refused` a call
//! returns, the `Failure`, the agent's observation and the task guard's
//! verdict carry the wait until the refusing guard admits again, and the
//! breaker's accessors agree with its decisions.
use std::io;
use std::time::Duration;

use tenacious::agent::{Observation, TaskGuard, TaskGuardConfig};
use tenacious::{
    Admit, Breaker, BreakerState, Classify, Guard, NextAttempt, Outcome, Policy, Refused,
    StopReason, retry,
};
use tokio::time::Instant;

fn now() -> std::time::Instant {
    Instant::now().into_std()
}

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Down,
    #[classify(refused)]
    Refused(Refused),
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Down => f.write_str("down"),
            Self::Refused(refused) => refused.fmt(f),
        }
    }
}

static OPEN: Breaker = Breaker::new()
    .min_throughput(2)
    .open_for(Duration::from_secs(15));

#[retry(max = 1, breaker = OPEN)]
async fn call(fail: bool) -> Result<(), ToolError> {
    if fail { Err(ToolError::Down) } else { Ok(()) }
}

#[tokio::test(start_paused = true)]
async fn an_open_breakers_refusal_says_the_rest_of_its_break() {
    for _ in 0..2 {
        let _ = call(true).await;
    }
    tokio::time::advance(Duration::from_secs(5)).await;
    let Err(ToolError::Refused(refused)) = call(false).await else {
        panic!("the open breaker refuses the call");
    };
    assert_eq!(refused.reason(), StopReason::CircuitOpen);
    assert_eq!(refused.retry_in(), Some(Duration::from_secs(10)));
    // What the model reads, and what the task guard tells the agent loop.
    let error = ToolError::Refused(refused);
    let obs = Observation::from_error("call_1", &error);
    assert_eq!(obs.retry_after_ms, Some(10_000));
    let mut guard = TaskGuard::new(TaskGuardConfig::new());
    let verdict = guard.failed("search", "rust", &error);
    assert_eq!(verdict.retry_in(), Some(Duration::from_secs(10)));
}

static PROBED: Breaker = Breaker::new()
    .min_throughput(2)
    .open_for(Duration::from_secs(15));

#[retry(max = 1, breaker = PROBED)]
async fn probed(wait: Duration) -> Result<(), ToolError> {
    tokio::time::sleep(wait).await;
    Ok(())
}

#[retry(max = 1, breaker = PROBED)]
async fn failing() -> Result<(), ToolError> {
    Err(ToolError::Down)
}

#[tokio::test(start_paused = true)]
async fn while_its_probe_is_out_the_breaker_says_it_is_open_and_until_when() {
    for _ in 0..2 {
        let _ = failing().await;
    }
    tokio::time::advance(Duration::from_secs(15)).await;
    assert_eq!(PROBED.state_at(now()), BreakerState::HalfOpen);
    assert!(!PROBED.is_open_at(now()), "a probe slot is free: it admits");
    let probe = tokio::spawn(probed(Duration::from_millis(300)));
    tokio::task::yield_now().await;
    // The probe holds the one slot: a call now stops, and the breaker says so.
    assert!(PROBED.is_open_at(now()));
    let Err(ToolError::Refused(refused)) = probed(Duration::ZERO).await else {
        panic!("the half-open breaker refuses a second probe");
    };
    assert_eq!(refused.reason(), StopReason::CircuitOpen);
    let wait = refused.retry_in().expect("a wait");
    assert_eq!(wait, PROBED.admits_in_at(now()));
    assert!(wait > Duration::ZERO && wait <= Duration::from_secs(15));
    // The probe succeeds: the breaker admits at once, and says so.
    probe.await.unwrap().unwrap();
    assert_eq!(PROBED.state_at(now()), BreakerState::Closed);
    assert!(!PROBED.is_open_at(now()));
    assert_eq!(PROBED.admits_in_at(now()), Duration::ZERO);
}

/// Asks every retry to wait a minute: longer than the calls' deadline.
#[derive(Debug)]
struct SlowQueue;

impl Guard for SlowQueue {
    fn admit(&self, next: &NextAttempt) -> Admit {
        if next.attempt > 1 && !next.recheck {
            Admit::Wait(Duration::from_secs(60))
        } else {
            Admit::Go
        }
    }
    fn observe(&self, _: &Outcome) {}
}

static SLOW_QUEUE: SlowQueue = SlowQueue;

#[tokio::test(start_paused = true)]
async fn a_wait_that_cannot_fit_the_deadline_says_how_long_it_was() {
    let policy = Policy::new()
        .max(3)
        .base(Duration::ZERO)
        .deadline(Duration::from_secs(10))
        .guard(&SLOW_QUEUE);
    let failure = policy
        .retry_failure(|| async { Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut)) })
        .await
        .unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert_eq!(failure.attempts().len(), 1);
    assert_eq!(failure.retry_in(), Some(Duration::from_secs(60)));
    assert_eq!(failure.retry_after(), Some(Duration::from_secs(60)));
    let obs = Observation::from_failure("call_2", &failure);
    assert_eq!(obs.retry_after_ms, Some(60_000));
}

static MID_CALL: Breaker = Breaker::new()
    .min_throughput(2)
    .open_for(Duration::from_secs(30));

#[tokio::test(start_paused = true)]
async fn a_breaker_that_opens_mid_call_tells_the_failure_and_the_verdict() {
    let policy = Policy::new()
        .max(5)
        .base(Duration::from_millis(10))
        .breaker(&MID_CALL);
    let failure = policy
        .retry_failure(|| async { Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionReset)) })
        .await
        .unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::CircuitOpen);
    assert_eq!(failure.attempts().len(), 2);
    let wait = failure.retry_in().expect("the breaker says when");
    assert!(wait > Duration::from_secs(29), "{wait:?}");
    let mut guard = TaskGuard::new(TaskGuardConfig::new());
    let verdict = guard.failed_call("search", "rust", &failure);
    assert_eq!(verdict.retry_in(), Some(wait));
}
