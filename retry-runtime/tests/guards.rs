//! The guard extension point: a `Guard` is asked before every attempt and
//! told every outcome, may make an attempt wait or stop the call, answers
//! at once or through its async path, and shares the decision with the
//! policy's deadline and budget. On tokio's paused clock.
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tenacious_runtime::{
    Admit, AttemptResult, Classify, ErrorClass, Failure, Guard, Jitter, NextAttempt, Outcome,
    PendingAdmit, Policy, RetryBudget, StopReason,
};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Transient,
    RateLimited(Duration),
    Invalid,
}

impl Classify for Fault {
    fn classify(&self) -> ErrorClass {
        match self {
            Fault::Transient => ErrorClass::Transient,
            Fault::RateLimited(_) => ErrorClass::RateLimited,
            Fault::Invalid => ErrorClass::Invalid,
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Fault::RateLimited(hint) => Some(*hint),
            _ => None,
        }
    }
}

/// What a guard heard: each question and each outcome, in order.
#[derive(Debug, Clone, PartialEq)]
enum Heard {
    Asked {
        attempt: u32,
        recheck: bool,
        wait: Duration,
    },
    AskedAsync {
        attempt: u32,
    },
    Told {
        attempt: u32,
        result: AttemptResult,
    },
}

/// A guard that answers from a script (then `Go`) and records what it heard.
#[derive(Debug)]
struct Scripted {
    answers: Mutex<Vec<Admit>>,
    async_answers: Mutex<Vec<Admit>>,
    heard: Mutex<Vec<Heard>>,
}

impl Scripted {
    fn new(answers: &[Admit]) -> Self {
        Self {
            answers: Mutex::new(answers.iter().rev().copied().collect()),
            async_answers: Mutex::new(Vec::new()),
            heard: Mutex::new(Vec::new()),
        }
    }

    fn with_async(self, answers: &[Admit]) -> Self {
        *self.async_answers.lock().unwrap() = answers.iter().rev().copied().collect();
        self
    }

    fn heard(&self) -> Vec<Heard> {
        self.heard.lock().unwrap().clone()
    }
}

impl Guard for Scripted {
    fn admit(&self, next: &NextAttempt) -> Admit {
        self.heard.lock().unwrap().push(Heard::Asked {
            attempt: next.attempt,
            recheck: next.recheck,
            wait: next.wait,
        });
        self.answers.lock().unwrap().pop().unwrap_or(Admit::Go)
    }

    fn observe(&self, outcome: &Outcome) {
        self.heard.lock().unwrap().push(Heard::Told {
            attempt: outcome.attempt,
            result: outcome.result,
        });
    }

    fn admit_async(&self, next: NextAttempt) -> PendingAdmit<'_> {
        self.heard.lock().unwrap().push(Heard::AskedAsync {
            attempt: next.attempt,
        });
        let answer = self
            .async_answers
            .lock()
            .unwrap()
            .pop()
            .unwrap_or(Admit::Go);
        Box::pin(async move {
            // A round trip to a store across the network.
            tokio::time::sleep(Duration::from_millis(3)).await;
            answer
        })
    }
}

fn asked(attempt: u32, recheck: bool, wait_ms: u64) -> Heard {
    Heard::Asked {
        attempt,
        recheck,
        wait: Duration::from_millis(wait_ms),
    }
}

fn told(attempt: u32, result: AttemptResult) -> Heard {
    Heard::Told { attempt, result }
}

const TRANSIENT: AttemptResult = AttemptResult::Failure {
    class: ErrorClass::Transient,
    hint: None,
    timed_out: false,
};

/// A policy with fixed 10 ms waits, so every delay is known.
const fn fixed(max: u32) -> Policy {
    Policy::new()
        .max(max)
        .base(Duration::from_millis(10))
        .jitter(Jitter::None)
}

