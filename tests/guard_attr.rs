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
    #[classify(refused)]
    Refused(tenacious::Refused),
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

/// A tool error that says when a guard refused the call before it began.
#[derive(Debug)]
enum LimitedError {
    RateLimited(Duration),
    Refused(tenacious::Refused),
}

impl Classify for LimitedError {
    fn classify(&self) -> tenacious::ErrorClass {
        match self {
            LimitedError::RateLimited(_) => tenacious::ErrorClass::RateLimited,
            LimitedError::Refused(refused) => refused.classify(),
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            LimitedError::RateLimited(hint) => Some(*hint),
            LimitedError::Refused(_) => None,
        }
    }
    fn refused() -> Option<fn(tenacious::Refused) -> Self> {
        Some(LimitedError::Refused)
    }
}

impl tenacious::Refusable for LimitedError {}

static PROVIDER: tenacious::Cooldown = tenacious::Cooldown::new();

/// Answers 429 with a 2 s hint the first time, then succeeds.
#[retry(max = 3, base = "10ms", jitter = "none", cooldown = PROVIDER)]
async fn chat(calls: &AtomicU32) -> Result<u32, LimitedError> {
    match calls.fetch_add(1, Ordering::Relaxed) {
        0 => Err(LimitedError::RateLimited(Duration::from_secs(2))),
        n => Ok(n),
    }
}

/// One attempt, answered 429 with a 2 s hint: closes the cooldown.
#[retry(max = 1, cooldown = PROVIDER)]
async fn limited() -> Result<(), LimitedError> {
    Err(LimitedError::RateLimited(Duration::from_secs(2)))
}

/// Held to a short `max_retry_after`: it cannot wait out a long cooldown.
#[retry(max = 3, max_retry_after = "1s", cooldown = PROVIDER)]
async fn impatient(calls: &AtomicU32) -> Result<(), Failure<LimitedError>> {
    calls.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_cooldown_closed_by_one_fns_429_holds_every_fn_naming_it() {
    let start = Instant::now();
    let calls = AtomicU32::new(0);
    let other = AtomicU32::new(0);
    let (first, second) = tokio::join!(chat(&calls), async {
        // Starts once the first call's 429 closed the cooldown.
        tokio::time::sleep(Duration::from_millis(1)).await;
        let out = chat(&other).await;
        (out, start.elapsed())
    });
    assert_eq!(first.unwrap(), 1, "retried after the hint");
    // The other call's first attempt waited for the cooldown to reopen
    // (2 s after the 429), one release spacing after the first call's
    // retry; its own first answer is a 429 again, which the second
    // closing waits out.
    let (second, done) = second;
    assert_eq!(second.unwrap(), 1);
    assert!(done >= Duration::from_secs(4), "{done:?}");
    // A fn that cannot wait for a closed cooldown is refused before its
    // first attempt.
    let blocked = AtomicU32::new(0);
    assert!(limited().await.is_err());
    let failure = impatient(&blocked).await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Cooldown);
    assert_eq!(blocked.load(Ordering::Relaxed), 0, "no attempt");
}
