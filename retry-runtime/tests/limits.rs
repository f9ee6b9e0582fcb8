//! An error's own limits (`Classify::limits`): a variant that allows more
//! attempts, or fewer, than the policy, or backs off from its own base.
use std::time::Duration;

use tenacious_runtime::{Classify, ErrorClass, Jitter, Limits, Policy, StopReason};

#[derive(Debug, Clone, Copy, PartialEq)]
enum ApiError {
    /// Rate limited: worth six attempts whatever the policy says.
    Busy,
    /// Transient, backing off from 1 s.
    Slow,
    /// Transient, worth one retry at most.
    Flaky,
}

impl Classify for ApiError {
    fn classify(&self) -> ErrorClass {
        match self {
            ApiError::Busy => ErrorClass::RateLimited,
            ApiError::Slow | ApiError::Flaky => ErrorClass::Transient,
        }
    }
    fn limits(&self) -> Limits {
        match self {
            ApiError::Busy => Limits::NONE.max(6),
            ApiError::Slow => Limits::NONE.base(Duration::from_secs(1)),
            ApiError::Flaky => Limits::NONE.max(2),
        }
    }
}

const POLICY: Policy = Policy::new()
    .max(3)
    .base(Duration::from_millis(1))
    .cap(Duration::from_secs(4))
    .jitter(Jitter::None);

/// The failure of a call that always fails with `error`, on tokio's
/// paused clock: its attempts, why it stopped, the limit that did, and
/// the delays waited.
async fn attempts_of(error: ApiError) -> (usize, StopReason, Option<u32>, Vec<Duration>) {
    let mut delays = Vec::new();
    let failure = POLICY
        .retry_failure(|| async move { Err::<(), _>(error) })
        .await
        .unwrap_err();
    for record in failure.attempts() {
        delays.extend(record.delay);
    }
    (
        failure.attempts().len(),
        failure.stop_reason(),
        failure.limit(),
        delays,
    )
}

#[tokio::test(start_paused = true)]
async fn a_variant_raises_or_lowers_the_attempts_and_the_failure_says_so() {
    let (busy, stop, limit, _) = attempts_of(ApiError::Busy).await;
    assert_eq!((busy, stop, limit), (6, StopReason::Exhausted, Some(6)));
    let (flaky, _, limit, _) = attempts_of(ApiError::Flaky).await;
    assert_eq!((flaky, limit), (2, Some(2)));
}

#[tokio::test(start_paused = true)]
async fn a_variant_backs_off_from_its_own_base_under_the_policy_s_cap() {
    // 1 s then 2 s, under the 4 s cap, where the policy's base is 1 ms.
    let (n, stop, limit, delays) = attempts_of(ApiError::Slow).await;
    assert_eq!((n, stop, limit), (3, StopReason::Exhausted, None));
    assert_eq!(delays, [Duration::from_secs(1), Duration::from_secs(2)]);
}

#[tokio::test(start_paused = true)]
async fn the_retry_events_say_the_error_s_own_max() {
    let mut maxes = Vec::new();
    let _ = POLICY
        .retry_with(
            || async { Err::<(), _>(ApiError::Busy) },
            |_| true,
            |_, event| maxes.push(event.max),
        )
        .await;
    assert_eq!(maxes, [6; 5], "the policy says 3; the error, 6");
}
