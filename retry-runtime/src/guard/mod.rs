//! The guard extension point: [`Guard`], something shared by many calls
//! that is asked before each attempt whether it may start ([`Admit`]) and
//! told how each attempt ended ([`Outcome`]). [`RetryBudget`] is one; the
//! engine consults a policy's guards in `engine.rs` (at a retry's
//! decision) and `call/pace/` (before an attempt, after a wait).
mod adaptive;
pub(crate) mod breaker;
pub(crate) mod budget;
pub(crate) mod concurrency;
pub(crate) mod cooldown;
pub(crate) mod guard_name;
pub(crate) mod refused;
pub(crate) mod shared_static;
pub mod store;
pub(crate) mod throttle;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use crate::{ErrorClass, RetryBudget, Signals, StopReason};

pub use adaptive::{AdaptiveLimit, Sample, SampleOutcome};

/// Something every call naming it shares, asked before each attempt
/// whether it may start and told how each attempt ended: a retry budget, a
/// rate-limit cooldown, a client-side throttle, a circuit breaker, or a
/// store of any of these across the network.
///
/// Name one of your own with [`Policy::guard`](crate::Policy::guard) or
/// `#[retry(guard = NAME)]`, as a `static`. The provider guards this crate
/// has are named by keys of their own; a call asks them in this order, each
/// with the wait planned so far ([`NextAttempt::wait`]): the
/// [`Breaker`](crate::Breaker) (`breaker`), the
/// [`Cooldown`](crate::Cooldown) (`cooldown`), the
/// [`Throttle`](crate::Throttle) (`throttle`), your guard (`guard`), then
/// the [`RetryBudget`] (`budget`), so a guard never reserves a slot for a
/// retry an earlier one refused, and the budget pays only for a retry that
/// will be made. After any guard's wait (or an answer the call awaited from
/// [`admit_async`](Guard::admit_async)), the guards before it are asked
/// again, from the first: what they said before the wait may no longer
/// hold (a breaker opened meanwhile).
///
/// # When it is asked
///
/// - **Before the first attempt**, with [`NextAttempt::attempt`] 1.
///   [`Admit::Wait`] delays the attempt (then the guard is asked again).
///   [`Admit::Stop`], or a wait that would leave no room for the attempt
///   before the deadline, stops the call with no attempt when its error
///   type can say it was refused ([`Classify::refused`](crate::Classify::refused)):
///   it returns that error made from a [`Refused`](crate::Refused).
///   A `#[retry]` fn naming a guard (by its key, or through a `const` or
///   `static` policy that has one) must have such an error type
///   ([`Refusable`](crate::Refusable)): it is a compile error otherwise.
///   A [`Policy`](crate::Policy) loop run by hand, and a fn bound to a
///   policy by name or through a generic path, on an error type that
///   cannot say it has no error to return, and makes its attempt: the
///   refusal is taken as [`Admit::Go`], the wait skipped.
/// - **When a retry is decided**, after an attempt failed with an error the
///   policy retries and the engine's own checks passed (class, `when`,
///   `max`, the hint, the deadline), before `notify` and before the wait:
///   [`Admit::Stop`] ends the call at once with that reason and the last
///   error; [`Admit::Wait`] is added to the backoff, still inside the
///   call's `deadline` (a wait that leaves no room for the attempt stops
///   the call with [`StopReason::Deadline`]), and the guard is asked again
///   after it. [`Admit::Later`] holds nothing: the guard is asked afresh
///   (not as a recheck) just before the attempt, after the wait.
/// - **After a wait it asked for** ([`NextAttempt::recheck`] is `true`),
///   just before the attempt: it may let the attempt go, wait again, or
///   stop the call.
///
/// Waiting for a guard happens outside the attempt's `timeout`.
///
/// # The fast path and the async path
///
/// [`admit`](Guard::admit) answers at once, in process: it should not block.
/// A guard that must ask a store across the network answers
/// [`Admit::Later`]; then the engine awaits
/// [`admit_async`](Guard::admit_async) before the attempt (a blocking call,
/// [`Policy::retry_blocking`](crate::Policy::retry_blocking) or a sync
/// `#[retry]` fn, blocks its thread on it). A call with no guard runs none
/// of this (a `#[retry]` fn's policy is a constant, so the checks fold
/// away; a `Policy` loop tests for a guard once per attempt).
///
/// # Outcomes
///
/// [`observe`](Guard::observe) hears of every attempt a guard admitted:
/// its success or its error's class, hint and [`Signals`], or that it was
/// not made after all (a later guard, or the deadline, stopped the call),
/// so a guard that reserved something for it can give it back.
///
/// ```
/// use std::io;
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::{Duration, Instant};
/// use tenacious::{Admit, Guard, NextAttempt, Outcome, Policy, StopReason};
///
/// /// Stops every call after its second retry, across all calls.
/// #[derive(Debug)]
/// struct TwoRetries(AtomicU32);
///
/// impl Guard for TwoRetries {
///     fn admit(&self, next: &NextAttempt) -> Admit {
///         if next.attempt == 1 || self.0.fetch_add(1, Ordering::Relaxed) < 2 {
///             Admit::Go
///         } else {
///             Admit::Stop(StopReason::Guard)
///         }
///     }
///     fn observe(&self, _: &Outcome) {}
/// }
///
/// static GUARD: TwoRetries = TwoRetries(AtomicU32::new(0));
/// const POLICY: Policy = Policy::new().max(10).base(Duration::ZERO).guard(&GUARD);
///
/// let mut attempts = 0;
/// let result = POLICY.retry_blocking(|| {
///     attempts += 1;
///     Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionReset))
/// });
/// assert!(result.is_err());
/// assert_eq!(attempts, 3);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `Guard`",
    label = "`guard` names a `static` whose type implements `tenacious::Guard`",
    note = "implement `tenacious::Guard` for it: `admit` says whether an attempt may start, `observe` hears how it ended"
)]
pub trait Guard: Send + Sync + fmt::Debug {
    /// Whether the attempt `next` may start: at once, in process, without
    /// blocking. See the trait's docs for when it is asked.
    fn admit(&self, next: &NextAttempt) -> Admit;