/// Runs `results` through `policy`'s async loop; returns the call's
/// `Failure` or value and when (on the paused clock) each attempt started.
async fn run(
    policy: &Policy,
    results: &[Result<u32, Fault>],
) -> (Result<u32, Failure<Fault>>, Vec<Duration>) {
    let start = Instant::now();
    let mut starts = Vec::new();
    let mut results = results.iter().copied();
    let out = policy
        .retry_failure(|| {
            starts.push(start.elapsed());
            let result = results.next().expect("no attempt past the script");
            async move { result }
        })
        .await;
    (out, starts)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn a_guard_is_asked_before_every_attempt_and_told_every_outcome() {
    static GUARD: Scripted = Scripted {
        answers: Mutex::new(Vec::new()),
        async_answers: Mutex::new(Vec::new()),
        heard: Mutex::new(Vec::new()),
    };
    let policy = fixed(3).guard(&GUARD);
    let hint = Fault::RateLimited(ms(5));
    let (out, starts) = run(&policy, &[Err(Fault::Transient), Err(hint), Ok(7)]).await;
    assert_eq!(out.unwrap(), 7);
    assert_eq!(starts, [ms(0), ms(10), ms(10 + 5 + 20)]);
    assert_eq!(
        GUARD.heard(),
        [
            asked(1, false, 0),
            told(1, TRANSIENT),
            asked(2, false, 10),
            told(
                2,
                AttemptResult::Failure {
                    class: ErrorClass::RateLimited,
                    hint: Some(ms(5)),
                    timed_out: false
                }
            ),
            asked(3, false, 25),
            told(3, AttemptResult::Success),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_wait_delays_the_attempt_and_the_guard_is_asked_again_after_it() {
    let guard: &'static Scripted = Box::leak(Box::new(Scripted::new(&[
        Admit::Wait(ms(30)), // before the first attempt
        Admit::Go,           // asked again after the 30 ms
        Admit::Wait(ms(40)), // at the retry's decision: added to the backoff
        Admit::Wait(ms(5)),  // asked again after 10 + 40 ms
        Admit::Go,
    ])));
    let policy = fixed(3).guard(guard);
    let (out, starts) = run(&policy, &[Err(Fault::Transient), Ok(1)]).await;
    assert_eq!(out.unwrap(), 1);
    assert_eq!(starts, [ms(30), ms(30 + 10 + 40 + 5)]);
    assert_eq!(
        guard.heard(),
        [
            asked(1, false, 0),
            asked(1, true, 0),
            told(1, TRANSIENT),
            asked(2, false, 10),
            asked(2, true, 0),
            asked(2, true, 0),
            told(2, AttemptResult::Success),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_refusal_stops_the_call_with_the_guards_reason_and_the_last_error() {
    // At the retry's decision: no wait, no notify.
    let guard: &'static Scripted = Box::leak(Box::new(Scripted::new(&[
        Admit::Go,
        Admit::Stop(StopReason::Guard),
    ])));
    let (out, starts) = run(&fixed(5).guard(guard), &[Err(Fault::Transient)]).await;
    let failure = out.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Guard);
    assert_eq!((failure.attempts().len(), starts.len()), (1, 1));

    // Asked again after a wait it asked for: the call stops there.
    let guard: &'static Scripted = Box::leak(Box::new(Scripted::new(&[
        Admit::Go,
        Admit::Wait(ms(20)),
        Admit::Stop(StopReason::Budget),
    ])));
    let (out, starts) = run(&fixed(5).guard(guard), &[Err(Fault::Transient)]).await;
    let failure = out.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Budget);
    assert_eq!((failure.attempts().len(), starts.len()), (1, 1));
    assert_eq!(failure.into_inner(), Fault::Transient);
}

#[tokio::test(start_paused = true)]
async fn the_first_attempt_is_always_made() {
    let guard: &'static Scripted =
        Box::leak(Box::new(Scripted::new(&[Admit::Stop(StopReason::Guard)])));
    let (out, starts) = run(&fixed(2).guard(guard), &[Ok(3)]).await;
    assert_eq!((out.unwrap(), starts), (3, vec![ms(0)]));
}

#[tokio::test(start_paused = true)]
async fn the_async_path_is_awaited_before_the_attempt() {
    let guard: &'static Scripted = Box::leak(Box::new(
        Scripted::new(&[Admit::Later, Admit::Later, Admit::Later])
            .with_async(&[Admit::Go, Admit::Wait(ms(7))]),
    ));
    let (out, starts) = run(&fixed(3).guard(guard), &[Err(Fault::Transient), Ok(9)]).await;
    assert_eq!(out.unwrap(), 9);
    // 3 ms for each round trip. The retry's decision defers to the async
    // path too: asked afresh after the backoff (its `Later` held nothing),
    // the guard answers `Later`, and its async answer asks for 7 ms more,
    // after which it says go.
    assert_eq!(starts, [ms(3), ms(3 + 10 + 3 + 7)]);
    assert_eq!(
        guard.heard(),
        [
            asked(1, false, 0),
            Heard::AskedAsync { attempt: 1 },
            told(1, TRANSIENT),
            asked(2, false, 10),
            asked(2, false, 0),
            Heard::AskedAsync { attempt: 2 },
            asked(2, true, 0),
            told(2, AttemptResult::Success),
        ]
    );
}

