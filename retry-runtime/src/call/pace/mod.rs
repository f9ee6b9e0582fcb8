//! Pacing: asking a policy's guards, in order, just before an attempt,
//! when they asked to be asked then — before a call's first attempt, and
//! after a retry's wait when one answered [`Admit::Wait`] or
//! [`Admit::Later`] at the retry's decision (see `Engine::decide`).
//!
//! After any guard's wait the whole chain is asked again, from the first
//! guard: what the others said before the wait may no longer hold (a
//! breaker opened, a cooldown closed meanwhile). The guards that keep what
//! they took for the attempt (a throttle's token, a cooldown's turn, for
//! the time the wait ends) are asked again as a recheck
//! ([`NextAttempt::recheck`](crate::NextAttempt::recheck)); a breaker is
//! asked afresh. Its half-open probe slot, taken here, is held through the
//! waits, and the breaker, asked again, knows it for the call's own: the
//! call holding the slot is the probe. One taken at a retry's decision is
//! given back if a guard asks the retry to wait, and taken afresh here. A
//! guard whose answer was awaited (a throttle's queue, a store's turn) is
//! a wait too: the guards before it are asked again once it lets the
//! attempt go, and it is not (what it gave is for now). No call holds a
//! throttle's token reserved at an outage's rate while the breaker refuses
//! it: an async call's token is not reserved at the retry's decision but
//! queued after its backoff, and re-timed as the rate changes (see
//! `Throttle`). What the recovery from an outage pays is the breaker's
//! open period, as it should (the README's "After any wait" figures).
//! [`pace`] for the async loops
//! (which await [`Guard::admit_async`](crate::Guard::admit_async) there), [`pace_blocking`] for the
//! blocking ones, both built on [`Pacer`], which a poll-based driver polls
//! too. A call whose policy has no guard skips them at once.
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Sleep;

use crate::call::driver::{sleep, sleep_blocking};
use crate::engine::{ALL_HELD, BUDGET_AT, Engine, GIVEN_BACK_ON_WAIT, ask};
use crate::guard::block_on;
use sync_wrapper::SyncWrapper;

mod permit;
use permit::{permit_at_once, permit_blocking, poll_permit};

use crate::{Admit, Guard, PendingAdmit, StopReason};

/// What to do after a guard's answer.
enum Then {
    /// Ask the next guard of the chain.
    Next,
    /// Wait this long, then ask the chain again from its first guard.
    Wait(Duration),
    /// Stop pacing: the call stopped (see [`Engine::late`] and
    /// [`Engine::refusal`]).
    Stop,
}

/// Before an attempt of an async loop: asks the policy's guards, in order,
/// if they want asking, until each lets the attempt go (waiting as it
/// says) or one stops the call, which the loop's next `resume` (or, before
/// the first attempt, its refusal check) then ends.
#[inline]
pub async fn pace(engine: &mut Engine<'_>) {
    if !engine.wants_pace() || permit_at_once(engine) {
        return;
    }
    let mut pacer = std::pin::pin!(Pacer::new());
    std::future::poll_fn(|cx| pacer.as_mut().poll_pace(engine, cx)).await;
}

pin_project! {
    /// [`pace`] as a state machine polled with the engine it paces: what
    /// the async loops await, and what the poll driver (`poll.rs`)
    /// polls. Holds which guard of the chain it is asking, that guard's
    /// pending async answer, or the timer of a wait it asked for, each
    /// boxed when there is one: 32 bytes whether the policy has guards or
    /// not.
    pub(crate) struct Pacer {
        // The guard of the chain being asked.
        at: u8,
        // The chain's guards (a bit each) that hold what they took for this
        // attempt: asked again as a recheck, told it was not made if the
        // call stops.
        held: u8,
        // The chain's guards (a bit each) whose awaited answer let the
        // attempt go since the last wait: the guards before them are asked
        // again, and they are not (see the module's docs). And `STARTED`:
        // whether the pacer read the guards the engine holds
        // (`Engine::held`), once, when it starts.
        went: u8,
        // Whether the call holds a probe slot of the policy's breaker, of
        // the half-open phase `probe`.
        probing: bool,
        probe: u32,
        // Polled through `&mut` only, so it need not be `Sync` for the
        // pacer to be.
        pending: Option<SyncWrapper<PendingAdmit<'static>>>,
        timer: Option<Pin<Box<Sleep>>>,
    }
}

impl std::fmt::Debug for Pacer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pacer")
            .field("at", &self.at)
            .field("held", &self.held)
            .field("went", &self.went)
            .field("probe", &self.probing.then_some(self.probe))
            .field("pending", &self.pending.is_some())
            .field("timer", &self.timer)
            .finish()
    }
}

