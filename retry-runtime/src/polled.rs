//! The poll-based attempt driver: [`Polled`], one retried call driven from
//! a `poll` method instead of an `async` loop, for what is retried over
//! many polls and is no single future — a stream of items with an idle
//! timer between them. It runs the same pieces as the loops: the engine's
//! decision and statistics, the guards' pacing (`Pacer`), the attempt
//! context around each poll of the attempt, and the backoff's timer.
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

use crate::clock::Clock;
use crate::context::{Frame, scoped_blocking};
use crate::engine::Engine;
use crate::failure::Provenance;
use crate::hooks::{always, ignore};
use crate::pace::Pacer;
use crate::{Classify, Policy, StopReason};

/// Where a [`Polled`] call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before an attempt: the guard's pacing, then the attempt may start.
    Pacing,
    /// The backoff after a failed attempt.
    Backoff,
    /// An attempt is running.
    Attempting,
    /// The call is over.
    Done,
}

pin_project! {
    /// One retried call driven by polls (async, on tokio's clock).
    ///
    /// The owner polls [`poll_start`](Polled::poll_start) until an attempt
    /// may start (the guards' waits and the backoff are waited out there),
    /// runs the attempt's work — each poll of it — inside
    /// [`in_attempt`](Polled::in_attempt), which sets the attempt context,
    /// and hands each attempt's outcome to [`finish`](Polled::finish),
    /// which decides as `#[retry]` does and keeps a failed attempt's error
    /// until the next attempt starts. [`arm`](Polled::arm) and
    /// [`poll_timer`](Polled::poll_timer) give an attempt a timer of its
    /// own (time to the first item, the idle time between items).
    ///
    /// `E` is the attempt's error type.
    #[derive(Debug)]
    pub struct Polled<'p, E> {
        engine: Engine<'p>,
        phase: Phase,
        // The attempt context's count of nested calls with incomplete
        // fingerprints, kept across the polls of one attempt.
        unnamed_calls: u32,
        // The failed attempt's error, through the backoff.
        last: Option<E>,
        #[pin]
        pacer: Pacer,
        // The backoff's timer, then the attempt's own.
        #[pin]
        timer: Option<Sleep>,
    }
}

impl<'p, E: Classify> Polled<'p, E> {
    /// A call under `policy`, before its first attempt. Made inside a
    /// running attempt, it is nested in it (see [`Nested`](crate::Nested)).
    #[must_use]
    pub fn new(policy: &'p Policy) -> Self {
        Self::from_engine(Engine::new(policy, Clock::Tokio))
    }

    /// A call `engine` started (on tokio's clock), before its first attempt.
    pub(crate) fn from_engine(engine: Engine<'p>) -> Self {
        Self {
            engine,
            phase: Phase::Pacing,
            unnamed_calls: 0,
            last: None,
            pacer: Pacer::new(),
            timer: None,
        }
    }

