//! A half-open breaker's probe is its own: a retry that took the probe slot
//! and then waited for a cooldown is the probe when the wait ends (it used
//! to find its own slot taken, stop with `CircuitOpen` and keep the slot,
//! so no probe went out for another `open_for`).
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode};
use tenacious::{Breaker, BreakerState, Cooldown, Failure, HttpError, retry};
use tokio::time::Instant;

fn now() -> std::time::Instant {
    Instant::now().into_std()
}

/// A 429 asking to wait `secs` seconds.
fn limited(secs: &'static str) -> HttpError {
    let mut headers = HeaderMap::new();
    headers.insert("retry-after", HeaderValue::from_static(secs));
    HttpError::from_parts(StatusCode::TOO_MANY_REQUESTS, &headers)
}

fn unavailable() -> HttpError {
    HttpError::from_parts(StatusCode::SERVICE_UNAVAILABLE, &HeaderMap::new())
}

static PROBED: Breaker = Breaker::new()
    .min_throughput(2)
    .open_for(Duration::from_secs(10));
static PROBED_LIMIT: Cooldown = Cooldown::new();

#[retry(max = 1, breaker = PROBED)]
async fn down() -> Result<(), Failure<HttpError>> {
    Err(unavailable())
}

/// Its first attempt runs 11 s and is answered 429 `Retry-After: 1`; its
/// retry succeeds.
#[retry(max = 3, base = "10ms", breaker = PROBED, cooldown = PROBED_LIMIT)]
async fn slow_then_ok(sent: &AtomicU32) -> Result<(), Failure<HttpError>> {
    if sent.fetch_add(1, Ordering::Relaxed) == 0 {
        tokio::time::sleep(Duration::from_secs(11)).await;
        return Err(limited("1"));
    }
    Ok(())
}

/// Another call's 429, closing the cooldown for 5 s.
#[retry(max = 1, cooldown = PROBED_LIMIT)]
async fn close_probed() -> Result<(), Failure<HttpError>> {
    Err(limited("5"))
}

#[tokio::test(start_paused = true)]
async fn a_retry_holding_the_probe_slot_through_a_cooldown_is_the_probe() {
    let sent = Arc::new(AtomicU32::new(0));
    let call = tokio::spawn({
        let sent = Arc::clone(&sent);
        async move { slow_then_ok(&sent).await }
    });
    // Its first attempt is under way: the breaker opens behind it.
    tokio::task::yield_now().await;
    assert_eq!(sent.load(Ordering::Relaxed), 1);
    for _ in 0..2 {
        let _ = down().await;
    }
    assert_eq!(PROBED.state_at(now()), BreakerState::Open);
    // At 10.5 s another call closes the cooldown until 15.5 s. At 11 s
    // the breaker is half-open: the retry takes the probe slot, and waits
    // for the cooldown, past its own 1 s.
    tokio::time::advance(Duration::from_millis(10_500)).await;
    let _ = close_probed().await;
    let result = call.await.unwrap();
    assert!(result.is_ok(), "the probe was refused: {result:?}");
    assert_eq!(sent.load(Ordering::Relaxed), 2);
    assert_eq!(PROBED.state_at(now()), BreakerState::Closed);
}
