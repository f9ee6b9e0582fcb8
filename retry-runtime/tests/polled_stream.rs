//! The poll-based attempt driver carries a retried *stream*: a toy one,
//! retried before its first item and never after, with an idle timer
//! between items, built on the public `PollDriver` alone — the engine's decisions and
//! statistics, the guards' pacing, the attempt context around each poll —
//! with no retry loop of its own. On tokio's paused clock.
use std::cell::RefCell;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::stream::{self, BoxStream, Stream, StreamExt};
use tenacious_runtime::poll::PollDriver;
use tenacious_runtime::stats::CallStats;
use tenacious_runtime::{
    Admit, Attempt, Classify, Elapsed, ErrorClass, Guard, Jitter, NextAttempt, Outcome, Policy,
    RetryBudget, StopReason,
};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Overloaded,
    Stalled,
    Invalid,
}

impl Classify for Fault {
    fn classify(&self) -> ErrorClass {
        match self {
            Fault::Overloaded | Fault::Stalled => ErrorClass::Transient,
            Fault::Invalid => ErrorClass::Invalid,
        }
    }
}

impl From<Elapsed> for Fault {
    fn from(_: Elapsed) -> Self {
        Fault::Stalled
    }
}

/// A stream `open` opens, retried until its first item; after that an
/// error or a stall ends it. `idle` bounds the wait for each item.
struct Retried<'p, O> {
    polled: Pin<Box<PollDriver<'p, Fault>>>,
    open: O,
    stream: Option<BoxStream<'static, Result<u32, Fault>>>,
    idle: Duration,
    committed: bool,
    done: bool,
}

impl<'p, O: FnMut() -> BoxStream<'static, Result<u32, Fault>>> Retried<'p, O> {
    fn new(policy: &'p Policy, idle: Duration, open: O) -> Self {
        Self {
            polled: Box::pin(PollDriver::new(policy)),
            open,
            stream: None,
            idle,
            committed: false,
            done: false,
        }
    }

    /// The attempt failed with `fault`: retry it, or end the stream.
    fn failed(&mut self, fault: Fault) -> Option<Poll<Option<Result<u32, Fault>>>> {
        self.stream = None;
        if self.committed {
            self.done = true;
            return Some(Poll::Ready(Some(Err(fault))));
        }
        match self.polled.as_mut().finish(Err::<(), _>(fault)) {
            ControlFlow::Break(result) => {
                self.done = true;
                Some(Poll::Ready(result.err().map(Err)))
            }
            ControlFlow::Continue(()) => None,
        }
    }
}

impl<O: FnMut() -> BoxStream<'static, Result<u32, Fault>> + Unpin> Stream for Retried<'_, O> {
    type Item = Result<u32, Fault>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            if this.stream.is_none() {
                match this.polled.as_mut().poll_start(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(last)) => {
                        this.done = true;
                        return Poll::Ready(last.map(Err));
                    }
                    Poll::Ready(Ok(())) => {}
                }
                let open = &mut this.open;
                this.stream = Some(this.polled.as_mut().in_attempt(open));
                this.polled.as_mut().arm(this.idle);
            }
            let stream = this.stream.as_mut().expect("opened");
            let item = this
                .polled
                .as_mut()
                .in_attempt(|| stream.poll_next_unpin(cx));
            match item {
                Poll::Ready(Some(Ok(item))) => {
                    if !this.committed {
                        this.committed = true;
                        let _ = this.polled.as_mut().finish(Ok::<_, Fault>(()));
                    }
                    this.polled.as_mut().arm(this.idle);
                    return Poll::Ready(Some(Ok(item)));
                }
                Poll::Ready(Some(Err(fault))) => {
                    if let Some(end) = this.failed(fault) {
                        return end;
                    }
                }
                Poll::Ready(None) => {
                    if !this.committed {
                        let _ = this.polled.as_mut().finish(Ok::<_, Fault>(()));
                    }
                    this.done = true;
                    return Poll::Ready(None);
                }
                Poll::Pending => {
                    if this.polled.as_mut().poll_timer(cx).is_pending() {
                        return Poll::Pending;
                    }
                    this.polled.as_mut().note_timeout();
                    if let Some(end) = this.failed(Fault::Stalled) {
                        return end;
                    }
                }
            }
        }
    }
}

fn items(items: &[Result<u32, Fault>]) -> BoxStream<'static, Result<u32, Fault>> {
    stream::iter(items.to_vec()).boxed()
}

const fn fixed(max: u32) -> Policy {
    Policy::new()
        .max(max)
        .base(Duration::from_millis(100))
        .jitter(Jitter::None)
}