impl Pacer {
    pub(crate) const fn new() -> Self {
        Self {
            at: 0,
            held: 0,
            went: 0,
            probing: false,
            probe: 0,
            pending: None,
            timer: None,
        }
    }

    /// Ready once every guard of the engine's chain let the next attempt
    /// go, or one stopped the call (see [`Engine::late`]); at once when
    /// they do not want asking. Ready leaves the pacer as new, for the
    /// next attempt.
    pub(crate) fn poll_pace(
        self: Pin<&mut Self>,
        engine: &mut Engine<'_>,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        let this = self.project();
        if !engine.wants_pace() {
            return Poll::Ready(());
        }
        if *this.went == 0 && this.pending.is_none() && permit_at_once(engine) {
            return Poll::Ready(());
        }
        let chain = engine.chain();
        if *this.went & STARTED == 0 {
            *this.went = STARTED;
            *this.held = engine.held();
        }
        loop {
            if let Some(timer) = this.timer {
                ready!(timer.as_mut().poll(cx));
                *this.timer = None;
            }
            let at = usize::from(*this.at);
            let Some(Some(guard)) = chain.get(at) else {
                if at < chain.len() {
                    *this.at += 1;
                    continue;
                }
                if at == chain.len() {
                    // After the chain, a budget kept in a store that
                    // answered `Later` at the retry's decision.
                    if this.pending.is_none()
                        && let Some(budget) = engine.take_budget_later()
                    {
                        *this.pending = Some(SyncWrapper::new(
                            budget.admit_async(engine.next_attempt(false)),
                        ));
                    }
                    let admit = match this.pending {
                        Some(pending) => ready!(pending.get_mut().as_mut().poll(cx)),
                        None => Admit::Go,
                    };
                    *this.pending = None;
                    // A budget does not ask to wait: a wait is taken as a go.
                    let _ = settle(engine, admit, BUDGET_AT, *this.held);
                    *this.at += 1;
                    continue;
                }
                // Last, the permit of a concurrency limit.
                if ready!(poll_permit(engine, this.pending, *this.held, cx)) {
                    // It waited for it: the guards before it again.
                    *this.went = STARTED;
                    *this.at = 0;
                    continue;
                }
                engine.paced();
                (*this.at, *this.went, *this.held, *this.probing) = (0, 0, 0, false);
                return Poll::Ready(());
            };
            let bit = 1u8 << at;
            if *this.went & bit != 0 {
                *this.at += 1;
                continue;
            }
            let (admit, awaited) = if let Some(pending) = this.pending {
                let admit = ready!(pending.get_mut().as_mut().poll(cx));
                *this.pending = None;
                (admit, true)
            } else {
                let mut next = engine.next_attempt(*this.held & bit != 0);
                // Asked by an async call, just before its attempt: it can
                // queue (see `NextAttempt::queues`).
                next.queues = true;
                let mut probe = this.probing.then_some(*this.probe);
                let answer = ask_holding(engine, at, *guard, &next, &mut probe);
                (*this.probing, *this.probe) = (probe.is_some(), probe.unwrap_or(0));
                match answer {
                    Admit::Later => {
                        *this.pending = Some(SyncWrapper::new(guard.admit_async(next)));
                        continue;
                    }
                    admit => (admit, false),
                }
            };
            match settle(engine, admit, at, *this.held) {
                Then::Next => {
                    *this.held |= bit;
                    engine.owe(*this.held, *this.probing);
                    if awaited {
                        // Its answer may have taken a while: the guards
                        // before it are asked again.
                        *this.went |= bit;
                        *this.at = 0;
                    } else {
                        *this.at += 1;
                    }
                }
                Then::Wait(delay) => {
                    let given_back = given_back(*this.held, bit, *this.probing);
                    engine.tell_not_made(given_back, false);
                    // No permit is held through a wait: taken again after.
                    engine.release_permit();
                    *this.held = (*this.held & !given_back) | bit;
                    engine.owe(*this.held, *this.probing);
                    *this.timer = Some(Box::pin(sleep(delay)));
                    // After the wait, the whole chain again.
                    *this.went = STARTED;
                    *this.at = 0;
                }
                Then::Stop => {
                    engine.paced();
                    (*this.at, *this.went, *this.held, *this.probing) = (0, 0, 0, false);
                    return Poll::Ready(());
                }
            }
        }
    }
}

