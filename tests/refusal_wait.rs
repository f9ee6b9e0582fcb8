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

static SLOW: tenacious::Throttle = tenacious::Throttle::new();

#[tokio::test(start_paused = true)]
async fn a_throttle_s_refusal_says_when_a_token_comes_and_that_the_queue_is_the_caller_s_own() {
    use http::StatusCode;
    use tenacious::HttpError;
    // A 429 turns the throttle on at its least rate: a token every 2 s.
    let on: Result<(), HttpError> = Policy::new()
        .max(1)
        .throttle(&SLOW)
        .retry(|| async { Err(HttpError::new(StatusCode::TOO_MANY_REQUESTS)) })
        .await;
    assert!(on.is_err());
    // A call that must start within 100 ms cannot wait for the token.
    let refused = Policy::new()
        .max(1)
        .deadline(Duration::from_millis(100))
        .throttle(&SLOW)
        .retry_failure(|| async { Ok::<(), io::Error>(()) })
        .await
        .unwrap_err();
    assert_eq!(refused.stop_reason(), StopReason::Deadline);
    let retry_in = refused.retry_in().expect("the throttle says when");
    assert!(
        retry_in > Duration::ZERO && retry_in <= Duration::from_secs(2),
        "{retry_in:?}"
    );
    let error = Refused::new(StopReason::Deadline);
    let hint = error.hint().unwrap();
    assert!(hint.contains("this process's own"), "{hint}");
}

static CLOSED: tenacious::Cooldown = tenacious::Cooldown::new();

#[tokio::test(start_paused = true)]
async fn a_cooldown_s_refusal_says_when_it_reopens() {
    use http::{HeaderMap, HeaderValue, StatusCode};
    use tenacious::HttpError;
    let mut headers = HeaderMap::new();
    headers.insert("retry-after", HeaderValue::from_static("30"));
    let limited = HttpError::from_parts(StatusCode::TOO_MANY_REQUESTS, &headers);
    let closed: Result<(), HttpError> = Policy::new()
        .max(1)
        .cooldown(&CLOSED)
        .retry(|| {
            let limited = limited.clone();
            async move { Err(limited) }
        })
        .await;
    assert!(closed.is_err());
    // A call that cannot wait 30 s is refused, and told when to come back.
    let refused = Policy::new()
        .max(1)
        .max_retry_after(Duration::from_secs(5))
        .cooldown(&CLOSED)
        .retry_failure(|| async { Ok::<(), io::Error>(()) })
        .await
        .unwrap_err();
    assert_eq!(refused.stop_reason(), StopReason::Cooldown);
    assert_eq!(refused.retry_in(), Some(Duration::from_secs(30)));
}

#[derive(Debug, Classify)]
enum StreamError {
    #[classify(transient)]
    Down,
    #[classify(transient)]
    Stalled,
}

impl From<tenacious::Elapsed> for StreamError {
    fn from(_: tenacious::Elapsed) -> Self {
        Self::Stalled
    }
}

static STREAM_OPEN: Breaker = Breaker::new()
    .min_throughput(2)
    .open_for(Duration::from_secs(15));

#[tokio::test(start_paused = true)]
async fn a_stream_whose_retry_an_open_breaker_refuses_says_when_to_come_back() {
    use futures_util::StreamExt;
    let policy = Policy::new()
        .max(5)
        .base(Duration::from_millis(10))
        .breaker(&STREAM_OPEN);
    // Every open fails: after two the breaker opens and refuses the retry.
    let out: Vec<Result<&str, _>> = policy
        .stream(|_| async {
            Err::<futures_util::stream::Empty<Result<&str, StreamError>>, _>(StreamError::Down)
        })
        .collect()
        .await;
    let failure = out.last().unwrap().as_ref().unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::CircuitOpen);
    let retry_in = failure.retry_in().expect("the breaker says when");
    assert!(
        retry_in > Duration::from_secs(14) && retry_in <= Duration::from_secs(15),
        "{retry_in:?}"
    );
}
