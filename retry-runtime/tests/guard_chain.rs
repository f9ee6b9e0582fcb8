//! A policy's guards as a chain: the cooldown, then the policy's own
//! guard, then the budget, each asked in turn with the wait planned so far;
//! and a refusal before the first attempt, which stops a call whose error
//! type can say it was refused (`Classify::refused`) with no attempt. On
//! tokio's paused clock, counted, not timed.
use std::io;
use std::sync::Mutex;
use std::time::Duration;

use tenacious_runtime::{
    Admit, Classify, Cooldown, ErrorClass, Failure, Guard, Jitter, NextAttempt, Outcome, Policy,
    Refused, StopReason,
};
use tokio::time::Instant;

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A guard that answers from a script (then `Go`) and records the wait
/// planned before each attempt it is asked about.
#[derive(Debug)]
struct Scripted {
    answers: Mutex<Vec<Admit>>,
    asked: Mutex<Vec<(u32, bool, Duration)>>,
}

impl Scripted {
    fn leak(answers: &[Admit]) -> &'static Self {
        Box::leak(Box::new(Self {
            answers: Mutex::new(answers.iter().rev().copied().collect()),
            asked: Mutex::new(Vec::new()),
        }))
    }

    fn asked(&self) -> Vec<(u32, bool, Duration)> {
        self.asked.lock().unwrap().clone()
    }
}

impl Guard for Scripted {
    fn admit(&self, next: &NextAttempt) -> Admit {
        self.asked
            .lock()
            .unwrap()
            .push((next.attempt, next.recheck, next.wait));
        self.answers.lock().unwrap().pop().unwrap_or(Admit::Go)
    }
    fn observe(&self, _: &Outcome) {}
}

/// An error of one's own that cannot say it was refused.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Plain {
    RateLimited(Duration),
}

impl Classify for Plain {
    fn classify(&self) -> ErrorClass {
        ErrorClass::RateLimited
    }
    fn retry_after(&self) -> Option<Duration> {
        let Plain::RateLimited(hint) = self;
        Some(*hint)
    }
}

/// An error of one's own that can (its other variants left out).
#[derive(Debug)]
enum Tool {
    Refused(Refused),
}

impl Classify for Tool {
    fn classify(&self) -> ErrorClass {
        let Tool::Refused(refused) = self;
        refused.classify()
    }
    fn refused() -> Option<fn(Refused) -> Self> {
        Some(Tool::Refused)
    }
}

const fn fixed(max: u32) -> Policy {
    Policy::new().max(max).base(ms(10)).jitter(Jitter::None)
}

fn cooldown() -> &'static Cooldown {
    Box::leak(Box::new(Cooldown::new()))
}

/// Closes `cooldown` for `hint` from now, as a call's 429 does.
async fn close(cooldown: &'static Cooldown, hint: Duration) {
    let mut first = true;
    let _ = fixed(1)
        .cooldown(cooldown)
        .retry(|| {
            assert!(std::mem::take(&mut first), "one attempt");
            async move { Err::<(), _>(Plain::RateLimited(hint)) }
        })
        .await;
}

#[tokio::test(start_paused = true)]
async fn the_cooldown_is_asked_before_the_guard_which_sees_the_wait_it_added() {
    let cooldown = cooldown();
    let guard = Scripted::leak(&[]);
    let policy = fixed(3).cooldown(cooldown).guard(guard);
    let start = Instant::now();
    let mut starts = Vec::new();
    let mut answers = vec![Ok(7), Err(Plain::RateLimited(ms(500)))].into_iter();
    let out = policy
        .retry(|| {
            starts.push(start.elapsed());
            let answer = answers.next_back().expect("two attempts");
            async move { answer }
        })
        .await;
    assert_eq!(out, Ok(7));
    // The 429's hint closed the cooldown for 500 ms: the retry waits it
    // out (the hint and the 10 ms backoff, then the cooldown asks for
    // nothing more), and the guard, asked after the cooldown, sees that
    // whole wait planned.
    assert_eq!(starts, [ms(0), ms(510)]);
    assert_eq!(
        guard.asked(),
        [(1, false, Duration::ZERO), (2, false, ms(510))],
        "asked before the first attempt and at the retry's decision; nobody asked to be asked \
         again after the wait"
    );
}

