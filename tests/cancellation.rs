//! Cancellation returns what it took: calls dropped while they wait for a
//! throttle's token or a cooldown's turn (a caller's timeout, a
//! `select!`) give it back at once, so the next call waits for the next
//! token, not behind the calls that are gone. On tokio's paused clock.
use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode};
use tenacious::{Cooldown, HttpError, Policy, Throttle};
use tokio::time::Instant;

/// A 429, with a `Retry-After` of `seconds` if any.
fn too_many(seconds: Option<&'static str>) -> HttpError {
    let mut headers = HeaderMap::new();
    if let Some(seconds) = seconds {
        headers.insert("retry-after", HeaderValue::from_static(seconds));
    }
    HttpError::from_parts(StatusCode::TOO_MANY_REQUESTS, &headers)
}

/// A call of `policy` that succeeds: how long it waited before its
/// attempt.
async fn waits(policy: Policy) -> Duration {
    let asked = Instant::now();
    let mut started = None;
    let answer: Result<(), HttpError> = policy
        .retry(|| {
            started.get_or_insert_with(Instant::now);
            async { Ok(()) }
        })
        .await;
    answer.expect("admitted");
    started.unwrap() - asked
}

/// Twenty calls of `policy` that start waiting now, each dropped by its
/// caller's timeout of 100 ms.
async fn twenty_dropped(policy: Policy) {
    let calls: Vec<_> = (0..20)
        .map(|_| {
            tokio::spawn(tokio::time::timeout(
                Duration::from_millis(100),
                waits(policy),
            ))
        })
        .collect();
    for call in calls {
        assert!(call.await.unwrap().is_err(), "dropped while waiting");
    }
}

static THROTTLE: Throttle = Throttle::new();

#[tokio::test(start_paused = true)]
async fn calls_dropped_while_waiting_for_throttle_tokens_give_them_back() {
    let policy = Policy::new().max(1).throttle(&THROTTLE);
    // A 429 turns the throttle on, at its least rate: a token every 2 s.
    let answer: Result<(), HttpError> = policy.retry(|| async { Err(too_many(None)) }).await;
    assert!(answer.is_err());
    twenty_dropped(policy).await;
    let waited = waits(policy).await;
    assert!(
        waited <= Duration::from_secs(2),
        "the next call waited {waited:?}: the dropped calls kept their tokens"
    );
}

static COOLDOWN: Cooldown = Cooldown::new().spacing(Duration::from_secs(1));

#[tokio::test(start_paused = true)]
async fn calls_dropped_while_waiting_for_a_cooldown_give_their_turns_back() {
    let policy = Policy::new().max(1).cooldown(&COOLDOWN);
    // A 429 closes the cooldown for 5 s; its waiters go 1 s apart after.
    let answer: Result<(), HttpError> = policy.retry(|| async { Err(too_many(Some("5"))) }).await;
    assert!(answer.is_err());
    twenty_dropped(policy).await;
    let waited = waits(policy).await;
    assert!(
        waited <= Duration::from_secs(5),
        "the next call waited {waited:?}: the dropped calls kept their turns"
    );
}

/// A 503: a transient failure, counted against the breaker.
fn unavailable() -> HttpError {
    HttpError::from_parts(StatusCode::SERVICE_UNAVAILABLE, &HeaderMap::new())
}

static PROBED: tenacious::Breaker = tenacious::Breaker::new()
    .min_throughput(1)
    .open_for(Duration::from_secs(10));
static PROBE_WAIT: Cooldown = Cooldown::new();

#[tokio::test(start_paused = true)]
async fn a_call_dropped_while_it_holds_a_half_open_breaker_s_probe_slot_gives_it_back() {
    let breaker = Policy::new().max(1).breaker(&PROBED);
    // Opened by a failure, half-open 10 s later (and every probe slot
    // freed 10 s after that, whatever became of its probe).
    let answer: Result<(), HttpError> = breaker.retry(|| async { Err(unavailable()) }).await;
    assert!(answer.is_err());
    assert!(PROBED.is_open(), "{:?}", PROBED.state());
    tokio::time::sleep(Duration::from_millis(10_500)).await;
    // A 429 closes the cooldown for 5 s.
    let cooled = Policy::new().max(1).cooldown(&PROBE_WAIT);
    let answer: Result<(), HttpError> = cooled.retry(|| async { Err(too_many(Some("5"))) }).await;
    assert!(answer.is_err());
    // This call takes the probe slot, then waits for the cooldown, and is
    // dropped by its caller's timeout.
    let both = Policy::new().max(1).breaker(&PROBED).cooldown(&PROBE_WAIT);
    assert!(
        tokio::time::timeout(Duration::from_millis(100), waits(both))
            .await
            .is_err()
    );
    // The slot is free: the next call is the probe, at once (it was
    // refused `CircuitOpen` for the slot the dropped call kept).
    let probe = breaker
        .retry_failure(|| async { Ok::<(), HttpError>(()) })
        .await;
    assert!(probe.is_ok(), "{probe:?}");
    assert!(!PROBED.is_open());
}

static SPENT: tenacious::RetryBudget = tenacious::RetryBudget::with_capacity(10);

#[tokio::test(start_paused = true)]
async fn a_call_dropped_in_its_backoff_gives_its_retry_s_budget_token_back() {
    // No jitter: a full-jitter backoff of base 10 s is shorter than the
    // 100 ms below one run in a hundred, and the call then ended before
    // it was dropped (it failed CI once).
    let policy = Policy::new()
        .max(2)
        .base(Duration::from_secs(10))
        .jitter(tenacious::Jitter::None)
        .budget(&SPENT);
    let before = SPENT.balance();
    let call = policy.retry(|| async { Err::<(), _>(unavailable()) });
    // Dropped 100 ms into its backoff, after the retry took its token.
    assert!(
        tokio::time::timeout(Duration::from_millis(100), call)
            .await
            .is_err()
    );
    assert_eq!(SPENT.balance(), before, "the retry not made kept its token");
}

static HUNG: tenacious::Breaker = tenacious::Breaker::new()
    .min_throughput(1)
    .open_for(Duration::from_secs(10));

#[tokio::test(start_paused = true)]
async fn a_probe_dropped_during_its_attempt_gives_its_slot_back() {
    let policy = Policy::new().max(1).breaker(&HUNG);
    let answer: Result<(), HttpError> = policy.retry(|| async { Err(unavailable()) }).await;
    assert!(answer.is_err());
    tokio::time::sleep(Duration::from_millis(10_500)).await;
    // The probe's attempt hangs; its caller gives up after 100 ms.
    let hung = policy.retry_failure(std::future::pending::<Result<(), HttpError>>);
    assert!(
        tokio::time::timeout(Duration::from_millis(100), hung)
            .await
            .is_err()
    );
    // Its slot is back: the next call is the probe (it was refused
    // `CircuitOpen` until another `open_for` had passed).
    let probe = policy
        .retry_failure(|| async { Ok::<(), HttpError>(()) })
        .await;
    assert!(probe.is_ok(), "{probe:?}");
}