    /// Ready with `Ok(())` when the next attempt may start: the backoff
    /// after the last one has passed and the policy's guard let it go.
    /// Ready with `Err(Some(error))` — the last attempt's — when the call
    /// gave up before it instead (a guard refused it, or the wait ended
    /// too close to the deadline), as a loop's `resume` does; with
    /// `Err(None)` when a guard refused the first attempt of a call made
    /// [`refusable`](Polled::refusable) (see [`Engine::stop_reason`]).
    ///
    /// # Panics
    ///
    /// Once the call is over ([`finish`](Polled::finish) returned `Break`),
    /// or while an attempt runs.
    pub fn poll_start(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Option<E>>> {
        let mut this = self.project();
        if *this.phase == Phase::Backoff {
            if let Some(timer) = this.timer.as_mut().as_pin_mut() {
                ready!(timer.poll(cx));
            }
            this.timer.set(None);
            *this.phase = Phase::Pacing;
        }
        assert_eq!(
            *this.phase,
            Phase::Pacing,
            "poll_start between attempts only"
        );
        // Asked here, inline, so a call without guards makes no call to
        // the pacer (`wants_pace` reads the policy's guard byte).
        if this.engine.wants_pace() {
            ready!(this.pacer.poll_pace(this.engine, cx));
        }
        if this.engine.late() {
            *this.phase = Phase::Done;
            return Poll::Ready(Err(this.last.take()));
        }
        *this.last = None;
        *this.unnamed_calls = 0;
        *this.phase = Phase::Attempting;
        this.engine.attempt_starts();
        Poll::Ready(Ok(()))
    }

    /// Lets a guard refuse the first attempt (the call's error type can
    /// say so, [`Classify::refused`]): [`poll_start`](Polled::poll_start)
    /// then ends with `Err(None)`. Without it a refusal of the first
    /// attempt is taken as a go, as the loops take it.
    pub fn refusable(&mut self) {
        self.engine.set_refusable();
    }

    /// Runs `f` — a poll of the attempt's work — with the attempt context
    /// set, so [`Attempt::current`](crate::Attempt::current) describes the
    /// attempt and calls nested in it are held to one attempt.
    pub fn in_attempt<R>(self: Pin<&mut Self>, f: impl FnOnce() -> R) -> R {
        let this = self.project();
        let mut frame = Frame {
            engine: this.engine,
            unnamed_calls: *this.unnamed_calls,
        };
        let out = scoped_blocking(&mut frame, f);
        *this.unnamed_calls = frame.unnamed_calls;
        out
    }

    /// The attempt ended with `result`: `Break(result)` to hand it on (a
    /// success, or the error the call gives up with), or `Continue(())` to
    /// poll [`poll_start`](Polled::poll_start) for the next attempt. Counted
    /// in the statistics and told to the guards as the loops' are.
    pub fn finish<T>(self: Pin<&mut Self>, result: Result<T, E>) -> ControlFlow<Result<T, E>> {
        let mut this = self.project();
        this.timer.set(None);
        match this
            .engine
            .step_recording(result, always, ignore, |_, _, _, _| {})
        {
            ControlFlow::Break(result) => {
                *this.phase = Phase::Done;
                ControlFlow::Break(result)
            }
            ControlFlow::Continue((delay, error)) => {
                *this.last = Some(error);
                *this.phase = Phase::Backoff;
                if !delay.is_zero() {
                    this.timer.set(Some(tokio::time::sleep(delay)));
                }
                ControlFlow::Continue(())
            }
        }
    }

    /// [`finish`](Polled::finish) for a call that gives up with a
    /// [`Failure`](crate::Failure): each failed attempt is recorded in
    /// `provenance`.
    pub(crate) fn finish_recorded<T>(
        self: Pin<&mut Self>,
        provenance: &mut Provenance,
        result: Result<T, E>,
    ) -> ControlFlow<Result<T, E>> {
        let mut this = self.project();
        this.timer.set(None);
        match this
            .engine
            .step_recording(result, always, ignore, |n, error, class, delay| {
                provenance.record(n, error, class, delay);
            }) {
            ControlFlow::Break(result) => {
                *this.phase = Phase::Done;
                ControlFlow::Break(result)
            }
            ControlFlow::Continue((delay, error)) => {
                *this.last = Some(error);
                *this.phase = Phase::Backoff;
                if !delay.is_zero() {
                    this.timer.set(Some(tokio::time::sleep(delay)));
                }
                ControlFlow::Continue(())
            }
        }
    }

    /// The attempt failed with `error` and the call stops for `reason`,
    /// whatever the policy would decide (see `Engine::stop_after`); the
    /// attempt is recorded in `provenance`.
    pub(crate) fn stop_after(
        self: Pin<&mut Self>,
        provenance: &mut Provenance,
        error: &E,
        reason: StopReason,
    ) {
        let mut this = self.project();
        this.timer.set(None);
        *this.phase = Phase::Done;
        this.engine
            .stop_after(error, reason, |n, error, class, delay| {
                provenance.record(n, error, class, delay);
            });
    }

    /// The attempt succeeded (a stream its consumer dropped after content
    /// came); no further attempt is made.
    pub(crate) fn settle_success(self: Pin<&mut Self>) {
        let _ = self.finish(Ok::<(), E>(()));
    }

    /// Disarms the attempt's own timer.
    pub(crate) fn disarm(self: Pin<&mut Self>) {
        self.project().timer.set(None);
    }

    /// The engine of the call, to read its clock.
    pub(crate) fn engine_mut(self: Pin<&mut Self>) -> &mut Engine<'p> {
        self.project().engine
    }

    /// Whether the call is over.
    pub(crate) fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Marks the running attempt as out of its time: its retry costs the
    /// budget what a timed-out attempt's does.
    pub fn note_timeout(self: Pin<&mut Self>) {
        self.project().engine.note_timeout();
    }

    /// Arms the attempt's own timer to fire `after` from now (re-arming it
    /// if it runs): a stream's time to its first item, or its idle limit,
    /// reset on each item.
    pub fn arm(self: Pin<&mut Self>, after: Duration) {
        let mut this = self.project();
        // A limit past what the clock can hold: 30 years, tokio's own
        // "far future".
        let now = Instant::now();
        let at = now
            .checked_add(after)
            .unwrap_or_else(|| now + Duration::from_secs(30 * 365 * 86_400));
        match this.timer.as_mut().as_pin_mut() {
            Some(timer) => timer.reset(at),
            None => this.timer.set(Some(tokio::time::sleep_until(at))),
        }
    }

    /// Ready once the timer [`arm`](Polled::arm) set has fired; pending
    /// forever when none is armed.
    pub fn poll_timer(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.project().timer.as_pin_mut() {
            Some(timer) => timer.poll(cx),
            None => Poll::Pending,
        }
    }

    /// How long the running attempt may take: the policy's timeout, cut to
    /// what is left of its deadline; `None` without either.
    #[must_use]
    pub fn attempt_limit(&self) -> Option<Duration> {
        self.engine.attempt_limit()
    }

    /// The engine of the call: attempts made, why it stopped.
    #[must_use]
    pub const fn engine(&self) -> &Engine<'p> {
        &self.engine
    }
}