#[tokio::test(start_paused = true)]
async fn errors_before_the_first_item_are_retried_with_the_attempt_context_set() {
    static STATS: CallStats = CallStats::new("polled stream");
    let policy = fixed(3).stats(&STATS);
    let seen = RefCell::new(Vec::new());
    let mut opens = 0;
    let retried = Retried::new(&policy, Duration::from_secs(1), || {
        opens += 1;
        let attempt = Attempt::current().expect("opened inside the attempt");
        seen.borrow_mut().push(attempt.number());
        if opens < 3 {
            items(&[Err(Fault::Overloaded)])
        } else {
            items(&[Ok(1), Ok(2), Ok(3)])
        }
    });
    let start = Instant::now();
    let out: Vec<_> = retried.collect().await;
    assert_eq!(out, [Ok(1), Ok(2), Ok(3)]);
    assert_eq!(*seen.borrow(), [1, 2, 3]);
    assert_eq!(start.elapsed(), Duration::from_millis(100 + 200));
    let stats = STATS.snapshot();
    assert_eq!(
        (stats.calls(), stats.attempts(), stats.retries()),
        (1, 3, 2)
    );
    assert_eq!(stats.recovered(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_stall_before_the_first_item_times_the_attempt_out_and_is_retried() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(100);
    let policy = fixed(3).budget(&BUDGET);
    let mut opens = 0;
    let charged = AtomicU32::new(0);
    let retried = Retried::new(&policy, Duration::from_secs(1), || {
        opens += 1;
        if opens == 1 {
            stream::pending().boxed()
        } else {
            // The retry after a timed-out attempt took 10 tokens.
            charged.store(100 - BUDGET.balance(), Ordering::Relaxed);
            items(&[Ok(7)])
        }
    });
    let start = Instant::now();
    let out: Vec<_> = retried.collect().await;
    assert_eq!(out, [Ok(7)]);
    assert_eq!(start.elapsed(), Duration::from_millis(1000 + 100));
    assert_eq!(charged.load(Ordering::Relaxed), 10);
    assert_eq!(BUDGET.balance(), 100, "the success gave the 10 back");
}

#[tokio::test(start_paused = true)]
async fn after_the_first_item_an_error_ends_the_stream_and_nothing_repeats() {
    let policy = fixed(3);
    let mut opens = 0;
    let retried = Retried::new(&policy, Duration::from_secs(1), || {
        opens += 1;
        items(&[Ok(1), Ok(2), Err(Fault::Overloaded), Ok(3)])
    });
    let out: Vec<_> = retried.collect().await;
    assert_eq!(out, [Ok(1), Ok(2), Err(Fault::Overloaded)]);
    assert_eq!(opens, 1);
}

#[tokio::test(start_paused = true)]
async fn an_error_the_policy_does_not_retry_ends_the_stream_at_once() {
    let policy = fixed(3);
    let mut opens = 0;
    let retried = Retried::new(&policy, Duration::from_secs(1), || {
        opens += 1;
        items(&[Err(Fault::Invalid)])
    });
    let out: Vec<_> = retried.collect().await;
    assert_eq!((out, opens), (vec![Err(Fault::Invalid)], 1));
}

#[derive(Debug)]
struct SlowStart(AtomicU32);

impl Guard for SlowStart {
    fn admit(&self, next: &NextAttempt) -> Admit {
        match (next.attempt, next.recheck) {
            (1, false) => Admit::Wait(Duration::from_millis(500)),
            (2, false) => Admit::Go,
            (_, true) => Admit::Go,
            _ => Admit::Stop(StopReason::Guard),
        }
    }
    fn observe(&self, _: &Outcome) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[tokio::test(start_paused = true)]
async fn the_guards_pace_the_stream_as_they_pace_a_call() {
    static GUARD: SlowStart = SlowStart(AtomicU32::new(0));
    let policy = fixed(5).guard(&GUARD);
    let start = Instant::now();
    let opened_at = RefCell::new(Vec::new());
    let retried = Retried::new(&policy, Duration::from_secs(1), || {
        opened_at.borrow_mut().push(start.elapsed());
        items(&[Err(Fault::Overloaded)])
    });
    let out: Vec<_> = retried.collect().await;
    // Waited 500 ms before the first open; the third attempt was refused
    // at its decision.
    assert_eq!(out, [Err(Fault::Overloaded)]);
    assert_eq!(
        *opened_at.borrow(),
        [Duration::from_millis(500), Duration::from_millis(600)]
    );
    assert_eq!(GUARD.0.load(Ordering::Relaxed), 2);
}
