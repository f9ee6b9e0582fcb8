//! Per-variant limits in the derive: `#[classify(rate_limited, max = 6)]`,
//! `#[classify(transient, base = "1s")]` and `#[classify(transient,
//! not_sent)]`, read by `#[retry]` fns on tokio's paused clock.
use std::cell::Cell;
use std::time::Duration;

use tenacious::{Classify, ErrorClass, Failure, Limits, StopReason, retry};

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum ApiError {
    /// The provider's quota window: worth six attempts, whatever the
    /// call's policy says.
    #[classify(rate_limited, max = 6)]
    Busy,
    /// A slow dependency: back off from 1 s, not the policy's base.
    #[classify(transient, base = "1s")]
    Slow,
    /// Worth one retry at most, backing off from 50 ms.
    #[classify(transient, max = 2, base = "50ms")]
    Flaky,
    /// The connection was refused: nothing reached the server.
    #[classify(transient, not_sent)]
    Refused,
    /// The connection dropped after the request was written.
    #[classify(transient)]
    Reset,
    #[classify(fatal)]
    Denied,
}

/// A wrapper that forwards to `ApiError`, with a lower max of its own.
#[derive(Debug, Classify)]
enum Wrapped {
    #[classify(transparent, max = 4)]
    Capped(ApiError),
    #[classify(transparent)]
    Plain(ApiError),
}

/// A struct classified by its own attribute.
#[derive(Debug, Classify)]
#[classify(transient, max = 5, not_sent)]
struct DnsError;

#[test]
fn the_keys_become_the_error_s_limits() {
    assert_eq!(ApiError::Busy.limits(), Limits::NONE.max(6));
    assert_eq!(
        ApiError::Slow.limits(),
        Limits::NONE.base(Duration::from_secs(1))
    );
    assert_eq!(
        ApiError::Flaky.limits(),
        Limits::NONE.max(2).base(Duration::from_millis(50))
    );
    assert!(ApiError::Reset.limits().is_none());
    assert!(ApiError::Denied.limits().is_none());
    assert!(ApiError::Refused.not_sent());
    assert!(!ApiError::Reset.not_sent());
    assert!(!ApiError::Busy.not_sent());
    assert_eq!(DnsError.limits(), Limits::NONE.max(5));
    assert!(DnsError.not_sent());
    assert_eq!(DnsError.classify(), ErrorClass::Transient);
}

#[test]
fn a_transparent_case_s_keys_override_the_inner_error_s() {
    // Its own max over the inner's; the inner's base kept.
    assert_eq!(
        Wrapped::Capped(ApiError::Flaky).limits(),
        Limits::NONE.max(4).base(Duration::from_millis(50))
    );
    assert_eq!(Wrapped::Capped(ApiError::Busy).limits().get_max(), Some(4));
    // Without keys it forwards: limits and not_sent.
    assert_eq!(Wrapped::Plain(ApiError::Busy).limits(), Limits::NONE.max(6));
    assert!(Wrapped::Plain(ApiError::Refused).not_sent());
    assert!(!Wrapped::Capped(ApiError::Reset).not_sent());
}

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

fn calls() -> u32 {
    CALLS.with(Cell::take)
}

#[retry(max = 3, base = "1ms", jitter = "none")]
async fn always(error: ApiError) -> Result<(), Failure<ApiError>> {
    CALLS.with(|calls| calls.set(calls.get() + 1));
    Err(error)
}

#[tokio::test(start_paused = true)]
async fn a_variant_s_max_raises_or_lowers_the_fn_s_and_the_failure_says_so() {
    let failure = always(ApiError::Busy).await.unwrap_err();
    assert_eq!(calls(), 6);
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(failure.limit(), Some(6));

    let failure = always(ApiError::Flaky).await.unwrap_err();
    assert_eq!(calls(), 2);
    assert_eq!(failure.limit(), Some(2));

    // Without a max of its own, the fn's: and `limit()` says it was not
    // the error's.
    let failure = always(ApiError::Reset).await.unwrap_err();
    assert_eq!(calls(), 3);
    assert_eq!(failure.limit(), None);
}

#[tokio::test(start_paused = true)]
async fn a_variant_s_base_sets_the_backoff_after_it() {
    let started = tokio::time::Instant::now();
    let failure = always(ApiError::Slow).await.unwrap_err();
    assert_eq!(calls(), 3);
    let delays: Vec<Duration> = failure.attempts().iter().filter_map(|a| a.delay).collect();
    // 1 s then 2 s, where the fn's base is 1 ms (no jitter).
    assert_eq!(delays, [Duration::from_secs(1), Duration::from_secs(2)]);
    assert_eq!(started.elapsed(), Duration::from_secs(3));
}

#[retry(max = 3, base = "1ms", idempotent = false)]
async fn charge(error: ApiError) -> Result<(), Failure<ApiError>> {
    CALLS.with(|calls| calls.set(calls.get() + 1));
    Err(error)
}

#[tokio::test(start_paused = true)]
async fn not_sent_lets_a_call_that_is_not_idempotent_retry() {
    let failure = charge(ApiError::Refused).await.unwrap_err();
    assert_eq!(calls(), 3);
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);

    let failure = charge(ApiError::Reset).await.unwrap_err();
    assert_eq!(calls(), 1);
    assert_eq!(failure.stop_reason(), StopReason::NotIdempotent);
}

fn by_status(status: &u16) -> ErrorClass {
    if *status == 429 {
        ErrorClass::RateLimited
    } else {
        ErrorClass::Transient
    }
}

/// A case classified by a fn: its keys hold whatever class the fn gives.
#[derive(Debug, Classify)]
enum Coded {
    #[classify(with = by_status, max = 5, base = "2s")]
    Status(u16),
    #[classify(transient, not_sent)]
    Dns,
}

#[test]
fn a_with_case_keeps_its_keys_whatever_class_the_fn_gives() {
    let limits = Limits::NONE.max(5).base(Duration::from_secs(2));
    assert_eq!(Coded::Status(429).classify(), ErrorClass::RateLimited);
    assert_eq!(Coded::Status(429).limits(), limits);
    assert_eq!(Coded::Status(503).limits(), limits);
    assert!(!Coded::Status(503).not_sent());
    assert!(Coded::Dns.not_sent());
    assert!(Coded::Dns.limits().is_none());
}
