//! `#[retry(policy = NAME)]`: a `const` (or `static`) `Policy` shared by
//! many fns, the keys written beside it overriding its fields.
use std::cell::Cell;
use std::io;
use std::time::Duration;

use tenacious::{Failure, Jitter, Policy, StopReason, retry};

/// The provider's policy, written once.
const OPENAI: Policy = Policy::new()
    .max(5)
    .base(Duration::from_millis(1))
    .jitter(Jitter::None);

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

fn fail() -> Result<(), io::Error> {
    CALLS.with(|calls| calls.set(calls.get() + 1));
    Err(io::Error::from(io::ErrorKind::TimedOut))
}

#[retry(policy = OPENAI)]
fn chat() -> Result<(), Failure<io::Error>> {
    fail()
}

/// A `static` works too: the expansion reads it at compile time.
static ANTHROPIC: Policy = OPENAI.max(4);

#[retry(policy = ANTHROPIC)]
fn complete() -> Result<(), Failure<io::Error>> {
    fail()
}

#[retry(policy = OPENAI, max = 2)]
fn embed() -> Result<(), Failure<io::Error>> {
    fail()
}

#[test]
fn a_named_policy_applies_and_keys_beside_it_override_it() {
    CALLS.with(|c| c.set(0));
    let failure = chat().unwrap_err();
    assert_eq!(
        (failure.attempts().len(), failure.stop_reason()),
        (5, StopReason::Exhausted)
    );
    assert_eq!(failure.attempts()[0].delay, Some(Duration::from_millis(1)));
    let failure = embed().unwrap_err();
    assert_eq!(failure.attempts().len(), 2);
    assert_eq!(complete().unwrap_err().attempts().len(), 4);
    assert_eq!(CALLS.with(Cell::get), 11);
}

/// What a named policy holds beyond the keys a `#[retry]` reads at
/// compile time: its `timeout` bounds each attempt, its `deadline` the
/// call, its breaker is asked before the first attempt, as they would be
/// written as keys.
#[derive(Debug, PartialEq, tenacious::Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(transient)]
    Down,
    #[classify(refused)]
    Refused(tenacious::Refused),
}

impl From<tenacious::Elapsed> for ToolError {
    fn from(_: tenacious::Elapsed) -> Self {
        ToolError::Timeout
    }
}

const TIMED: Policy = Policy::new()
    .max(3)
    .base(Duration::from_millis(10))
    .jitter(Jitter::None)
    .timeout(Duration::from_secs(1));

#[retry(policy = TIMED)]
async fn hangs() -> Result<(), Failure<ToolError>> {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_named_policy_s_timeout_bounds_each_attempt() {
    let started = tokio::time::Instant::now();
    let failure = hangs().await.unwrap_err();
    assert_eq!(failure.attempts().len(), 3);
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(*failure.last(), ToolError::Timeout);
    // Three attempts of 1 s, and the waits of 10 and 20 ms.
    assert_eq!(started.elapsed(), Duration::from_millis(3030));
}

const BOUNDED: Policy = Policy::new()
    .max(100)
    .base(Duration::from_millis(400))
    .jitter(Jitter::None)
    .deadline(Duration::from_secs(2));

#[retry(policy = BOUNDED)]
async fn always_down() -> Result<(), Failure<ToolError>> {
    Err(ToolError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_named_policy_s_deadline_bounds_the_call() {
    let started = tokio::time::Instant::now();
    let failure = always_down().await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert!(
        started.elapsed() <= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(failure.attempts().len() < 5, "{}", failure.attempts().len());
}

static HEALTH: tenacious::Breaker = tenacious::Breaker::new()
    .min_throughput(1)
    .open_for(Duration::from_secs(60));

const GUARDED: Policy = Policy::new().max(1).breaker(&HEALTH);

#[retry(policy = GUARDED)]
async fn behind_the_breaker() -> Result<(), ToolError> {
    CALLS.with(|calls| calls.set(calls.get() + 1));
    Err(ToolError::Down)
}

#[tokio::test(start_paused = true)]
async fn a_named_policy_s_breaker_refuses_the_first_attempt_when_open() {
    CALLS.with(|c| c.set(0));
    // Failures open it.
    for _ in 0..5 {
        let _ = behind_the_breaker().await;
        if HEALTH.is_open() {
            break;
        }
    }
    assert!(HEALTH.is_open());
    let made = CALLS.with(Cell::get);
    let refused = behind_the_breaker().await;
    assert!(matches!(refused, Err(ToolError::Refused(_))), "{refused:?}");
    assert_eq!(CALLS.with(Cell::get), made, "no attempt while open");
}
