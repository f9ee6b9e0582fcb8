//! Every attempt asks the guards, the only one included: a `max = 1` call
//! under an open breaker (or any guard that refuses) sends nothing, on
//! every path — `#[retry]` async and sync, the `Policy` loops, a retried
//! stream, the tower adapter and the reqwest middleware (in
//! `tests/reqwest_middleware.rs`). An error type that could not say it
//! was refused is a compile error
//! (`tests/ui/fail/guard_error_not_refusable.rs`).
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};

use futures_util::StreamExt;
use tenacious::{
    Admit, Breaker, Classify, Elapsed, Guard, NextAttempt, Outcome, Policy, Refused, StopReason,
    retry,
};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(refused)]
    Refused(Refused),
}

impl From<Elapsed> for ToolError {
    fn from(_: Elapsed) -> Self {
        Self::Timeout
    }
}

/// A guard that refuses every attempt, as an open breaker does.
#[derive(Debug)]
struct Shut;

impl Guard for Shut {
    fn admit(&self, _: &NextAttempt) -> Admit {
        Admit::Stop(StopReason::CircuitOpen)
    }
    fn observe(&self, _: &Outcome) {}
}

static SHUT: Shut = Shut;

/// Opens `breaker` with transient failures through `call`, then checks that
/// 1 000 more calls send nothing.
async fn open_then_refused<F, Fut>(breaker: &Breaker, sent: &AtomicU32, mut call: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<StopReason>>,
{
    while !breaker.is_open() {
        assert_eq!(call().await, None, "a failure before the breaker opened");
    }
    let before = sent.load(Ordering::Relaxed);
    for _ in 0..1_000 {
        assert_eq!(call().await, Some(StopReason::CircuitOpen));
    }
    assert_eq!(
        sent.load(Ordering::Relaxed),
        before,
        "a refused call sent nothing"
    );
}

static ASYNC_ONE: Breaker = Breaker::new().min_throughput(2);

#[retry(max = 1, breaker = ASYNC_ONE)]
async fn async_one(sent: &AtomicU32) -> Result<u32, ToolError> {
    sent.fetch_add(1, Ordering::Relaxed);
    Err(ToolError::Timeout)
}

#[tokio::test(start_paused = true)]
async fn an_async_fn_of_one_attempt_asks_its_breaker() {
    let sent = AtomicU32::new(0);
    open_then_refused(&ASYNC_ONE, &sent, || async {
        match async_one(&sent).await {
            Err(ToolError::Refused(refused)) => Some(refused.reason()),
            _ => None,
        }
    })
    .await;
}

static SYNC_ONE: Breaker = Breaker::new().min_throughput(2);

#[retry(max = 1, breaker = SYNC_ONE)]
fn sync_one(sent: &AtomicU32) -> Result<u32, ToolError> {
    sent.fetch_add(1, Ordering::Relaxed);
    Err(ToolError::Timeout)
}

#[tokio::test(start_paused = true)]
async fn a_sync_fn_of_one_attempt_asks_its_breaker() {
    let sent = AtomicU32::new(0);
    open_then_refused(&SYNC_ONE, &sent, || async {
        match sync_one(&sent) {
            Err(ToolError::Refused(refused)) => Some(refused.reason()),
            _ => None,
        }
    })
    .await;
}

#[retry(max = 1, guard = SHUT)]
async fn shut_async(sent: &AtomicU32) -> Result<u32, ToolError> {
    sent.fetch_add(1, Ordering::Relaxed);
    Ok(1)
}

#[retry(max = 1, guard = SHUT)]
fn shut_sync(sent: &AtomicU32) -> Result<u32, io::Error> {
    sent.fetch_add(1, Ordering::Relaxed);
    Ok(1)
}

#[tokio::test(start_paused = true)]
async fn a_guard_of_ones_own_is_asked_before_the_only_attempt() {
    let sent = AtomicU32::new(0);
    assert!(matches!(
        shut_async(&sent).await,
        Err(ToolError::Refused(_))
    ));
    let error = shut_sync(&sent).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::Other);
    assert_eq!(sent.load(Ordering::Relaxed), 0);
}

