//! Pacing: asking a policy's [`Guard`] just before an attempt, when it
//! asked to be asked then — before a call's first attempt, and after a
//! retry's wait when it answered [`Admit::Wait`] or [`Admit::Later`] at the
//! retry's decision (see `Engine::decide`). [`pace`] for the async loops
//! (which await [`Guard::admit_async`] there), [`pace_blocking`] for the
//! blocking ones, both built on [`Pacer`], which a poll-based driver polls
//! too. A call whose policy has no guard skips them at once.
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Sleep;

use crate::driver::{sleep, sleep_blocking};
use crate::engine::Engine;
use crate::guard::block_on;
use crate::{Admit, Guard, PendingAdmit, StopReason};

/// What to do after the guard's answer.
enum Then {
    /// Start the attempt (or, if the call stopped, let `resume` return).
    Go,
    /// Wait this long, then ask again.
    Wait(Duration),
}

/// Before an attempt of an async loop: asks the policy's guard, if it
/// wants asking, until it lets the attempt go (waiting as it says) or stops
/// the call, which the loop's next `resume` then ends.
#[inline]
pub async fn pace(engine: &mut Engine<'_>) {
    if !engine.wants_pace() {
        return;
    }
    let mut pacer = std::pin::pin!(Pacer::new());
    std::future::poll_fn(|cx| pacer.as_mut().poll_pace(engine, cx)).await;
}

pin_project! {
    /// [`pace`] as a state machine polled with the engine it paces: what
    /// the async loops await, and what a poll-based driver (`polled.rs`)
    /// polls. Holds the guard's pending async answer, or the timer of a
    /// wait it asked for, each boxed when there is one: 32 bytes whether the
    /// policy has a guard or not.
    pub(crate) struct Pacer {
        // Whether the guard was asked about this attempt already.
        asked: bool,
        pending: Option<PendingAdmit<'static>>,
        timer: Option<Pin<Box<Sleep>>>,
    }
}

impl std::fmt::Debug for Pacer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pacer")
            .field("asked", &self.asked)
            .field("pending", &self.pending.is_some())
            .field("timer", &self.timer)
            .finish()
    }
}

impl Pacer {
    pub(crate) const fn new() -> Self {
        Self {
            asked: false,
            pending: None,
            timer: None,
        }
    }

    /// Ready once the engine's guard let the next attempt go or stopped
    /// the call (see [`Engine::late`]); at once when it does not want
    /// asking. Ready leaves the pacer as new, for the next attempt.
    pub(crate) fn poll_pace(
        self: Pin<&mut Self>,
        engine: &mut Engine<'_>,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        let this = self.project();
        let Some(guard) = engine.pacing_guard() else {
            return Poll::Ready(());
        };
        loop {
            if let Some(timer) = this.timer {
                ready!(timer.as_mut().poll(cx));
                *this.timer = None;
            }
            let admit = if let Some(pending) = this.pending {
                let admit = ready!(pending.as_mut().poll(cx));
                *this.pending = None;
                admit
            } else {
                // Asked again after the retry's decision, or after a wait.
                let recheck = *this.asked || engine.attempts() > 0;
                *this.asked = true;
                let next = engine.next_attempt(recheck);
                match guard.admit(&next) {
                    Admit::Later => {
                        *this.pending = Some(guard.admit_async(next));
                        continue;
                    }
                    admit => admit,
                }
            };
            match settle(engine, admit) {
                Then::Go => {
                    *this.asked = false;
                    return Poll::Ready(());
                }
                Then::Wait(delay) => *this.timer = Some(Box::pin(sleep(delay))),
            }
        }
    }
}

/// [`pace`] for a blocking loop: it sleeps the thread, and blocks it on
/// [`Guard::admit_async`]. Written out rather than driving a [`Pacer`]:
/// the pacer's timer is tokio's, and a blocking call may run outside any
/// runtime.
#[inline]
pub fn pace_blocking(engine: &mut Engine<'_>) {
    let Some(guard) = engine.pacing_guard() else {
        return;
    };
    let mut recheck = engine.attempts() > 0;
    loop {
        let next = engine.next_attempt(recheck);
        let mut admit = guard.admit(&next);
        if admit == Admit::Later {
            admit = block_on(guard.admit_async(next));
        }
        match settle(engine, admit) {
            Then::Go => return,
            Then::Wait(delay) => sleep_blocking(delay),
        }
        recheck = true;
    }
}

/// Applies the guard's answer. Before the first attempt the call has no
/// error to return, so it always makes that attempt: a refusal is taken as
/// a go, and a wait that would leave no room before the deadline is
/// skipped. Later, a refusal (or such a wait) stops the call.
fn settle(engine: &mut Engine<'_>, admit: Admit) -> Then {
    let first = engine.attempts() == 0;
    let stop = match admit {
        Admit::Go | Admit::Later => None,
        Admit::Stop(reason) => Some(reason),
        Admit::Wait(delay) => {
            if !engine.leaves_no_room(crate::backoff::saturating_nanos(delay)) {
                return Then::Wait(delay);
            }
            Some(StopReason::Deadline)
        }
    };
    engine.paced();
    if let Some(reason) = stop
        && !first
    {
        engine.give_up_before_attempt(reason, true);
    }
    Then::Go
}

impl Engine<'_> {
    /// The policy's guard, if it is to be asked before the next attempt.
    #[inline]
    pub(crate) fn pacing_guard(&self) -> Option<&'static dyn Guard> {
        if self.wants_pace() {
            self.guard()
        } else {
            None
        }
    }
}

/// The wait before an attempt of an async `Policy` loop: the backoff after
/// a failed attempt (no timer for a zero delay), then the guard's pacing
/// if it wants asking; awaited only when there is a wait or a guard. One
/// future for both, whose stages share their space, so a loop has one
/// await point between attempts and its future grows by two words for the
/// guard: each await point a loop adds, and each byte, costs its happy
/// path too (`scripts/instructions.sh policy`, `benches/overhead.rs`).
pub(crate) fn backoff<'e, 'p>(engine: &'e mut Engine<'p>, delay: Duration) -> Backoff<'e, 'p> {
    let stage = if delay.is_zero() {
        Stage::Pacing {
            pacer: Pacer::new(),
        }
    } else {
        Stage::Sleeping {
            timer: sleep(delay),
        }
    };
    Backoff { engine, stage }
}

pin_project! {
    /// The future of [`backoff`].
    #[derive(Debug)]
    #[must_use = "a backoff does nothing unless awaited"]
    pub(crate) struct Backoff<'e, 'p> {
        engine: &'e mut Engine<'p>,
        #[pin]
        stage: Stage,
    }
}

pin_project! {
    /// Where a [`Backoff`] is: on its timer, then pacing.
    #[derive(Debug)]
    #[project = StageProj]
    enum Stage {
        Sleeping {
            #[pin]
            timer: Sleep,
        },
        Pacing {
            #[pin]
            pacer: Pacer,
        },
    }
}

impl Future for Backoff<'_, '_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        loop {
            match this.stage.as_mut().project() {
                StageProj::Sleeping { timer } => {
                    ready!(timer.poll(cx));
                    this.stage.set(Stage::Pacing {
                        pacer: Pacer::new(),
                    });
                }
                StageProj::Pacing { pacer } => return pacer.poll_pace(this.engine, cx),
            }
        }
    }
}
