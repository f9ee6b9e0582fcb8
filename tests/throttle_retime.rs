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
