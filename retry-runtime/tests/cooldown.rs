//! `Cooldown`: a `RateLimited` hint closes it for every call naming it,
//! never shorter than before; the calls waiting are released spread out;
//! a wait it cannot serve stops the call with `StopReason::Cooldown`. On
//! tokio's paused clock, counted, not timed.
use std::sync::Mutex;
use std::time::Duration;

use tenacious_runtime::{
    Classify, Cooldown, ErrorClass, Failure, Jitter, Policy, Signals, StopReason,
};
use tokio::task::JoinSet;
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Transient,
    TransientHinted(Duration),
    RateLimited(Duration),
    /// A 529 with `Retry-After`: rate-limited class, but an overload.
    Overloaded(Duration),
}

impl Classify for Fault {
    fn classify(&self) -> ErrorClass {
        match self {
            Fault::Transient | Fault::TransientHinted(_) => ErrorClass::Transient,
            Fault::RateLimited(_) | Fault::Overloaded(_) => ErrorClass::RateLimited,
        }
    }
    fn signals(&self) -> Signals {
        Signals::NONE.overloaded(matches!(self, Fault::Overloaded(_)))
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Fault::Transient => None,
            Fault::TransientHinted(hint) | Fault::RateLimited(hint) | Fault::Overloaded(hint) => {
                Some(*hint)
            }
        }
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// 3 attempts, fixed 10 ms backoff, waiting for `cooldown`.
fn policy(cooldown: &'static Cooldown) -> Policy {
    Policy::new()
        .max(3)
        .base(ms(10))
        .jitter(Jitter::None)
        .cooldown(cooldown)
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

/// A cooldown of its own for each test: statics outlive the runtime.
fn fresh() -> &'static Cooldown {
    Box::leak(Box::new(Cooldown::new()))
}

/// Closes `cooldown` until `hint` from now, the way calls do: a call whose
/// first attempt is answered `RateLimited(hint)`, left running.
fn close(cooldown: &'static Cooldown, hint: Duration, calls: &mut JoinSet<()>) {
    let start = Instant::now();
    calls.spawn(async move {
        let _ = call(
            policy(cooldown),
            start,
            vec![Err(Fault::RateLimited(hint)), Ok(0)],
        )
        .await;
    });
}

#[tokio::test(start_paused = true)]
async fn a_hint_closes_it_for_every_call_and_a_shorter_one_never_reopens_it() {
    let cooldown = fresh();
    let start = Instant::now();
    // The call told to wait waits its hint and backoff: the cooldown asks
    // it for nothing more.
    let (first, starts) = call(
        policy(cooldown),
        start,
        vec![Err(Fault::RateLimited(Duration::from_secs(2))), Ok(1)],
    )
    .await;
    assert_eq!((first.unwrap(), starts), (1, vec![ms(0), ms(2010)]));

    let cooldown = fresh();
    let start = Instant::now();
    let mut others = JoinSet::new();
    // A slow call already under way when it closes ...
    others.spawn(async move {
        let mut answered = false;
        let _ = policy(cooldown)
            .retry(|| {
                let first = !std::mem::replace(&mut answered, true);
                async move {
                    if first {
                        tokio::time::sleep(ms(500)).await;
                        Err(Fault::RateLimited(ms(100)))
                    } else {
                        Ok(0)
                    }
                }
            })
            .await;
    });
    tokio::time::sleep(ms(1)).await;
    close(cooldown, Duration::from_secs(2), &mut others);
    // ... answers a shorter hint at 500 ms, which does not reopen it
    // early: its retry takes the first turn at the reopening (2.001 s),
    // and a call arriving at 600 ms the next, one spacing later.
    tokio::time::sleep(ms(599)).await;
    let (out, starts) = call(policy(cooldown), start, vec![Ok(3)]).await;
    assert_eq!(out.unwrap(), 3);
    assert_eq!(starts, [ms(2011)]);
    while others.join_next().await.is_some() {}
}

#[tokio::test(start_paused = true)]
async fn a_hundred_waiters_are_released_one_spacing_apart() {
    let cooldown = fresh();
    let start = Instant::now();
    let mut closer = JoinSet::new();
    close(cooldown, Duration::from_secs(1), &mut closer);
    tokio::time::sleep(ms(1)).await;
    let mut waiters = JoinSet::new();
    for n in 0..100 {
        let policy = policy(cooldown);
        waiters.spawn(async move { call(policy, start, vec![Ok(n)]).await });
    }
    let mut starts = Vec::new();
    while let Some(done) = waiters.join_next().await {
        let (out, at) = done.unwrap();
        out.unwrap();
        starts.extend(at);
    }
    starts.sort();
    assert_eq!(starts.len(), 100);
    assert_eq!(starts[0], ms(1000), "none before the reopening");
    let spread = starts[99] - starts[0];
    assert!(
        spread >= Cooldown::SPACING * 99,
        "released over {spread:?}, not at once"
    );
    assert!(
        starts
            .windows(2)
            .all(|pair| pair[1] - pair[0] >= Cooldown::SPACING),
        "one spacing apart"
    );
    while closer.join_next().await.is_some() {}
}

#[tokio::test(start_paused = true)]
async fn a_wait_past_the_deadline_or_the_longest_hint_stops_the_call() {
    let cooldown = fresh();
    let mut closer = JoinSet::new();
    close(cooldown, Duration::from_secs(5), &mut closer);
    tokio::time::sleep(ms(1)).await;
    let start = Instant::now();
    // A retry decided while it is closed for 5 s more: past a 1 s deadline.
    let (out, starts) = call(
        policy(cooldown).deadline(Duration::from_secs(1)),
        start,
        vec![Err(Fault::Transient)],
    )
    .await;
    assert_eq!(out.unwrap_err().stop_reason(), StopReason::Cooldown);
    assert_eq!(starts, [ms(0)], "its first attempt is always made");
    // Longer than the policy's `max_retry_after`.
    let (out, _) = call(
        policy(cooldown).max_retry_after(Duration::from_secs(2)),
        start,
        vec![Err(Fault::Transient)],
    )
    .await;
    assert_eq!(out.unwrap_err().stop_reason(), StopReason::Cooldown);
    assert_eq!(
        start.elapsed(),
        Duration::ZERO,
        "stopped at once, without waiting"
    );
    closer.abort_all();
}

#[tokio::test(start_paused = true)]
async fn only_a_rate_limit_hint_closes_it() {
    let cooldown = fresh();
    let start = Instant::now();
    let (out, starts) = call(
        policy(cooldown),
        start,
        vec![Err(Fault::TransientHinted(Duration::from_secs(3))), Ok(1)],
    )
    .await;
    assert_eq!(out.unwrap(), 1);
    // The transient error's own hint was waited, by that call only.
    assert_eq!(starts, [ms(0), ms(3010)]);
    let (out, starts) = call(policy(cooldown), Instant::now(), vec![Ok(2)]).await;
    assert_eq!((out.unwrap(), starts), (2, vec![ms(0)]));
    // Nor does an overload's: the provider's trouble, not the quota's.
    let (out, starts) = call(
        policy(cooldown),
        Instant::now(),
        vec![Err(Fault::Overloaded(Duration::from_secs(3))), Ok(3)],
    )
    .await;
    assert_eq!((out.unwrap(), starts), (3, vec![ms(0), ms(3010)]));
    assert!(!cooldown.is_closed());
    let (out, starts) = call(policy(cooldown), Instant::now(), vec![Ok(4)]).await;
    assert_eq!((out.unwrap(), starts), (4, vec![ms(0)]));
}
