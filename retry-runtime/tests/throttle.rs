//! `Throttle`: off until the first throttle, then a CUBIC rate (AWS SDKs'
//! adaptive retry mode) that a token bucket paces attempts to, never above
//! twice the measured send rate; paced ahead of a 429 by the provider's
//! rate-limit window; a wait past the deadline stops the call. On tokio's
//! paused clock, counted, not timed.
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use tenacious_runtime::{
    Classify, ErrorClass, Failure, Jitter, Policy, Signals, StopReason, Throttle,
};
use tokio::task::JoinSet;
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Transient,
    RateLimited,
    /// A transient failure whose response reported a window.
    Window(Signals),
}

impl Classify for Fault {
    fn classify(&self) -> ErrorClass {
        match self {
            Fault::Transient | Fault::Window(_) => ErrorClass::Transient,
            Fault::RateLimited => ErrorClass::RateLimited,
        }
    }
    fn signals(&self) -> Signals {
        match self {
            Fault::Window(signals) => *signals,
            _ => Signals::NONE,
        }
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// A throttle of its own for each test: statics outlive the runtime.
fn fresh() -> &'static Throttle {
    Box::leak(Box::new(Throttle::new()))
}

/// 3 attempts, fixed 10 ms backoff, guarded by `throttle`.
fn policy(throttle: &'static Throttle) -> Policy {
    Policy::new()
        .max(3)
        .base(ms(10))
        .jitter(Jitter::None)
        .throttle(throttle)
}

/// One call through `policy` answering `results` in turn; when each
/// attempt started, from `start`, and how it ended.
async fn call(
    policy: Policy,
    start: Instant,
    results: Vec<Result<u32, Fault>>,
) -> (Result<u32, Failure<Fault>>, Vec<Duration>) {
    let starts = Mutex::new(Vec::new());
    let mut results = results.into_iter();
    let out = policy
        .retry_failure(|| {
            starts.lock().unwrap().push(start.elapsed());
            let result = results.next().expect("no attempt past the script");
            async move { result }
        })
        .await;
    (out, starts.into_inner().unwrap())
}

/// `n` calls at once, each succeeding at its first attempt: when each
/// started, from `start`, sorted.
async fn at_once(throttle: &'static Throttle, start: Instant, n: usize) -> Vec<Duration> {
    let mut calls = JoinSet::new();
    for _ in 0..n {
        calls.spawn(async move { call(policy(throttle), start, vec![Ok(0)]).await });
    }
    let mut starts = Vec::new();
    while let Some(done) = calls.join_next().await {
        let (result, mut attempts) = done.unwrap();
        assert_eq!(result.unwrap(), 0);
        starts.append(&mut attempts);
    }
    starts.sort();
    starts
}

/// Throttles `throttle` now: one call whose only attempt is rate limited.
async fn throttle_once(throttle: &'static Throttle) {
    let (result, _) = call(
        policy(throttle).max(1),
        Instant::now(),
        vec![Err(Fault::RateLimited)],
    )
    .await;
    assert!(result.is_err());
}

/// `n` successes, one every `every`.
async fn steady(throttle: &'static Throttle, n: usize, every: Duration) {
    for _ in 0..n {
        let (result, _) = call(policy(throttle), Instant::now(), vec![Ok(0)]).await;
        result.unwrap();
        tokio::time::sleep(every).await;
    }
}

/// CUBIC's `W(t)` `dt` seconds after a throttle from `last_max`.
fn cubic(last_max: f64, dt: f64) -> f64 {
    let k = (last_max * (1.0 - 0.7) / 0.4).cbrt();
    0.4 * (dt - k).powi(3) + last_max
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

#[tokio::test(start_paused = true)]
async fn off_until_the_first_throttle_every_call_starts_at_once() {
    let throttle = fresh();
    steady(throttle, 20, ms(10)).await;
    // A transient failure that is not an overload says nothing of the rate.
    let (failed, _) = call(
        policy(throttle).max(1),
        Instant::now(),
        vec![Err(Fault::Transient)],
    )
    .await;
    assert!(failed.is_err());
    let start = Instant::now();
    let starts = at_once(throttle, start, 50).await;
    assert_eq!(starts, vec![Duration::ZERO; 50]);
    let stats = throttle.stats();
    assert_eq!((stats.rate, stats.waits, stats.decreases), (None, 0, 0));
}

#[tokio::test(start_paused = true)]
async fn a_throttle_from_cold_spaces_calls_at_the_least_rate() {
    let throttle = fresh();
    throttle_once(throttle).await;
    // Nothing measured yet: 0.5 a second, an empty bucket, one token
    // every 2 s, reserved in turn.
    assert_eq!(throttle.stats().rate, Some(0.5));
    let start = Instant::now();
    let starts = at_once(throttle, start, 6).await;
    assert_eq!(starts, (1..=6).map(|i| secs(2 * i)).collect::<Vec<_>>());
    assert_eq!(throttle.stats().waits, 6);
}

#[tokio::test(start_paused = true)]
async fn a_throttle_cuts_the_measured_rate_by_beta_and_spaces_the_calls() {
    let throttle = fresh();
    // 20 a second for 3 s, while off.
    steady(throttle, 60, ms(50)).await;
    let before = throttle.stats();
    assert!(before.rate.is_none());
    assert!(before.measured_rate > 10.0, "{before:?}");
    throttle_once(throttle).await;
    let after = throttle.stats();
    let rate = after.rate.unwrap();
    assert!(close(rate, 0.7 * after.measured_rate), "{after:?}");
    assert_eq!(after.decreases, 1);

    // 40 calls at once: what the bucket held goes at once (at most its
    // capacity, max(rate, 1)), then one every 1 / rate.
    let start = Instant::now();
    let starts = at_once(throttle, start, 40).await;
    let burst = starts.iter().filter(|s| s.is_zero()).count();
    assert!(burst as f64 <= rate.max(1.0).ceil(), "{burst} at once");
    let spacing = Duration::from_secs_f64(1.0 / rate);
    for pair in starts[burst..].windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            gap.abs_diff(spacing) <= ms(1),
            "{gap:?} against {spacing:?}"
        );
    }
    assert!(starts[39] >= spacing * (39 - burst as u32));
}

