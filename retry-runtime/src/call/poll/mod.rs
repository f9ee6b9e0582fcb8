//! The poll driver: one retried call driven from a `poll` method instead
//! of an `async` loop — for what is no single future the retry loop could
//! await: a tower service's response future, a stream retried until its
//! first item, a request whose attempts a client library polls. It runs
//! the pieces `#[retry]` runs (the engine's decisions and statistics, the
//! guards' pacing, the attempt context around each poll of the attempt,
//! the backoff's timer), so a call driven by it is retried, counted and
//! guarded as a `#[retry]` fn is: the tower adapter (`tenacious::tower`,
//! a crate of its own) and [`Policy::stream`](crate::Policy::stream) are
//! built on it.
//!
//! [`PollDriver`] is the driver; [`current_key`] gives the running call's
//! idempotency key to code polled inside its attempt.
//!
//! A future retried by hand on the driver (on tokio's clock):
//!
//! ```
//! use std::future::Future;
//! use std::io;
//! use std::ops::ControlFlow;
//! use std::pin::Pin;
//! use std::task::{Context, Poll, ready};
//! use std::time::Duration;
//!
//! use tenacious::poll::PollDriver;
//! use tenacious::{Attempt, Policy};
//!
//! /// One retried call of `make`'s futures, as an adapter's own future.
//! struct Retried<'p, F, Fut> {
//!     driver: Pin<Box<PollDriver<'p, io::Error>>>,
//!     make: F,
//!     attempt: Option<Pin<Box<Fut>>>,
//! }
//!
//! impl<F, Fut, T> Future for Retried<'_, F, Fut>
//! where
//!     F: FnMut() -> Fut + Unpin,
//!     Fut: Future<Output = io::Result<T>>,
//! {
//!     type Output = io::Result<T>;
//!
//!     fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
//!         let this = &mut *self;
//!         loop {
//!             let attempt = match &mut this.attempt {
//!                 Some(attempt) => attempt,
//!                 None => {
//!                     // The backoff after the last attempt, then the guards.
//!                     if let Err(last) = ready!(this.driver.as_mut().poll_start(cx)) {
//!                         return Poll::Ready(Err(last.expect("the call is not refusable")));
//!                     }
//!                     let make = &mut this.make;
//!                     this.attempt.insert(Box::pin(this.driver.as_mut().in_attempt(make)))
//!                 }
//!             };
//!             // Every poll of the attempt runs with its context set.
//!             let result = ready!(this.driver.as_mut().in_attempt(|| attempt.as_mut().poll(cx)));
//!             this.attempt = None;
//!             if let ControlFlow::Break(result) = this.driver.as_mut().finish(result) {
//!                 return Poll::Ready(result);
//!             }
//!         }
//!     }
//! }
//!
//! static POLICY: Policy = Policy::new().max(4).base(Duration::from_millis(100));
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let call = Retried {
//!     driver: Box::pin(PollDriver::new(&POLICY)),
//!     make: || async {
//!         let attempt = Attempt::current().expect("polled in the attempt's context");
//!         if attempt.number() < 3 {
//!             Err(io::Error::from(io::ErrorKind::ConnectionReset))
//!         } else {
//!             Ok(attempt.number())
//!         }
//!     },
//!     attempt: None,
//! };
//! assert_eq!(call.await.unwrap(), 3);
//! # }
//! ```
mod stream;
mod timer;

use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;
use tokio::time::Sleep;

use crate::call::context::{Frame, scoped_blocking, with_current};
use crate::call::pace::Pacer;
use crate::clock::Clock;
use crate::engine::Engine;
use crate::engine::hooks::{always, ignore};
use crate::{Classify, IdempotencyKey, Policy, Refused, StopReason};

/// Where a [`PollDriver`]'s call is.
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
    /// One retried call driven by polls (async, on tokio's clock): see the
    /// [module docs](self).
    ///
    /// The owner polls [`poll_start`](PollDriver::poll_start) until an
    /// attempt may start (the backoff and the guards' waits are waited out
    /// there), runs the attempt's work — each poll of it — inside
    /// [`in_attempt`](PollDriver::in_attempt), which sets the attempt
    /// context, and hands each attempt's outcome to
    /// [`finish`](PollDriver::finish), which decides as `#[retry]` does
    /// and keeps a failed attempt's error through the backoff.
    /// [`arm`](PollDriver::arm) and [`poll_timer`](PollDriver::poll_timer)
    /// give an attempt a timer of its own (the policy's timeout, a
    /// stream's idle time).
    ///
    /// `E` is the attempts' error type; `'p` the policy's borrow. A driver
    /// is `!Unpin`: pin it (`Box::pin`, `std::pin::pin!`, or a pinned
    /// field of the owner's future) before polling. Dropping it cancels the
    /// call: the guards get back what they held for it.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::io;
    /// use std::ops::ControlFlow;
    /// use std::pin::pin;
    /// use tenacious::Policy;
    /// use tenacious::poll::PollDriver;
    ///
    /// // The defaults: 3 attempts, a full-jitter backoff under 200 ms, 400 ms, ….
    /// static POLICY: Policy = Policy::new();
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let mut answers = [Err(io::ErrorKind::TimedOut.into()), Ok("done")].into_iter();
    /// let mut driver = pin!(PollDriver::<io::Error>::new(&POLICY));
    /// let answer = loop {
    ///     poll_fn(|cx| driver.as_mut().poll_start(cx)).await.expect("nothing refuses");
    ///     let result = driver.as_mut().in_attempt(|| answers.next().unwrap());
    ///     if let ControlFlow::Break(answer) = driver.as_mut().finish(result) {
    ///         break answer;
    ///     }
    /// };
    /// assert_eq!(answer.unwrap(), "done");
    /// assert_eq!(driver.attempts(), 2);
    /// # }
    /// ```
    #[derive(Debug)]
    pub struct PollDriver<'p, E> {
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

impl<'p, E: Classify> PollDriver<'p, E> {
    /// A call under `policy`, before its first attempt: not
    /// [`refusable`](PollDriver::refusable), no timer armed, its clock
    /// started only if the policy has a `timeout` or a `deadline`. Made
    /// inside a running attempt of another retried call, it is nested in
    /// it (see [`Nested`](crate::Nested)): one attempt under the default
    /// `Nested::Once`, and a key derived from the outer call's.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Policy;
    /// use tenacious::poll::PollDriver;
    ///
    /// static POLICY: Policy = Policy::new().timeout(Duration::from_secs(5));
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let driver = PollDriver::<std::io::Error>::new(&POLICY);
    /// assert_eq!((driver.attempts(), driver.stop_reason()), (0, None));
    /// assert_eq!(driver.attempt_limit(), Some(Duration::from_secs(5)));
    /// # }
    /// ```
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
    /// after the last one has passed and the policy's guards let it go
    /// (their waits are waited here, on tokio's timer; a policy without
    /// guards asks none). Ready with `Err(Some(error))` — the last
    /// attempt's — when the call gave up before it instead (a guard refused
    /// it, or the wait ended too close to the deadline), as the retry loop
    /// does; with `Err(None)` when a guard refused the first attempt of a
    /// call made [`refusable`](PollDriver::refusable)
    /// ([`refused`](PollDriver::refused) says why). Once it is ready with
    /// `Err`, the call is over, and [`stop_reason`](PollDriver::stop_reason)
    /// says why.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::pin::pin;
    /// use tenacious::Policy;
    /// use tenacious::poll::PollDriver;
    ///
    /// static POLICY: Policy = Policy::new();
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut driver = pin!(PollDriver::<std::io::Error>::new(&POLICY));
    /// // No guard, no backoff before the first attempt: ready at once.
    /// assert!(poll_fn(|cx| driver.as_mut().poll_start(cx)).await.is_ok());
    /// # }
    /// ```
    ///
    /// # Panics
    ///
    /// Once the call is over ([`finish`](PollDriver::finish) returned
    /// `Break`, or this returned `Err`), or while an attempt runs (after
    /// `Ok`, before `finish`).
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

    /// Lets a guard refuse the first attempt: [`poll_start`](PollDriver::poll_start)
    /// then ends with `Err(None)`, and the owner answers with the
    /// [`refused`](PollDriver::refused) error (the call's error type can
    /// carry it, [`Classify::refused`]). By default a refusal of the first
    /// attempt is taken as a go, as the retry loop takes it for an error
    /// type that cannot say it: there is no error to return yet. Call it
    /// before the first `poll_start`.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::pin::pin;
    /// use tenacious::poll::PollDriver;
    /// use tenacious::{Admit, Guard, NextAttempt, Outcome, Policy, Refused, StopReason};
    ///
    /// #[derive(Debug)]
    /// struct Closed;
    /// impl Guard for Closed {
    ///     fn admit(&self, _: &NextAttempt) -> Admit { Admit::Stop(StopReason::Guard) }
    ///     fn observe(&self, _: &Outcome) {}
    /// }
    /// static CLOSED: Closed = Closed;
    /// static POLICY: Policy = Policy::new().guard(&CLOSED);
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut driver = PollDriver::<std::io::Error>::new(&POLICY);
    /// driver.refusable();
    /// let mut driver = pin!(driver);
    /// assert!(matches!(poll_fn(|cx| driver.as_mut().poll_start(cx)).await, Err(None)));
    /// assert_eq!(driver.refused(), Some(Refused::new(StopReason::Guard)));
    /// # }
    /// ```
    pub fn refusable(&mut self) {
        self.engine.set_refusable();
    }

    /// Runs `f` — a poll of the attempt's work, or the call that starts
    /// it — with the attempt context set, so
    /// [`Attempt::current`](crate::Attempt::current) and [`current_key`]
    /// describe this attempt, and a retried call made inside it is nested
    /// in this one (see [`Nested`](crate::Nested)). With feature `tracing`
    /// and a subscriber listening, `f` runs inside the attempt's span. The
    /// context is set for `f` alone: a task `f` spawns does not see it.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::pin::pin;
    /// use tenacious::poll::PollDriver;
    /// use tenacious::{Attempt, Policy};
    ///
    /// static POLICY: Policy = Policy::new();
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut driver = pin!(PollDriver::<std::io::Error>::new(&POLICY));
    /// poll_fn(|cx| driver.as_mut().poll_start(cx)).await.unwrap();
    /// let number = driver.as_mut().in_attempt(|| Attempt::current().map(|a| a.number()));
    /// assert_eq!(number, Some(1));
    /// assert!(Attempt::current().is_none());
    /// # }
    /// ```
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
    /// poll [`poll_start`](PollDriver::poll_start) for the next attempt,
    /// which waits the backoff first (the error is kept until then).
    /// Decided as `#[retry]` decides (class, `max`, the server's hint, the
    /// deadline, the guards, the budget), with no `when` nor `notify`;
    /// counted in the policy's statistics and told to its guards. Disarms
    /// the attempt's timer.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::io;
    /// use std::ops::ControlFlow;
    /// use std::pin::pin;
    /// use tenacious::{Policy, StopReason};
    /// use tenacious::poll::PollDriver;
    ///
    /// static POLICY: Policy = Policy::new();
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut driver = pin!(PollDriver::<io::Error>::new(&POLICY));
    /// poll_fn(|cx| driver.as_mut().poll_start(cx)).await.unwrap();
    /// // `InvalidInput` is `Invalid`: never retried.
    /// let gave_up = driver.as_mut().finish(Err::<(), _>(io::ErrorKind::InvalidInput.into()));
    /// assert!(matches!(gave_up, ControlFlow::Break(Err(_))));
    /// assert_eq!(driver.stop_reason(), Some(StopReason::NotRetryable));
    /// # }
    /// ```
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

    /// Attempts made so far, each counted when it is handed to
    /// [`finish`](PollDriver::finish) (saturating at `u32::MAX`): 0 until
    /// the first ends. See the example of [`PollDriver`].
    #[must_use]
    pub const fn attempts(&self) -> u32 {
        self.engine.attempts()
    }

    /// Why the call gave up: `None` while it retries, and after a success.
    /// See the example of [`finish`](PollDriver::finish).
    #[must_use]
    pub const fn stop_reason(&self) -> Option<StopReason> {
        self.engine.stop_reason()
    }

    /// The refusal a guard stopped the call with before its first attempt,
    /// once [`poll_start`](PollDriver::poll_start) ended with `Err(None)`:
    /// the guard's reason and, when it said, how long until it would admit
    /// an attempt again. `None` otherwise. See the example of
    /// [`refusable`](PollDriver::refusable).
    #[must_use]
    pub fn refused(&self) -> Option<Refused> {
        let reason = self.engine.refusal()?;
        Some(self.engine.refused_error(reason))
    }

    /// The policy the call runs under.
    ///
    /// ```
    /// use tenacious::Policy;
    /// use tenacious::poll::PollDriver;
    ///
    /// static POLICY: Policy = Policy::new().max(5);
    ///
    /// let driver = PollDriver::<std::io::Error>::new(&POLICY);
    /// assert_eq!(driver.policy().get_max(), 5);
    /// ```
    #[must_use]
    pub const fn policy(&self) -> &'p Policy {
        self.engine.policy()
    }
}