static POLICY_ONE: Breaker = Breaker::new().min_throughput(2);
static POLICY: Policy = Policy::new().max(1).breaker(&POLICY_ONE);

fn refusal(error: &io::Error) -> Option<StopReason> {
    error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<Refused>())
        .map(Refused::reason)
}

#[tokio::test(start_paused = true)]
async fn the_policy_loops_of_one_attempt_ask_their_breaker() {
    let sent = AtomicU32::new(0);
    open_then_refused(&POLICY_ONE, &sent, || async {
        let result: Result<(), io::Error> = POLICY
            .retry(|| async {
                sent.fetch_add(1, Ordering::Relaxed);
                Err(io::Error::from(io::ErrorKind::TimedOut))
            })
            .await;
        refusal(&result.unwrap_err())
    })
    .await;
    let before = sent.load(Ordering::Relaxed);
    let result: Result<(), io::Error> = POLICY.retry_blocking(|| {
        sent.fetch_add(1, Ordering::Relaxed);
        Ok(())
    });
    assert_eq!(refusal(&result.unwrap_err()), Some(StopReason::CircuitOpen));
    assert_eq!(sent.load(Ordering::Relaxed), before);
}

static STREAM_POLICY: Policy = Policy::new().max(1).guard(&SHUT);

#[tokio::test(start_paused = true)]
async fn a_stream_of_one_attempt_asks_its_guard() {
    let opened = AtomicU32::new(0);
    let out: Vec<Result<&str, _>> = STREAM_POLICY
        .stream(|_| {
            opened.fetch_add(1, Ordering::Relaxed);
            async { Ok::<_, ToolError>(futures_util::stream::iter(vec![Ok("a")])) }
        })
        .collect()
        .await;
    assert_eq!(
        opened.load(Ordering::Relaxed),
        0,
        "the stream was never opened"
    );
    assert_eq!(out.len(), 1);
    let failure = out[0].as_ref().unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::CircuitOpen);
    assert!(matches!(failure.last(), ToolError::Refused(_)));
}

#[tokio::test(start_paused = true)]
async fn the_tower_layer_of_one_attempt_asks_its_guard() {
    use tower::{Service, ServiceExt};
    static TOWER_POLICY: Policy = Policy::new().max(1).guard(&SHUT);
    let sent = std::sync::Arc::new(AtomicU32::new(0));
    let counted = sent.clone();
    let inner = tower::service_fn(move |_: http::Request<String>| {
        counted.fetch_add(1, Ordering::Relaxed);
        async { Ok::<_, io::Error>(http::Response::new(String::new())) }
    });
    let mut service = tenacious::tower::RetryService::new(inner, &TOWER_POLICY);
    let error = service
        .ready()
        .await
        .unwrap()
        .call(http::Request::new(String::new()))
        .await
        .unwrap_err();
    assert!(
        matches!(error, tenacious::tower::Error::GuardRefused(refused) if refused.reason() == StopReason::CircuitOpen)
    );
    assert_eq!(sent.load(Ordering::Relaxed), 0);
}

static CONST_ONE: Breaker = Breaker::new().min_throughput(2);
const BOUND_ONE: Policy = Policy::new().max(1).breaker(&CONST_ONE);

#[retry(policy = BOUND_ONE)]
async fn bound_one(sent: &AtomicU32) -> Result<u32, ToolError> {
    sent.fetch_add(1, Ordering::Relaxed);
    Err(ToolError::Timeout)
}

#[tokio::test(start_paused = true)]
async fn a_fn_bound_to_a_const_policy_of_one_attempt_asks_its_breaker() {
    let sent = AtomicU32::new(0);
    open_then_refused(&CONST_ONE, &sent, || async {
        match bound_one(&sent).await {
            Err(ToolError::Refused(refused)) => Some(refused.reason()),
            _ => None,
        }
    })
    .await;
}