    /// How an attempt this guard admitted ended.
    fn observe(&self, outcome: &Outcome);

    /// The answer to [`admit`](Guard::admit)'s [`Admit::Later`]: asked
    /// before the attempt, from the attempt's task (or, for a blocking
    /// call, on its thread). An `Admit::Later` here is taken as
    /// [`Admit::Go`]. Default: [`Admit::Go`].
    fn admit_async(&self, next: NextAttempt) -> PendingAdmit<'_> {
        let _ = next;
        Box::pin(std::future::ready(Admit::Go))
    }

    /// How long after `next.now` this guard would admit the attempt
    /// `next` it has just refused ([`Admit::Stop`]), if it can tell: what
    /// the refusal tells the caller (the [`Refused`](crate::Refused), the
    /// [`Failure`](crate::Failure), and with feature `agent` the
    /// observation and the task guard's verdict), so that a caller which
    /// obeys it does not call again at once. Asked only after a refusal,
    /// off the happy path. Default: `None` (it cannot tell).
    fn retry_in(&self, next: &NextAttempt) -> Option<Duration> {
        let _ = next;
        None
    }

    /// The guard's statistics record, if it keeps one: registered when a
    /// call first asks the guard, and listed by
    /// [`stats::snapshot`](crate::stats::snapshot) in its guards table.
    /// The guard counts in it itself (its waits, stops and changes of
    /// state). Default: `None`.
    fn record(&self) -> Option<&crate::stats::GuardRecord> {
        None
    }
}

/// The future of [`Guard::admit_async`].
pub type PendingAdmit<'a> = Pin<Box<dyn Future<Output = Admit> + Send + 'a>>;

/// A [`Guard`]'s answer: may the attempt start?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Admit {
    /// Yes.
    Go,
    /// Not yet: ask again after this long.
    Wait(Duration),
    /// No: the call stops with this reason and the last attempt's error
    /// (before the first attempt, taken as `Go`).
    Stop(StopReason),
    /// Ask [`Guard::admit_async`] before the attempt.
    Later,
}

/// The attempt a [`Guard`] is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct NextAttempt {
    /// Its number, 1 for the first.
    pub attempt: u32,
    /// The most attempts the call makes.
    pub max: u32,
    /// Whether the attempt before it ran out of its `timeout`.
    pub after_timeout: bool,
    /// How long the call waits before it, as planned so far (the backoff
    /// and any server hint); zero before the first attempt and on a
    /// recheck.
    pub wait: Duration,
    /// Whether this guard is asked again after a wait it asked for.
    pub recheck: bool,
    /// Now, on the clock the call sleeps on: tokio's for an async call
    /// (paused in tests, as the call's waits are), the system's for a
    /// blocking one. A guard keeps its own times on it, so what it asks
    /// to wait is what the call waits.
    pub now: Instant,
    /// Time since the call started, if its clock was read (a call reads
    /// it when it starts if its policy has a deadline or a timeout).
    pub elapsed: Option<Duration>,
    /// What is left of the call's deadline now, if it has one. A wait
    /// that leaves no room for the attempt stops the call with
    /// [`StopReason::Deadline`]; a guard may stop it first with a reason
    /// of its own.
    pub deadline_left: Option<Duration>,
    /// The longest server hint the policy honours (`max_retry_after`,
    /// default 120 s): the bound a guard that waits on a server's word
    /// (a rate-limit cooldown) holds its waits to.
    pub max_retry_after: Duration,
    /// Whether an async call asks: one that can await
    /// [`Guard::admit_async`] just before its attempt, and is asked again
    /// there after a retry's decision that answered [`Admit::Later`]. A
    /// throttle short of tokens then answers `Later` and queues the call's
    /// token just before the attempt, re-timed as the rate changes, rather
    /// than reserving it ahead at the rate of now (as it does for a
    /// blocking call).
    pub(crate) queues: bool,
}