#[test]
fn a_blocking_call_waits_for_the_async_path_on_its_thread() {
    // The async answer comes from another thread, as a networked client's
    // would.
    #[derive(Debug)]
    struct Remote;
    impl Guard for Remote {
        fn admit(&self, _: &NextAttempt) -> Admit {
            Admit::Later
        }
        fn observe(&self, _: &Outcome) {}
        fn admit_async(&self, _: NextAttempt) -> PendingAdmit<'_> {
            let (tx, rx) = tokio::sync::oneshot::channel();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(2));
                let _ = tx.send(Admit::Stop(StopReason::Guard));
            });
            Box::pin(async move { rx.await.unwrap_or(Admit::Go) })
        }
    }
    static REMOTE: Remote = Remote;
    let policy = Policy::new().max(4).base(Duration::ZERO).guard(&REMOTE);
    let mut attempts = 0;
    let failure = policy
        .retry_blocking_failure(|| {
            attempts += 1;
            Err::<(), _>(Fault::Transient)
        })
        .unwrap_err();
    // The first attempt is always made; the second is refused after the
    // wait.
    assert_eq!((attempts, failure.stop_reason()), (1, StopReason::Guard));
}

#[tokio::test(start_paused = true)]
async fn a_guards_wait_counts_against_the_deadline() {
    let guard: &'static Scripted =
        Box::leak(Box::new(Scripted::new(&[Admit::Go, Admit::Wait(ms(200))])));
    let policy = fixed(3).deadline(ms(100)).guard(guard);
    let (out, starts) = run(&policy, &[Err(Fault::Transient)]).await;
    assert_eq!(out.unwrap_err().stop_reason(), StopReason::Deadline);
    assert_eq!(starts.len(), 1);
    assert_eq!(
        guard.heard().last(),
        Some(&told(2, AttemptResult::NotMade)),
        "the guard admitted the retry and hears it was not made"
    );
}

