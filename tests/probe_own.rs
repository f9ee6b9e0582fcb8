//! A half-open breaker's probe is its own, and after any guard's wait the
//! whole chain is asked again: a retry that took the probe slot and then
//! waited for a cooldown is the probe when the wait ends (it used to find
//! its own slot taken, stop with `CircuitOpen` and keep the slot, so no
//! probe went out for another `open_for`); a first attempt queued behind a
//! cooldown, or in a throttle's queue, is refused when the breaker opened
//! meanwhile (it used to be sent).
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode};
use tenacious::{
    Breaker, BreakerState, Cooldown, Failure, HttpError, Policy, StopReason, Throttle, retry,
};
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

static QUEUED: Breaker = Breaker::new()
    .min_throughput(2)
    .open_for(Duration::from_secs(60));
static QUEUED_LIMIT: Cooldown = Cooldown::new();

#[retry(max = 1, cooldown = QUEUED_LIMIT)]
async fn close_the_cooldown() -> Result<(), Failure<HttpError>> {
    Err(limited("5"))
}

#[retry(max = 1, breaker = QUEUED)]
async fn queued_down() -> Result<(), Failure<HttpError>> {
    Err(unavailable())
}

#[retry(max = 1, breaker = QUEUED, cooldown = QUEUED_LIMIT)]
async fn queued(sent: &AtomicU32) -> Result<(), Failure<HttpError>> {
    sent.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_first_attempt_queued_behind_a_cooldown_asks_the_breaker_again() {
    let _ = close_the_cooldown().await;
    assert_eq!(QUEUED_LIMIT.reopens_in_at(now()), Duration::from_secs(5));
    let sent = Arc::new(AtomicU32::new(0));
    let call = tokio::spawn({
        let sent = Arc::clone(&sent);
        async move { queued(&sent).await }
    });
    // It waits for the cooldown; meanwhile the breaker opens.
    tokio::time::advance(Duration::from_secs(1)).await;
    for _ in 0..2 {
        let _ = queued_down().await;
    }
    assert_eq!(QUEUED.state_at(now()), BreakerState::Open);
    let failure = call.await.unwrap().unwrap_err();
    assert_eq!(sent.load(Ordering::Relaxed), 0, "sent past an open breaker");
    assert_eq!(failure.stop_reason(), StopReason::CircuitOpen);
    assert!(failure.attempts().is_empty());
}

static IN_LINE: Breaker = Breaker::new()
    .min_throughput(2)
    .open_for(Duration::from_secs(60));
static IN_LINE_RATE: Throttle = Throttle::new();

/// Calls queued in a throttle's line at its least rate (one every 2 s):
/// the breaker opens while they wait, and none of them is sent; each gives
/// its token back.
#[tokio::test(start_paused = true)]
async fn first_attempts_queued_in_a_throttle_ask_the_breaker_again() {
    static CUT: Policy = Policy::new().max(1).throttle(&IN_LINE_RATE);
    static DOWN: Policy = Policy::new().max(1).breaker(&IN_LINE);
    static LINE: Policy = Policy::new()
        .max(1)
        .breaker(&IN_LINE)
        .throttle(&IN_LINE_RATE);
    // A 429 without headers: the throttle is on, at its least rate.
    let _ = CUT
        .retry_failure(|| async { Err::<(), _>(HttpError::new(StatusCode::TOO_MANY_REQUESTS)) })
        .await;
    let sent = Arc::new(AtomicU32::new(0));
    let calls: Vec<_> = (0..5)
        .map(|_| {
            let sent = Arc::clone(&sent);
            tokio::spawn(async move {
                LINE.retry_failure(|| {
                    sent.fetch_add(1, Ordering::Relaxed);
                    async { Ok::<(), HttpError>(()) }
                })
                .await
            })
        })
        .collect();
    // They queue; the breaker opens before the second one's turn.
    tokio::task::yield_now().await;
    let before = sent.load(Ordering::Relaxed);
    assert!(before <= 1, "{before} went at once");
    for _ in 0..2 {
        let _ = DOWN
            .retry_failure(|| async { Err::<(), _>(unavailable()) })
            .await;
    }
    assert_eq!(IN_LINE.state_at(now()), BreakerState::Open);
    let mut refused = 0;
    for call in calls {
        if let Err(failure) = call.await.unwrap() {
            assert_eq!(failure.stop_reason(), StopReason::CircuitOpen);
            assert!(failure.attempts().is_empty());
            refused += 1;
        }
    }
    assert_eq!(
        sent.load(Ordering::Relaxed),
        before,
        "a queued call was sent past the open breaker"
    );
    assert_eq!(refused, 5 - before);
    // The tokens they took in line came back: a call now waits for one
    // token at the least rate, not behind the five the line took.
    let start = Instant::now();
    CUT.retry(|| async { Ok::<(), HttpError>(()) })
        .await
        .unwrap();
    let waited = start.elapsed();
    assert!(waited <= Duration::from_secs(2), "waited {waited:?}");
}

static BLOCKING: Breaker = Breaker::new()
    .min_throughput(2)
    .open_for(Duration::from_secs(60));
static BLOCKING_LIMIT: Cooldown = Cooldown::new();

/// The second test's call on a blocking loop (the system's clock): a first
/// attempt queued 1 s behind a cooldown, while another thread opens the
/// breaker.
#[test]
fn a_blocking_first_attempt_queued_behind_a_cooldown_asks_the_breaker_again() {
    static CLOSE: Policy = Policy::new().max(1).cooldown(&BLOCKING_LIMIT);
    static DOWN: Policy = Policy::new().max(1).breaker(&BLOCKING);
    static QUEUED: Policy = Policy::new()
        .max(1)
        .breaker(&BLOCKING)
        .cooldown(&BLOCKING_LIMIT);
    let _ = CLOSE.retry_blocking_failure(|| Err::<(), _>(limited("1")));
    let sent = AtomicU32::new(0);
    let stopped = std::thread::scope(|scope| {
        let call = scope.spawn(|| {
            QUEUED
                .retry_blocking_failure(|| {
                    sent.fetch_add(1, Ordering::Relaxed);
                    Ok::<(), HttpError>(())
                })
                .map_err(|failure| failure.stop_reason())
        });
        std::thread::sleep(Duration::from_millis(100));
        for _ in 0..2 {
            let _ = DOWN.retry_blocking_failure(|| Err::<(), _>(unavailable()));
        }
        assert_eq!(BLOCKING.state(), BreakerState::Open);
        call.join().unwrap().unwrap_err()
    });
    assert_eq!(sent.load(Ordering::Relaxed), 0, "sent past an open breaker");
    assert_eq!(stopped, StopReason::CircuitOpen);
}