/// The idempotency key of the retried call whose attempt runs here (in
/// this task, on this thread), drawn now if the call has none yet; `None`
/// outside an attempt. Every attempt of one call gets the same key, and a
/// call nested in another's attempt gets one derived from the outer
/// call's, so an outer retry sends it again: what an adapter stamps on
/// each attempt's request (an `Idempotency-Key` header). Inside
/// [`PollDriver::in_attempt`], the retry loop of `#[retry]` and of
/// [`Policy`]'s methods.
///
/// The same key as [`Attempt::current`](crate::Attempt::current)'s, for
/// less: one read of the attempt context, and the call's clock is not
/// started.
///
/// ```
/// use std::io;
/// use tenacious::poll::current_key;
/// use tenacious::{Attempt, Policy};
///
/// assert_eq!(current_key(), None);
/// let mut keys = Vec::new();
/// let _ = Policy::new().base(std::time::Duration::ZERO).retry_blocking(|| {
///     let key = current_key().expect("inside an attempt");
///     assert_eq!(Some(key), Attempt::current().map(|a| a.idempotency_key()));
///     keys.push(key);
///     Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut))
/// });
/// assert_eq!(keys.len(), 3);
/// assert!(keys.iter().all(|key| *key == keys[0]));
/// ```
#[must_use]
pub fn current_key() -> Option<IdempotencyKey> {
    with_current(|frame| frame.engine.key())
}