/// How an attempt a [`Guard`] admitted ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Outcome {
    /// The attempt's number, 1 for the first.
    pub attempt: u32,
    /// Whether the attempt before it ran out of its `timeout` (what the
    /// guard was told in [`NextAttempt::after_timeout`]).
    pub after_timeout: bool,
    /// What it came to.
    pub result: AttemptResult,
    /// What its error said about the provider beyond its class
    /// ([`Classify::signals`](crate::Classify::signals));
    /// [`Signals::NONE`] for a success or an attempt not made.
    pub signals: Signals,
    /// When it ended, on the call's clock (see [`NextAttempt::now`]).
    pub now: Instant,
    /// Time since the call started, if its clock was read.
    pub elapsed: Option<Duration>,
}

/// What an admitted attempt came to, in an [`Outcome`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptResult {
    /// It succeeded.
    Success,
    /// It failed.
    Failure {
        /// Its error's class.
        class: ErrorClass,
        /// The error's server hint, if any, held to the policy's
        /// `max_retry_after`: no guard hears of a wait longer than a call
        /// of the policy would make (a longer hint stops the call with
        /// [`StopReason::HintTooLong`]).
        hint: Option<Duration>,
        /// Whether it ran out of the call's `timeout`.
        timed_out: bool,
    },
    /// It was not made: the call stopped after the guard admitted it.
    NotMade,
}

impl Guard for RetryBudget {
    /// The first attempt is free; a retry takes
    /// [`RETRY_COST`](RetryBudget::RETRY_COST), or
    /// [`TIMEOUT_RETRY_COST`](RetryBudget::TIMEOUT_RETRY_COST) after a
    /// timed-out attempt, or stops the call with [`StopReason::Budget`].
    #[inline]
    fn admit(&self, next: &NextAttempt) -> Admit {
        if next.attempt > 1
            && !next.recheck
            && let Some(shared) = self.shared.get()
        {
            // Bound to a store: the fleet's bucket pays, in one round
            // trip before the attempt; the local one while Redis is down.
            if shared.is_up() {
                return Admit::Later;
            }
            shared.local_decision();
        }
        if next.attempt <= 1
            || next.recheck
            || self.try_acquire(Self::retry_cost(next.after_timeout))
        {
            Admit::Go
        } else {
            Admit::Stop(StopReason::Budget)
        }
    }

    /// A success gives back what its retry took, or
    /// [`SUCCESS_REFUND`](RetryBudget::SUCCESS_REFUND) at the first
    /// attempt; a retry not made gives back what it took.
    #[inline]
    fn observe(&self, outcome: &Outcome) {
        let refund = match outcome.result {
            AttemptResult::Failure { .. } => return,
            AttemptResult::NotMade if outcome.attempt <= 1 => return,
            AttemptResult::Success if outcome.attempt <= 1 => Self::SUCCESS_REFUND,
            AttemptResult::Success | AttemptResult::NotMade => {
                Self::retry_cost(outcome.after_timeout)
            }
        };
        if let Some(shared) = self.shared.get()
            && shared.is_up()
        {
            shared.refund(refund);
            return;
        }
        self.refund(refund);
    }

    /// Bound to a store (feature `redis`): the retry's tokens from the
    /// fleet's bucket, or from the local one when Redis fails to answer.
    fn admit_async(&self, next: NextAttempt) -> PendingAdmit<'_> {
        if let Some(shared) = self.shared.get() {
            return shared.take(self, Self::retry_cost(next.after_timeout));
        }
        let _ = next;
        Box::pin(std::future::ready(Admit::Go))
    }
}

/// A guard named by a policy: compared and hashed by address, since two
/// guards in the same state are still two guards.
pub(crate) struct ByAddress<T: ?Sized + 'static>(pub(crate) &'static T);