#[tokio::test(start_paused = true)]
async fn successes_raise_the_rate_along_cubic_never_above_twice_the_measured_rate() {
    let throttle = fresh();
    steady(throttle, 40, ms(100)).await;
    let thrown = Instant::now();
    throttle_once(throttle).await;
    let last_max = throttle.stats().measured_rate;
    assert!(close(throttle.stats().rate.unwrap(), 0.7 * last_max));
    // Five successes a second, at chosen times after the throttle: under
    // the cut rate, so none waits; the measured rate falls towards 5 while
    // CUBIC climbs back past `last_max`.
    let mut capped = 0;
    let mut raised = 0;
    for n in 1..=20 {
        tokio::time::sleep_until(thrown + ms(200 * n)).await;
        let before = throttle.stats().rate.unwrap();
        let (result, starts) = call(policy(throttle), thrown, vec![Ok(0)]).await;
        result.unwrap();
        let dt = starts[0].as_secs_f64();
        let stats = throttle.stats();
        let rate = stats.rate.unwrap();
        let twice = 2.0 * stats.measured_rate;
        let expected = cubic(last_max, dt).min(twice).max(0.5);
        assert!(close(rate, expected), "at {dt}: {rate} against {expected}");
        assert!(rate <= twice.max(0.5) * (1.0 + 1e-9), "at {dt}: {stats:?}");
        if close(rate, twice) {
            capped += 1;
        }
        if rate > before {
            raised += 1;
        }
    }
    // Past `K`, CUBIC grows faster than five requests a second can
    // measure.
    assert!(capped > 0, "the 2x cap never bound");
    assert!(raised > 0);
    assert_eq!(throttle.stats().increases, raised);
}

