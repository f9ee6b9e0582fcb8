//! `#[retry(guard = NAME)]`: the fn's attempts are paced by a shared
//! `Guard` as `Policy::guard`'s are — asked before each attempt, told
//! every outcome, able to delay an attempt or stop the call — on async and
//! sync fns, `&mut self` methods and fns returning `Failure<E>`.
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tenacious::{
    Admit, AttemptResult, Classify, Failure, Guard, NextAttempt, Outcome, StopReason, retry,
};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Classify)]
enum ToolError {
    #[classify(transient)]
    Reset,
}

/// Lets `allowed` attempts through, across every call naming it, then
/// stops retries; delays each retry by 50 ms; records the outcomes.
#[derive(Debug)]
struct Quota {
    allowed: AtomicU32,
    outcomes: Mutex<Vec<(u32, bool)>>,
}

impl Quota {
    const fn new(allowed: u32) -> Self {
        Self {
            allowed: AtomicU32::new(allowed),
            outcomes: Mutex::new(Vec::new()),
        }
    }

    fn outcomes(&self) -> Vec<(u32, bool)> {
        self.outcomes.lock().unwrap().clone()
    }
}

impl Guard for Quota {
    fn admit(&self, next: &NextAttempt) -> Admit {
        if next.recheck {
            return Admit::Go;
        }
        let taken = self
            .allowed
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        match (taken, next.attempt) {
            (Err(_), 2..) => Admit::Stop(StopReason::Guard),
            (_, ..=1) => Admit::Go,
            (Ok(_), _) => Admit::Wait(Duration::from_millis(50)),
        }
    }

    fn observe(&self, outcome: &Outcome) {
        let success = outcome.result == AttemptResult::Success;
        self.outcomes
            .lock()
            .unwrap()
            .push((outcome.attempt, success));
    }
}

static ASYNC_QUOTA: Quota = Quota::new(3);

#[retry(max = 10, base = "10ms", jitter = "none", guard = ASYNC_QUOTA)]
async fn flaky(calls: &AtomicU32) -> Result<u32, ToolError> {
    calls.fetch_add(1, Ordering::Relaxed);
    Err(ToolError::Reset)
}

#[tokio::test(start_paused = true)]
async fn an_async_fn_is_paced_and_stopped_by_its_guard() {
    let calls = AtomicU32::new(0);
    let start = Instant::now();
    assert_eq!(flaky(&calls).await, Err(ToolError::Reset));
    // Three attempts taken from the quota (the first is always made), then
    // the guard stops the call; each retry waited its backoff and 50 ms.
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    assert_eq!(
        start.elapsed(),
        Duration::from_millis((10 + 50) + (20 + 50))
    );
    assert_eq!(ASYNC_QUOTA.outcomes(), [(1, false), (2, false), (3, false)]);
}

static FAILURE_QUOTA: Quota = Quota::new(2);

#[retry(max = 5, base = "1ms", guard = FAILURE_QUOTA, deadline = "10s")]
async fn recorded() -> Result<(), Failure<ToolError>> {
    Err(ToolError::Reset)
}

#[tokio::test(start_paused = true)]
async fn a_failure_says_the_guard_stopped_the_call() {
    let failure = recorded().await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Guard);
    assert_eq!(failure.attempts().len(), 2);
}

static SYNC_QUOTA: Quota = Quota::new(10);

struct Client {
    answers: Vec<Result<u32, ToolError>>,
}

impl Client {
    #[retry(max = 4, base = "1ms", guard = SYNC_QUOTA)]
    fn call(&mut self) -> Result<u32, ToolError> {
        self.answers.remove(0)
    }
}

#[test]
fn a_sync_method_is_asked_about_and_its_guard_hears_the_success() {
    let mut client = Client {
        answers: vec![Err(ToolError::Reset), Ok(5)],
    };
    assert_eq!(client.call(), Ok(5));
    assert_eq!(SYNC_QUOTA.outcomes(), [(1, false), (2, true)]);
}
