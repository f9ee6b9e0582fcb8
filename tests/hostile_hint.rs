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