#[tokio::test(start_paused = true)]
async fn a_reported_window_spreads_what_is_left_over_the_reset() {
    let throttle = fresh();
    let start = Instant::now();
    // A success's headers, handed over from inside the fn.
    let reported = policy(throttle)
        .retry(|| async {
            throttle.report(Signals::NONE.remaining(2).reset(secs(10)));
            Ok::<_, Fault>(())
        })
        .await;
    reported.unwrap();
    let starts = at_once(throttle, start, 4).await;
    assert_eq!(starts, vec![secs(0), secs(5), secs(10), secs(15)]);
    assert!(throttle.stats().rate.is_none(), "pacing is not a throttle");
}

#[tokio::test(start_paused = true)]
async fn none_left_in_the_window_holds_every_call_until_the_reset() {
    let throttle = fresh();
    let start = Instant::now();
    let window = Signals::NONE.remaining(0).reset(secs(10));
    let (failed, _) = call(
        policy(throttle).max(1),
        start,
        vec![Err(Fault::Window(window))],
    )
    .await;
    assert!(failed.is_err());
    let starts = at_once(throttle, start, 10).await;
    assert_eq!(starts, vec![secs(10); 10]);
    assert_eq!(throttle.stats().waits, 10);
}

#[tokio::test(start_paused = true)]
async fn a_wait_past_the_deadline_stops_the_call_and_reserves_nothing() {
    let throttle = fresh();
    throttle_once(throttle).await;
    let start = Instant::now();
    // The first attempt goes anyway (there is no error to return yet);
    // its retry would wait 2 s for a token, past the 1 s deadline.
    let (result, starts) = call(
        policy(throttle).deadline(secs(1)),
        start,
        vec![Err(Fault::Transient), Ok(1)],
    )
    .await;
    let failure = result.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert_eq!(*failure.last(), Fault::Transient);
    assert_eq!(starts, vec![Duration::ZERO]);
    assert_eq!(throttle.stats().stopped, 2);
    // Nothing was reserved: the next call gets the first token, at 2 s.
    let starts = at_once(throttle, start, 1).await;
    assert_eq!(starts, vec![secs(2)]);
}

#[tokio::test(start_paused = true)]
async fn a_retry_waits_for_its_token_and_goes_without_another() {
    let throttle = fresh();
    let start = Instant::now();
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&attempts);
    let mut answers = vec![Ok(7), Err(Fault::RateLimited)];
    let out = policy(throttle)
        .retry(|| {
            seen.lock().unwrap().push(start.elapsed());
            let answer = answers.pop().unwrap();
            async move { answer }
        })
        .await;
    assert_eq!(out.unwrap(), 7);
    // Throttled at 0; the retry's token comes at 2 s, beyond its 10 ms
    // backoff; asked again after that wait, it goes.
    assert_eq!(*attempts.lock().unwrap(), vec![Duration::ZERO, secs(2)]);
    let stats = throttle.stats();
    assert_eq!((stats.waits, stats.waited), (1, ms(1990)));
}

#[cfg(feature = "http")]
#[tokio::test(start_paused = true)]
async fn a_429_with_none_left_holds_the_calls_then_releases_them_at_the_rate() {
    use tenacious_runtime::HttpError;

    let throttle = fresh();
    let start = Instant::now();
    let mut headers = http::HeaderMap::new();
    headers.insert("x-ratelimit-remaining-requests", "0".parse().unwrap());
    headers.insert("x-ratelimit-reset-requests", "10s".parse().unwrap());
    let error = HttpError::from_parts(http::StatusCode::TOO_MANY_REQUESTS, &headers);
    let limited = policy(throttle)
        .max(1)
        .retry(|| {
            // `HttpError` is `Clone`, not `Copy`: it may hold a body.
            let error = error.clone();
            async move { Err::<(), _>(error) }
        })
        .await;
    assert!(limited.is_err());
    // The 429 turned the rate limiter on (0.5 a second, from cold) and
    // closed the window for 10 s: the calls held wait for the reset, then
    // go one token apart, not all at once.
    assert_eq!(throttle.stats().rate, Some(0.5));
    let starts = at_once(throttle, start, 3).await;
    assert_eq!(starts, vec![secs(10), secs(12), secs(14)]);
}