/// [`pace`] for a blocking loop: it sleeps the thread, and blocks it on
/// [`Guard::admit_async`](crate::Guard::admit_async). Written out rather
/// than driving a `Pacer`: the pacer's timer is tokio's, and a blocking
/// call may run outside any runtime.
#[inline]
pub fn pace_blocking(engine: &mut Engine<'_>) {
    if !engine.wants_pace() || permit_at_once(engine) {
        return;
    }
    let chain = engine.chain();
    let mut held = engine.held();
    let mut probe = None;
    // As the pacer's `went` (see there).
    let mut went = 0u8;
    let mut at = 0;
    loop {
        while at < chain.len() {
            let bit = 1u8 << at;
            let Some(guard) = chain[at].filter(|_| went & bit == 0) else {
                at += 1;
                continue;
            };
            let next = engine.next_attempt(held & bit != 0);
            let mut admit = ask_holding(engine, at, guard, &next, &mut probe);
            let awaited = admit == Admit::Later;
            if awaited {
                admit = block_on(guard.admit_async(next));
            }
            match settle(engine, admit, at, held) {
                Then::Next => {
                    held |= bit;
                    engine.owe(held, probe.is_some());
                    if awaited {
                        went |= bit;
                        at = 0;
                    } else {
                        at += 1;
                    }
                }
                Then::Wait(delay) => {
                    let given_back = given_back(held, bit, probe.is_some());
                    engine.tell_not_made(given_back, false);
                    engine.release_permit();
                    held = (held & !given_back) | bit;
                    engine.owe(held, probe.is_some());
                    sleep_blocking(delay);
                    went = 0;
                    at = 0;
                }
                Then::Stop => {
                    engine.paced();
                    return;
                }
            }
        }
        if let Some(budget) = engine.take_budget_later() {
            let admit = block_on(budget.admit_async(engine.next_attempt(false)));
            // A budget does not ask to wait: a wait is taken as a go.
            let _ = settle(engine, admit, BUDGET_AT, held);
        }
        if !permit_blocking(engine, held) {
            break;
        }
        // It waited for its permit: the guards before it again.
        went = 0;
        at = 0;
    }
    engine.paced();
}

/// In a [`Pacer`]'s `went`: it read the guards the engine holds. Above the
/// chain's four bits.
const STARTED: u8 = 0x80;

/// Asks the chain's guard at `at` about the next attempt: the policy's
/// breaker with the probe slot the call holds (`probe`, which it updates:
/// see [`Breaker::admit_holding`](crate::Breaker)), any other as
/// [`ask`] does.
fn ask_holding(
    engine: &Engine<'_>,
    at: usize,
    guard: &'static dyn crate::Guard,
    next: &crate::NextAttempt,
    probe: &mut Option<u32>,
) -> Admit {
    if at == 0
        && let Some(breaker) = engine.breaker()
    {
        if let Some(record) = guard.record() {
            record.register();
        }
        let (admit, held) = breaker.admit_holding(next, *probe);
        *probe = held;
        return admit;
    }
    ask(guard, next)
}

/// Of the guards in `held`, the ones that give back what they took when
/// the guard `bit` asks to wait: the breaker, unless the call holds one of
/// its probe slots in process (`probing`), which it keeps through the wait.
const fn given_back(held: u8, bit: u8, probing: bool) -> u8 {
    let mask = if probing { 0 } else { GIVEN_BACK_ON_WAIT };
    held & mask & !bit
}

/// Applies the answer of the chain's guard at `at`. A refusal (or a wait
/// that would leave no room before the deadline) stops the call, with the
/// guard's reason (or [`StopReason::Deadline`]); before the first attempt
/// it does so only when the call's error type can say it was refused
/// ([`Classify::refused`](crate::Classify::refused)) — else the call has no
/// error to return, and makes the attempt: the refusal is taken as a go
/// and such a wait is skipped. `held`: the chain's guards that hold what
/// they took for the attempt, told it is not made when the call stops.
fn settle(engine: &mut Engine<'_>, admit: Admit, at: usize, held: u8) -> Then {
    let stop = match admit {
        Admit::Go | Admit::Later => return Then::Next,
        Admit::Stop(reason) => reason,
        Admit::Wait(delay) => {
            if !engine.leaves_no_room(crate::clock::saturating_nanos(delay)) {
                return Then::Wait(delay);
            }
            StopReason::Deadline
        }
    };
    if engine.attempts() == 0 && !engine.refusable() {
        return Then::Next;
    }
    engine.give_up_before_attempt(stop, Some(at), held & ALL_HELD);
    Then::Stop
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