impl<T: ?Sized> Clone for ByAddress<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for ByAddress<T> {}

impl<T: ?Sized> PartialEq for ByAddress<T> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::addr_eq(self.0, other.0)
    }
}

impl<T: ?Sized> Eq for ByAddress<T> {}

impl<T: ?Sized> std::hash::Hash for ByAddress<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::from_ref(self.0).cast::<()>().hash(state);
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for ByAddress<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The longest a guard holds calls back for one report or hint: 366 days.
/// A cooldown closes, and a script stores a time, no further ahead than
/// this (a saturated `Retry-After` under a policy whose `max_retry_after`
/// is `Duration::MAX` used to close one for 584 years).
pub const LONGEST_HOLD: Duration = Duration::from_secs(366 * 86_400);

thread_local! {
    /// Whether this thread is in [`block_on`]: a guard's future that needs
    /// a runtime to make progress can tell it would wait on itself when
    /// that runtime is this thread's (see `Link::decide`, feature `redis`).
    static BLOCKED_ON: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the thread is blocked on a guard's answer (a blocking call waiting
/// for its async answer): a store must not wait on itself there.
pub fn blocked_on() -> bool {
    BLOCKED_ON.with(std::cell::Cell::get)
}

/// Runs `future` to its end on this thread, parking it while the future
/// waits: how a blocking call awaits [`Guard::admit_async`].
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    struct Unblock(bool);
    impl Drop for Unblock {
        fn drop(&mut self) {
            BLOCKED_ON.with(|blocked| blocked.set(self.0));
        }
    }
    let _unblock = Unblock(BLOCKED_ON.with(|blocked| blocked.replace(true)));
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(attempt: u32, after_timeout: bool) -> NextAttempt {
        NextAttempt {
            attempt,
            max: 3,
            after_timeout,
            wait: Duration::ZERO,
            recheck: false,
            now: Instant::now(),
            elapsed: None,
            deadline_left: None,
            max_retry_after: Duration::from_secs(120),
            queues: false,
        }
    }

    fn outcome(attempt: u32, after_timeout: bool, result: AttemptResult) -> Outcome {
        Outcome {
            attempt,
            after_timeout,
            result,
            signals: Signals::NONE,
            now: Instant::now(),
            elapsed: None,
        }
    }

    #[test]
    fn the_budget_as_a_guard_charges_retries_and_refunds_what_they_took() {
        let budget = RetryBudget::with_capacity(20);
        assert_eq!(budget.admit(&next(1, false)), Admit::Go);
        assert_eq!(budget.balance(), 20, "a first attempt is free");
        assert_eq!(budget.admit(&next(2, false)), Admit::Go);
        assert_eq!(budget.admit(&next(3, true)), Admit::Go);
        assert_eq!(budget.balance(), 5);
        assert_eq!(
            budget.admit(&next(2, true)),
            Admit::Stop(StopReason::Budget)
        );
        assert_eq!(budget.balance(), 5, "a refused retry takes nothing");
        budget.observe(&outcome(3, true, AttemptResult::NotMade));
        assert_eq!(budget.balance(), 15);
        budget.observe(&outcome(2, false, AttemptResult::Success));
        assert_eq!(budget.balance(), 20);
        budget.admit(&next(2, false));
        budget.observe(&outcome(1, false, AttemptResult::Success));
        assert_eq!(budget.balance(), 16, "a first-attempt success refunds 1");
        let failure = AttemptResult::Failure {
            class: ErrorClass::Transient,
            hint: None,
            timed_out: false,
        };
        budget.observe(&outcome(2, false, failure));
        budget.observe(&outcome(1, false, AttemptResult::NotMade));
        assert_eq!(
            budget.balance(),
            16,
            "failures and unmade first attempts refund nothing"
        );
    }

    #[test]
    fn block_on_waits_for_a_wake_from_another_thread() {
        let (tx, rx) = std::sync::mpsc::channel::<Waker>();
        let waker_thread = std::thread::spawn(move || {
            let waker = rx.recv().unwrap();
            std::thread::sleep(Duration::from_millis(5));
            waker.wake();
        });
        let mut polls = 0;
        let mut tx = Some(tx);
        let answer = block_on(std::future::poll_fn(|cx| {
            polls += 1;
            match tx.take() {
                Some(tx) => {
                    tx.send(cx.waker().clone()).unwrap();
                    Poll::Pending
                }
                None => Poll::Ready(Admit::Go),
            }
        }));
        waker_thread.join().unwrap();
        assert_eq!((answer, polls), (Admit::Go, 2));
    }
}
