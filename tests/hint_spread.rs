//! A zero, past or skewed `Retry-After` never makes retries lockstep: the
//! hint is a floor under each caller's own backoff, so a fleet told "retry
//! now" spreads out instead of hammering the server in one instant.
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, SystemTime};

use tenacious::{Attempt, HttpError, retry, seed_jitter};
use tokio::time::Instant;

thread_local! {
    /// When each call's second attempt started, after the first was told
    /// `Retry-After: 0`.
    static RETRIES: RefCell<Vec<Instant>> = const { RefCell::new(Vec::new()) };
}

/// A 429 with the given headers, as a provider sends it.
fn too_many_requests(headers: &[(&str, &str)]) -> HttpError {
    let mut map = http::HeaderMap::new();
    for (name, value) in headers {
        map.insert(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    HttpError::from_parts_at(http::StatusCode::TOO_MANY_REQUESTS, &map, SystemTime::now())
}

#[retry(max = 2, base = "1s")]
async fn call(headers: &'static [(&'static str, &'static str)]) -> Result<(), HttpError> {
    if Attempt::current().unwrap().number() == 1 {
        return Err(too_many_requests(headers));
    }
    RETRIES.with(|r| r.borrow_mut().push(Instant::now()));
    Ok(())
}

/// Runs 100 concurrent calls whose first attempt is refused with
/// `headers`; returns how far apart their retries start, and how many
/// distinct instants they start at.
async fn spread(headers: &'static [(&'static str, &'static str)]) -> (Duration, usize) {
    RETRIES.with(|r| r.borrow_mut().clear());
    let start = Instant::now();
    let local = tokio::task::LocalSet::new();
    let done = Rc::new(RefCell::new(0));
    for _ in 0..100 {
        let done = Rc::clone(&done);
        local.spawn_local(async move {
            call(headers).await.unwrap();
            *done.borrow_mut() += 1;
        });
    }
    local.await;
    assert_eq!(*done.borrow(), 100);
    let starts = RETRIES.with(|r| r.borrow().clone());
    let first = starts.iter().min().unwrap();
    let last = starts.iter().max().unwrap();
    assert!(*first >= start);
    let distinct: std::collections::HashSet<_> = starts.iter().collect();
    (*last - *first, distinct.len())
}

#[tokio::test(start_paused = true)]
async fn a_hundred_callers_told_retry_after_zero_spread_over_the_backoff_window() {
    seed_jitter(11);
    for headers in [
        &[("retry-after", "0")][..],
        &[("retry-after-ms", "0")][..],
        // A date already past, as from a server whose clock is behind.
        &[("retry-after", "Thu, 01 Jan 1970 00:00:00 GMT")][..],
    ] {
        let (width, distinct) = spread(headers).await;
        // Full jitter over the first window, `base` = 1 s.
        assert!(
            width >= Duration::from_millis(900) && width <= Duration::from_secs(1),
            "{headers:?}: retries spread over {width:?}"
        );
        assert!(
            distinct >= 90,
            "{headers:?}: only {distinct} distinct start times"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_hint_is_waited_in_full_then_spread_by_the_backoff() {
    seed_jitter(12);
    let before = Instant::now();
    // `retry-after-ms: 0` beside a minute's `Retry-After`: the longer holds.
    let (width, _) = spread(&[("retry-after", "60"), ("retry-after-ms", "0")]).await;
    let first = RETRIES.with(|r| *r.borrow().iter().min().unwrap());
    assert!(first - before >= Duration::from_secs(60));
    assert!(width >= Duration::from_millis(900), "{width:?}");
}
