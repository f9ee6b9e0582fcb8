//! A rate-limit window ends: a newer report replaces an older one, a
//! window expires once its reset has passed, and no report holds a call
//! longer than it says (nor longer than the policy's `max_retry_after`) —
//! a saturated reset included. On tokio's paused clock.
use std::io;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode};
use tenacious::{HttpError, Policy, Signals, StopReason, Throttle, rate_limits};
use tokio::time::Instant;

/// When a call made with `policy` started its first attempt, from now.
async fn starts_after(policy: Policy) -> Result<Duration, io::Error> {
    let asked = Instant::now();
    let mut started = None;
    policy
        .retry(|| {
            started.get_or_insert_with(Instant::now);
            async { Ok::<_, io::Error>(()) }
        })
        .await?;
    Ok(started.expect("the attempt ran") - asked)
}

static REPLACED: Throttle = Throttle::new();

#[tokio::test(start_paused = true)]
async fn a_newer_report_replaces_an_older_window() {
    // None left for an hour; then, a moment later, 50 left over a second.
    REPLACED.report(Signals::NONE.remaining(0).reset(Duration::from_secs(3600)));
    tokio::time::advance(Duration::from_millis(100)).await;
    REPLACED.report(Signals::NONE.remaining(50).reset(Duration::from_secs(1)));
    let policy = Policy::new().throttle(&REPLACED);
    let waited = starts_after(policy).await.unwrap();
    assert!(
        waited <= Duration::from_secs(1),
        "the next call waited {waited:?}: the hour-long window was not replaced"
    );
    // A call whose deadline is shorter than the old window is not refused.
    let short = policy.deadline(Duration::from_secs(2));
    let waited = starts_after(short).await.expect("not refused");
    assert!(waited <= Duration::from_secs(1), "{waited:?}");
}

static MIRRORED: Throttle = Throttle::new();

#[tokio::test(start_paused = true)]
async fn a_newer_report_of_the_bucket_replaces_an_older_one() {
    // The same with the bucket's size said: a mirror of it.
    let bucket = Signals::NONE.limit(60);
    MIRRORED.report(bucket.remaining(0).reset(Duration::from_secs(3600)));
    tokio::time::advance(Duration::from_millis(100)).await;
    MIRRORED.report(bucket.remaining(50).reset(Duration::from_secs(1)));
    let policy = Policy::new()
        .throttle(&MIRRORED)
        .deadline(Duration::from_secs(2));
    let waited = starts_after(policy).await.expect("not refused");
    assert!(waited <= Duration::from_secs(1), "{waited:?}");
}

static EXPIRED: Throttle = Throttle::new();

#[tokio::test(start_paused = true)]
async fn a_window_expires_when_its_reset_has_passed() {
    EXPIRED.report(Signals::NONE.remaining(0).reset(Duration::from_secs(3)));
    tokio::time::advance(Duration::from_secs(5)).await;
    let policy = Policy::new().throttle(&EXPIRED);
    for _ in 0..10 {
        let waited = starts_after(policy).await.unwrap();
        assert_eq!(waited, Duration::ZERO, "the window ended 2 s ago");
    }
}

static HELD: Throttle = Throttle::new();

#[tokio::test(start_paused = true)]
async fn a_window_holds_a_call_no_longer_than_its_reset() {
    // None left for 3 s: the next call waits those 3 s, no more.
    HELD.report(Signals::NONE.remaining(0).reset(Duration::from_secs(3)));
    let waited = starts_after(Policy::new().throttle(&HELD)).await.unwrap();
    assert!(
        (Duration::from_secs(3)..=Duration::from_millis(3100)).contains(&waited),
        "{waited:?}"
    );
}

/// The headers of a 429 saying none is left until a reset no integer holds.
fn saturated() -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        "x-ratelimit-remaining-requests",
        HeaderValue::from_static("0"),
    );
    headers.insert(
        "x-ratelimit-reset-requests",
        HeaderValue::from_static("99999999999999999999h"),
    );
    headers
}

static SATURATED: Throttle = Throttle::new();

#[tokio::test(start_paused = true)]
async fn a_saturated_reset_through_response_headers_does_not_stall_the_process() {
    let policy = Policy::new()
        .max(1)
        .throttle(&SATURATED)
        .max_retry_after(Duration::from_secs(60));
    // The 429 reaches the throttle through its error's signals.
    let answer: Result<(), HttpError> = policy
        .retry(|| async {
            Err(HttpError::from_parts(
                StatusCode::TOO_MANY_REQUESTS,
                &saturated(),
            ))
        })
        .await;
    assert!(answer.is_err());
    // And the same headers on a success, handed over by hand.
    SATURATED.report(rate_limits::from_headers(&saturated()));
    for _ in 0..5 {
        let asked = Instant::now();
        let mut started = None;
        let answer: Result<(), HttpError> = policy
            .deadline(Duration::from_secs(5))
            .retry(|| {
                started.get_or_insert_with(Instant::now);
                async { Ok(()) }
            })
            .await;
        let refused = answer.err().map(|e| e.to_string());
        assert_eq!(refused, None, "a call was refused");
        // The 429 turned the adaptive rate on, at its least (0.5 a
        // second): a call waits its turn at that rate, not for the reset.
        let waited = started.unwrap() - asked;
        assert!(
            waited <= Duration::from_secs(2),
            "a call waited {waited:?} on a reset no provider means"
        );
    }
}

static BOUNDED: Throttle = Throttle::new();

#[tokio::test(start_paused = true)]
async fn a_long_window_holds_a_call_no_longer_than_max_retry_after() {
    // A day-long window, honestly reported: a call waits at most its
    // policy's `max_retry_after`, then goes; one that cannot wait that
    // long before its deadline is refused with the wait it would need.
    BOUNDED.report(Signals::NONE.remaining(0).reset(Duration::from_secs(600)));
    let policy = Policy::new()
        .throttle(&BOUNDED)
        .max_retry_after(Duration::from_secs(30));
    let waited = starts_after(policy).await.unwrap();
    assert!(
        (Duration::from_secs(30)..=Duration::from_millis(30_100)).contains(&waited),
        "{waited:?}"
    );
    let refused = starts_after(policy.deadline(Duration::from_secs(5)))
        .await
        .unwrap_err();
    let refused = refused
        .get_ref()
        .and_then(|e| e.downcast_ref::<tenacious::Refused>())
        .copied();
    assert_eq!(refused.map(|r| r.reason()), Some(StopReason::Deadline));
}