#[cfg(feature = "http")]
#[tokio::test(start_paused = true)]
async fn a_429_with_the_bucket_s_size_paces_at_its_refill_rate_without_a_cut() {
    use tenacious_runtime::HttpError;

    let throttle = fresh();
    let start = Instant::now();
    let mut headers = http::HeaderMap::new();
    headers.insert("x-ratelimit-limit-requests", "20".parse().unwrap());
    headers.insert("x-ratelimit-remaining-requests", "0".parse().unwrap());
    headers.insert("x-ratelimit-reset-requests", "2s".parse().unwrap());
    let error = HttpError::from_parts(http::StatusCode::TOO_MANY_REQUESTS, &headers);
    let limited = policy(throttle)
        .max(1)
        .retry(|| {
            // `HttpError` is `Clone`, not `Copy`: it may hold a body.
            let error = error.clone();
            async move { Err::<(), _>(error) }
        })
        .await;
    assert!(limited.is_err());
    // Empty, full again in 2 s: refilling 9.5 to 10 a second (20 − 0, less
    // the part of a token `remaining` leaves unsaid, over 2 s). The calls
    // go one refill apart, not held until the reset, and the adaptive
    // rate stays off.
    assert_eq!(throttle.stats().rate, None);
    let starts = at_once(throttle, start, 3).await;
    let spacing = Duration::from_secs_f64(1.0 / 9.75);
    for (k, started) in (1..).zip(&starts) {
        assert!(started.abs_diff(spacing * k) <= ms(1), "{starts:?}");
    }
}

/// `n` calls at once through `throttle`, each attempt answered after
/// `answer` (a success reporting `report` through `Throttle::report`, if
/// given): when each call's first attempt started.
async fn fleet_start(
    throttle: &'static Throttle,
    n: usize,
    answer: Duration,
    report: Option<Signals>,
) -> Vec<Duration> {
    let start = Instant::now();
    let mut calls = JoinSet::new();
    for _ in 0..n {
        calls.spawn(async move {
            let mut started = None;
            let _ = policy(throttle)
                .retry(|| {
                    started.get_or_insert(start.elapsed());
                    async move {
                        tokio::time::sleep(answer).await;
                        if let Some(report) = report {
                            throttle.report(report);
                        }
                        Ok::<_, Fault>(())
                    }
                })
                .await;
            started.unwrap()
        });
    }
    let mut starts = calls.join_all().await;
    starts.sort();
    starts
}

#[tokio::test(start_paused = true)]
async fn probing_first_holds_a_fleet_for_the_first_answer_then_paces_it_by_the_window() {
    // Without it, all go at once.
    let starts = fleet_start(fresh(), 5, ms(50), None).await;
    assert_eq!(starts, [Duration::ZERO; 5]);

    // With it: one goes; the others ask again every 20 ms and go once its
    // answer came (at 50 ms).
    let probing = Box::leak(Box::new(Throttle::new().probe_first(secs(1))));
    let starts = fleet_start(probing, 5, ms(50), None).await;
    assert_eq!(starts, [ms(0), ms(60), ms(60), ms(60), ms(60)]);

    // The answer's window paces the rest: 1 of a bucket of 2 left, full
    // again in 1 s: one start now, then one a second.
    let window = Signals::NONE.limit(2).remaining(1).reset(secs(1));
    let probing = Box::leak(Box::new(Throttle::new().probe_first(secs(1))));
    let starts = fleet_start(probing, 4, ms(50), Some(window)).await;
    assert_eq!(starts[0], ms(0));
    assert_eq!(starts[1], ms(60), "the one left in the bucket");
    assert!(
        starts.windows(2).skip(1).all(|w| w[1] - w[0] >= ms(900)),
        "then paced at the bucket's rate: {starts:?}"
    );

    // An answer that does not come in time: the others go after the wait.
    let probing = Box::leak(Box::new(Throttle::new().probe_first(ms(300))));
    let starts = fleet_start(probing, 3, secs(5), None).await;
    assert_eq!(starts, [ms(0), ms(300), ms(300)]);
}