#[tokio::test(start_paused = true)]
async fn the_budget_is_asked_after_the_guard_which_hears_of_its_refusal() {
    static EMPTY: RetryBudget = RetryBudget::with_capacity(0);
    let guard: &'static Scripted = Box::leak(Box::new(Scripted::new(&[])));
    let policy = fixed(3).guard(guard).budget(&EMPTY);
    let (out, _) = run(&policy, &[Err(Fault::Transient)]).await;
    assert_eq!(out.unwrap_err().stop_reason(), StopReason::Budget);
    assert_eq!(
        guard.heard(),
        [
            asked(1, false, 0),
            told(1, TRANSIENT),
            asked(2, false, 10),
            told(2, AttemptResult::NotMade),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_retry_stopped_after_its_wait_gives_the_budget_back_what_it_took() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(50);
    let guard: &'static Scripted = Box::leak(Box::new(Scripted::new(&[
        Admit::Go,
        Admit::Wait(ms(1)),
        Admit::Stop(StopReason::Guard),
    ])));
    let policy = fixed(3).guard(guard).budget(&BUDGET);
    let (out, _) = run(&policy, &[Err(Fault::Transient)]).await;
    assert_eq!(out.unwrap_err().stop_reason(), StopReason::Guard);
    assert_eq!(BUDGET.balance(), 50);
    // The guard refused the retry itself: it is not told it was not made.
    assert_eq!(
        guard.heard(),
        [
            asked(1, false, 0),
            told(1, TRANSIENT),
            asked(2, false, 10),
            asked(2, true, 0),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn errors_the_policy_does_not_retry_never_reach_the_guards_admission() {
    static COUNT: Counting = Counting(AtomicU32::new(0), AtomicU32::new(0));
    let (out, _) = run(&fixed(3).guard(&COUNT), &[Err(Fault::Invalid)]).await;
    assert_eq!(out.unwrap_err().stop_reason(), StopReason::NotRetryable);
    // Asked about the first attempt only; told its outcome.
    assert_eq!(COUNT.0.load(Ordering::Relaxed), 1);
    assert_eq!(COUNT.1.load(Ordering::Relaxed), 1);
}

#[derive(Debug)]
struct Counting(AtomicU32, AtomicU32);

impl Guard for Counting {
    fn admit(&self, _: &NextAttempt) -> Admit {
        self.0.fetch_add(1, Ordering::Relaxed);
        Admit::Go
    }
    fn observe(&self, _: &Outcome) {
        self.1.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn policies_with_different_guards_differ() {
    static A: Counting = Counting(AtomicU32::new(0), AtomicU32::new(0));
    static B: Counting = Counting(AtomicU32::new(0), AtomicU32::new(0));
    assert_eq!(Policy::new().guard(&A), Policy::new().guard(&A));
    assert_ne!(Policy::new().guard(&A), Policy::new().guard(&B));
    assert!(format!("{:?}", Policy::new().guard(&A)).contains("Counting"));
}

/// The shape a shared rate-limit cooldown takes on the extension point
/// (the real one comes with the provider guards): a `RateLimited` hint
/// closes it until then (never earlier), and every call waits for it to
/// reopen, beyond what it already plans to wait.
#[derive(Debug)]
struct ToyCooldown {
    until: Mutex<Option<std::time::Instant>>,
}

impl Guard for ToyCooldown {
    fn admit(&self, next: &NextAttempt) -> Admit {
        let ready_at = next.now + next.wait;
        match *self.until.lock().unwrap() {
            Some(until) if until > ready_at => {
                let wait = until - ready_at;
                if wait > next.max_retry_after
                    || next.deadline_left.is_some_and(|left| wait >= left)
                {
                    Admit::Stop(StopReason::Guard)
                } else {
                    Admit::Wait(wait)
                }
            }
            _ => Admit::Go,
        }
    }

    fn observe(&self, outcome: &Outcome) {
        if let AttemptResult::Failure {
            class: ErrorClass::RateLimited,
            hint: Some(hint),
            ..
        } = outcome.result
        {
            let mut until = self.until.lock().unwrap();
            let closes = outcome.now + hint;
            *until = Some(until.map_or(closes, |until| until.max(closes)));
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_cooldown_closed_by_one_calls_hint_holds_back_another_call() {
    static COOLDOWN: ToyCooldown = ToyCooldown {
        until: Mutex::new(None),
    };
    let policy = fixed(3).guard(&COOLDOWN);
    let start = Instant::now();
    let first = async {
        let mut hinted = false;
        let mut starts = Vec::new();
        let out = policy
            .retry(|| {
                starts.push(start.elapsed());
                let result = if std::mem::replace(&mut hinted, true) {
                    Ok(1)
                } else {
                    Err(Fault::RateLimited(Duration::from_secs(2)))
                };
                async move { result }
            })
            .await;
        (out, starts)
    };
    let second = async {
        tokio::time::sleep(ms(100)).await;
        let mut starts = Vec::new();
        let out = policy
            .retry(|| {
                starts.push(start.elapsed());
                async { Ok::<_, Fault>(2) }
            })
            .await;
        (out, starts)
    };
    let ((a, a_starts), (b, b_starts)) = tokio::join!(first, second);
    assert_eq!((a, b), (Ok(1), Ok(2)));
    // The hinted call waits its hint and backoff, no more: the cooldown
    // asks for nothing beyond what it planned.
    assert_eq!(a_starts, [ms(0), ms(2000 + 10)]);
    // The other call's first attempt waits for the cooldown to reopen.
    assert_eq!(b_starts, [ms(2000)]);
}

#[tokio::test(start_paused = true)]
async fn a_guard_sees_the_calls_clock_deadline_and_longest_hint() {
    #[derive(Debug)]
    struct Seen(Mutex<Vec<NextAttempt>>);
    impl Guard for Seen {
        fn admit(&self, next: &NextAttempt) -> Admit {
            self.0.lock().unwrap().push(*next);
            Admit::Go
        }
        fn observe(&self, _: &Outcome) {}
    }
    static SEEN: Seen = Seen(Mutex::new(Vec::new()));
    let policy = fixed(2)
        .deadline(Duration::from_secs(1))
        .max_retry_after(Duration::from_secs(5))
        .guard(&SEEN);
    let start = Instant::now().into_std();
    let (out, _) = run(&policy, &[Err(Fault::Transient), Ok(4)]).await;
    assert_eq!(out.unwrap(), 4);
    let seen = SEEN.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        (seen[0].now, seen[0].deadline_left),
        (start, Some(Duration::from_secs(1)))
    );
    assert_eq!(seen[1].max_retry_after, Duration::from_secs(5));
    assert_eq!(
        seen[1].wait,
        ms(10),
        "asked at the retry's decision, before its backoff"
    );
}
