//! A hint the policy refuses changes no shared state: a `Retry-After` far
//! beyond `max_retry_after` stops the call with `HintTooLong`, and the
//! cooldown it closes reopens no later than a call of the policy would
//! have waited.
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode};
use tenacious::{Cooldown, Failure, HttpError, StopReason, retry};
use tokio::time::Instant;

fn now() -> std::time::Instant {
    Instant::now().into_std()
}

/// A 429 whose `Retry-After` saturates any integer type.
fn hostile() -> HttpError {
    let mut headers = HeaderMap::new();
    headers.insert(
        "retry-after",
        HeaderValue::from_static("99999999999999999999"),
    );
    HttpError::from_parts(StatusCode::TOO_MANY_REQUESTS, &headers)
}

static PROVIDER: Cooldown = Cooldown::new();

#[retry(max = 3, cooldown = PROVIDER, max_retry_after = "60s")]
async fn call(sent: &AtomicU32) -> Result<(), Failure<HttpError>> {
    sent.fetch_add(1, Ordering::Relaxed);
    Err(hostile())
}

#[tokio::test(start_paused = true)]
async fn a_refused_hint_closes_the_cooldown_no_longer_than_the_policy_waits() {
    let sent = AtomicU32::new(0);
    let failure = call(&sent).await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::HintTooLong);
    assert_eq!(sent.load(Ordering::Relaxed), 1);
    // Before, the cooldown recorded a closing about 584 years ahead.
    let reopens_in = PROVIDER.reopens_in_at(now());
    assert!(
        reopens_in <= Duration::from_secs(60),
        "closed for {reopens_in:?}, beyond the policy's max_retry_after"
    );
    // A day later it is open, and says so.
    tokio::time::advance(Duration::from_secs(86_400)).await;
    assert_eq!(PROVIDER.reopens_in_at(now()), Duration::ZERO);
}

static UNBOUNDED: Cooldown = Cooldown::new();

#[tokio::test(start_paused = true)]
async fn a_policy_that_honours_any_hint_still_closes_no_cooldown_past_a_year_and_an_operator_reopens_it()
 {
    // No `max_retry_after` to hold the hint to: the guard's own bound.
    let policy = tenacious::Policy::new()
        .max(1)
        .max_retry_after(Duration::MAX)
        .cooldown(&UNBOUNDED);
    let answer: Result<(), HttpError> = policy.retry(|| async { Err(hostile()) }).await;
    assert!(answer.is_err());
    let reopens_in = UNBOUNDED.reopens_in_at(now());
    assert!(
        reopens_in > Duration::from_secs(86_400) && reopens_in <= Duration::from_secs(366 * 86_400),
        "closed for {reopens_in:?}"
    );
    // An operator reopens it: the next call goes at once.
    UNBOUNDED.reopen();
    assert_eq!(UNBOUNDED.reopens_in_at(now()), Duration::ZERO);
    let started = Instant::now();
    let answer: Result<(), HttpError> = policy.retry(|| async { Ok(()) }).await;
    assert!(answer.is_ok());
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn an_operator_resets_a_breaker_a_throttle_and_a_budget_by_hand() {
    use tenacious::{Breaker, BreakerState, RetryBudget, Throttle};
    static BREAKER: Breaker = Breaker::new().min_throughput(1);
    static THROTTLE: Throttle = Throttle::new();
    static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    let unavailable = || HttpError::new(StatusCode::SERVICE_UNAVAILABLE);
    let policy = tenacious::Policy::new()
        .max(3)
        .base(Duration::ZERO)
        .breaker(&BREAKER)
        .throttle(&THROTTLE)
        .budget(&BUDGET);
    let answer: Result<(), HttpError> = policy.retry(|| async { Err(unavailable()) }).await;
    assert!(answer.is_err());
    assert_eq!(BREAKER.state_at(now()), BreakerState::Open);
    let spend = tenacious::Policy::new()
        .max(2)
        .base(Duration::ZERO)
        .budget(&BUDGET);
    let answer: Result<(), HttpError> = spend.retry(|| async { Err(unavailable()) }).await;
    assert!(answer.is_err());
    assert!(BUDGET.balance() < 10);
    let limited: Result<(), HttpError> = tenacious::Policy::new()
        .max(1)
        .throttle(&THROTTLE)
        .retry(|| async { Err(HttpError::new(StatusCode::TOO_MANY_REQUESTS)) })
        .await;
    assert!(limited.is_err());
    assert!(THROTTLE.stats().rate.is_some());
    BREAKER.reset();
    THROTTLE.reset();
    BUDGET.refill();
    assert_eq!(BREAKER.state_at(now()), BreakerState::Closed);
    assert_eq!(BREAKER.admits_in(), Duration::ZERO);
    assert_eq!(THROTTLE.stats().rate, None);
    assert_eq!(BUDGET.balance(), 10);
    // The next call goes at once.
    let started = Instant::now();
    let answer: Result<(), HttpError> = policy.retry(|| async { Ok(()) }).await;
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(started.elapsed(), Duration::ZERO);
}
