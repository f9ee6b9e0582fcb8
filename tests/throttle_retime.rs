//! Queued calls move up when the rate rises: a throttle re-times the calls
//! waiting for its tokens instead of holding each to the slot it was given
//! at the rate of the moment it asked. On tokio's paused clock.
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::StatusCode;
use tenacious::{HttpError, Policy, Signals, Throttle};
use tokio::time::Instant;

static CUT: Throttle = Throttle::new();

#[tokio::test(start_paused = true)]
async fn calls_queued_at_the_least_rate_move_up_when_the_headers_raise_it() {
    const LIMITED: Policy = Policy::new().max(1).throttle(&CUT);
    // A 429 without headers: on, at its least rate, one call every 2 s.
    let _ = LIMITED
        .retry(|| async { Err::<(), _>(HttpError::new(StatusCode::TOO_MANY_REQUESTS)) })
        .await;
    assert!(
        CUT.stats().rate.is_some_and(|rate| rate <= 0.5 + 1e-9),
        "{:?}",
        CUT.stats()
    );
    // Twenty calls queue at once; each answer carries the provider's
    // headers: 240 a minute, most of it left (4 a second).
    let t0 = Instant::now();
    let starts = Arc::new(Mutex::new(Vec::new()));
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let starts = Arc::clone(&starts);
            tokio::spawn(async move {
                LIMITED
                    .retry(|| {
                        starts.lock().unwrap().push(t0.elapsed());
                        CUT.report(
                            Signals::NONE
                                .limit(240)
                                .remaining(200)
                                .reset(Duration::from_secs(10)),
                        );
                        async { Ok::<_, io::Error>(()) }
                    })
                    .await
            })
        })
        .collect();
    for call in calls {
        call.await.unwrap().unwrap();
    }
    let starts = starts.lock().unwrap().clone();
    let last = starts.iter().max().copied().unwrap_or_default();
    // At 0.5 a second the twentieth would start after 38 s; once the first
    // answers say 4 a second, the rest start a quarter second apart.
    assert!(
        last < Duration::from_secs(15),
        "the last of 20 queued calls started after {last:?}: {starts:?}"
    );
}

static RETRIES: Throttle = Throttle::new();

/// A retry decided while the throttle is at its least rate reserves no
/// token at that rate: it waits for its token in the throttle's queue,
/// after its backoff, and moves up when the headers raise the rate. Before,
/// each retry reserved a token at the decision, 2 s after the one before,
/// and the twentieth started after 38 s whatever the answers said.
#[tokio::test(start_paused = true)]
async fn retries_decided_at_the_least_rate_move_up_when_the_headers_raise_it() {
    const CUT_IT: Policy = Policy::new().max(1).throttle(&RETRIES);
    const RETRIED: Policy = Policy::new()
        .max(2)
        .base(Duration::from_millis(10))
        .throttle(&RETRIES);
    let t0 = Instant::now();
    let retries = Arc::new(Mutex::new(Vec::new()));
    // Twenty calls whose first attempts go at once (the throttle is off)
    // and fail after 100 ms; their retries succeed, each answer carrying
    // the provider's headers: 240 a minute, most of it left.
    let calls: Vec<_> = (0..20)
        .map(|_| {
            let retries = Arc::clone(&retries);
            tokio::spawn(async move {
                let mut first = true;
                RETRIED
                    .retry(|| {
                        let retry = !std::mem::replace(&mut first, false);
                        if retry {
                            retries.lock().unwrap().push(t0.elapsed());
                            RETRIES.report(
                                Signals::NONE
                                    .limit(240)
                                    .remaining(200)
                                    .reset(Duration::from_secs(10)),
                            );
                        }
                        async move {
                            if retry {
                                return Ok(());
                            }
                            tokio::time::sleep(Duration::from_millis(100)).await;
                            Err(HttpError::new(StatusCode::SERVICE_UNAVAILABLE))
                        }
                    })
                    .await
            })
        })
        .collect();
    // While their first attempts run, a 429 without headers turns the
    // throttle on at its least rate: one call every 2 s.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let _ = CUT_IT
        .retry(|| async { Err::<(), _>(HttpError::new(StatusCode::TOO_MANY_REQUESTS)) })
        .await;
    assert!(
        RETRIES.stats().rate.is_some_and(|rate| rate <= 0.5 + 1e-9),
        "{:?}",
        RETRIES.stats()
    );
    for call in calls {
        call.await.unwrap().unwrap();
    }
    let retries = retries.lock().unwrap().clone();
    assert_eq!(retries.len(), 20);
    let last = retries.iter().max().copied().unwrap_or_default();
    assert!(
        last < Duration::from_secs(15),
        "the last of 20 retries started after {last:?}: {retries:?}"
    );
}