#[tokio::test(start_paused = true)]
async fn a_closed_cooldown_holds_the_first_attempt_then_the_guard_is_asked() {
    let cooldown = cooldown();
    close(cooldown, ms(300)).await;
    let guard = Scripted::leak(&[]);
    let start = Instant::now();
    let mut started = None;
    let out = fixed(1)
        .cooldown(cooldown)
        .guard(guard)
        .retry(|| {
            started = Some(start.elapsed());
            async { Ok::<_, Plain>(()) }
        })
        .await;
    assert_eq!(out, Ok(()));
    assert_eq!(started, Some(ms(300)), "waited for the cooldown to reopen");
    assert_eq!(guard.asked(), [(1, false, Duration::ZERO)]);
}

#[tokio::test(start_paused = true)]
async fn a_refused_first_attempt_stops_a_call_whose_error_can_say_so() {
    let refuse = Scripted::leak(&[Admit::Stop(StopReason::Guard)]);
    let mut attempts = 0;
    let out = fixed(3)
        .guard(refuse)
        .retry(|| {
            attempts += 1;
            async { Ok::<_, Tool>(()) }
        })
        .await;
    assert!(matches!(out, Err(Tool::Refused(refused)) if refused.reason() == StopReason::Guard));
    assert_eq!(attempts, 0, "no attempt");

    // `io::Error` can: an `Other` error holding the refusal.
    let refuse = Scripted::leak(&[Admit::Stop(StopReason::Guard)]);
    let err = fixed(3)
        .guard(refuse)
        .retry_blocking(|| Ok::<(), io::Error>(()))
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::Other);
    let refused = err.get_ref().and_then(|e| e.downcast_ref::<Refused>());
    assert_eq!(refused.map(Refused::reason), Some(StopReason::Guard));

    // So does a `Failure` of such an error: no attempts, the guard's reason.
    let refuse = Scripted::leak(&[Admit::Stop(StopReason::Guard)]);
    let failure: Failure<Tool> = fixed(3)
        .guard(refuse)
        .retry_failure(|| async { Ok::<(), Tool>(()) })
        .await
        .unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Guard);
    assert!(failure.attempts().is_empty());
    assert_eq!(
        failure.to_string(),
        "refused before the first attempt (guard)"
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_whose_error_cannot_say_it_was_refused_makes_its_first_attempt() {
    let refuse = Scripted::leak(&[Admit::Stop(StopReason::Guard)]);
    let mut attempts = 0;
    let out = fixed(3)
        .guard(refuse)
        .retry(|| {
            attempts += 1;
            async { Ok::<_, Plain>(5) }
        })
        .await;
    assert_eq!((out, attempts), (Ok(5), 1));
}

#[tokio::test(start_paused = true)]
async fn a_cooldown_the_first_attempt_cannot_wait_for_stops_the_call_at_once() {
    let cooldown = cooldown();
    close(cooldown, ms(5_000)).await;
    let start = Instant::now();
    for policy in [
        fixed(3).cooldown(cooldown).deadline(ms(1_000)),
        fixed(3).cooldown(cooldown).max_retry_after(ms(2_000)),
    ] {
        let mut attempts = 0;
        let out = policy
            .retry(|| {
                attempts += 1;
                async { Ok::<_, Tool>(()) }
            })
            .await;
        assert!(
            matches!(out, Err(Tool::Refused(refused)) if refused.reason() == StopReason::Cooldown)
        );
        assert_eq!(attempts, 0);
    }
    assert_eq!(start.elapsed(), Duration::ZERO, "stopped without waiting");
    // A call that can wait that long waits, and then goes.
    let mut started = None;
    let out = fixed(3)
        .cooldown(cooldown)
        .retry(|| {
            started = Some(start.elapsed());
            async { Ok::<_, Tool>(()) }
        })
        .await;
    assert!(out.is_ok());
    assert_eq!(started, Some(ms(5_000)));
}
