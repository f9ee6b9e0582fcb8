//! The decision engine shared by `#[retry]` and `Policy`: [`Engine`], one
//! logical call's retry state, and the one function that decides every
//! stop. It knows nothing of the attempt context: the constructors that
//! consult it are in `start.rs`, the frame that points at an engine in
//! `context.rs`.
pub(crate) mod call_key;
pub(crate) mod event;
pub(crate) mod hooks;
pub(crate) mod key;

use std::ops::ControlFlow;
use std::time::Duration;

use crate::clock::{Clock, MIN_ATTEMPT_NANOS, TIMER_ROUNDING_NANOS, now_on, saturating_nanos};
use crate::engine::hooks::{NotifyFn, WhenFn};
use crate::engine::key::IdempotencyKey;
use crate::guard::{AttemptResult, NextAttempt, Outcome};
use crate::observe::{self, FailedAttempt};
use crate::policy::Chain;
use crate::policy::backoff::{self, with_thread_rng};
use crate::{
    Admit, Classify, ErrorClass, Guard, Jitter, Nested, Policy, RetryBudget, RetryEvent, Signals,
    StopReason,
};

/// What the engine decided about a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Retry(Duration),
    Stop(StopReason),
}

/// One logical call's retry state: the one place that decides whether to
/// retry, how long to wait, and why it stopped.
///
/// Created per call; after each attempt [`step`](Engine::step) says either
/// `Break(result)` (return it) or `Continue(delay)` (sleep, then attempt
/// again). Every reason to stop is decided here — class, `when`, `max`,
/// server hints, the deadline, nesting, the guards and the budget — so
/// `#[retry]` and the loops of [`Policy`] behave the same.
///
/// It allocates nothing. It reads the clock when the call starts only if
/// the policy has a deadline or a timeout, or (feature `tracing`) the call
/// has a statistics record and a subscriber listens to the `tenacious`
/// target, so the events' `elapsed_ms` counts from the call's start;
/// otherwise never (an attempt's [`Attempt::elapsed`](crate::Attempt::elapsed)
/// starts the clock when first asked).
///
/// With a statistics record ([`Policy::stats`]) it reports each call's
/// outcome there (and to `tracing` and `metrics` with those features), so
/// `#[retry]` fns and `Policy` loops are counted alike.
#[derive(Debug)]
pub struct Engine<'p> {
    policy: &'p Policy,
    // Every retried future holds its engine for the whole call, so the
    // fields are packed: 56 bytes on 64-bit targets (64 with feature
    // `tracing`, for the pointer to its spans).
    /// Attempts made so far.
    attempts: u32,
    /// `NESTED_ONCE`, `TIMED_OUT`, `BLOCKING`, `HAS_KEY`, `PACE`,
    /// `AFTER_TIMEOUT`, `REFUSABLE`, `BUDGET_LATER`, `RETRY_IN`, and in
    /// the top four bits the chain's guards that hold what they took at
    /// a retry's decision (see [`Engine::held`]).
    flags: u16,
    stop: Option<StopReason>,
    /// The last backoff drawn, in nanoseconds, for decorrelated jitter;
    /// once a guard's refusal stopped the call (`RETRY_IN`), how long
    /// until that guard would admit again, which no backoff needs then.
    prev: u64,
    /// When the call's clock started (see the type's docs for when it is
    /// read), on the clock of `BLOCKING`.
    start: Option<std::time::Instant>,
    /// The call's idempotency key once drawn or derived (`HAS_KEY`), as
    /// two halves: 16 bytes aligned to 8, where a `u128` would take 16
    /// aligned to 16 and pad the engine.
    key: [u64; 2],
    /// The call's span and its attempts' (feature `tracing`): `None`
    /// unless a subscriber wants them.
    #[cfg(feature = "tracing")]
    spans: observe::Spans,
}

/// The call is nested and held to one attempt (`Nested::Once`).
const NESTED_ONCE: u16 = 1;
/// The last attempt ran out of its timeout: its retry costs more.
const TIMED_OUT: u16 = 2;
/// The call sleeps the thread between attempts, so its deadline is kept on
/// the system clock, not on tokio's (which a paused test clock stops).
const BLOCKING: u16 = 4;
/// `key` holds the call's key.
const HAS_KEY: u16 = 8;
/// The policy's guard asked, at a retry's decision, to be asked again
/// just before the attempt (see `pace.rs`).
const PACE: u16 = 16;
/// The attempt running (or about to) follows one that timed out: what the
/// guards were told when they admitted it.
const AFTER_TIMEOUT: u16 = 32;
/// The call's error type can say a guard refused the first attempt.
const REFUSABLE: u16 = 64;
/// The policy's budget answered [`Admit::Later`] at the retry's decision:
/// the pacer awaits its [`Guard::admit_async`] after the chain's guards.
const BUDGET_LATER: u16 = 128;
/// The call stopped for a guard's refusal and `prev` holds, in
/// nanoseconds, how long after the refusal that guard would admit again
/// (see [`Engine::retry_in`]).
const RETRY_IN: u16 = 256;
/// The guards hold what they took for the next attempt, which has not
/// started: a call dropped now (a caller's timeout, a `select!`) gives it
/// back ([`Engine`]'s `Drop`). Set at a retry's decision and by the pacer,
/// cleared when the attempt starts ([`Engine::attempt_starts`]) or the
/// call gives up before it.
const OWED: u16 = 512;
/// An attempt runs whose call holds a half-open breaker's probe slot
/// (`PROBING`): dropped, the call gives the slot back.
const IN_FLIGHT: u16 = 1024;
/// The call holds a probe slot of the policy's breaker for the next
/// attempt (taken at the retry's decision or by the pacer).
const PROBING: u16 = 2048;
/// Where the flags keep the guards of the chain (a bit each, by their place
/// in `Policy::chain`) that hold what they took at a retry's decision.
const HELD_SHIFT: u32 = 12;
/// Every guard of the chain, as a mask of [`Engine::held`].
pub(crate) const ALL_HELD: u8 = 0b1111;
/// The guards of the chain (as a mask of [`Engine::held`]) that give back
/// what they took when another guard makes the attempt wait at a retry's
/// decision, and take it afresh after the wait: the breaker (first in
/// `Policy::chain`), whose half-open probe slot is for an attempt now. The
/// pacer keeps the slot it takes through the waits that follow, and the
/// breaker knows it for the call's own when asked again (see `pace.rs`).
/// The other guards keep what they took and are asked again as a recheck:
/// a throttle's token and a cooldown's turn are for the time the wait
/// ends.
pub(crate) const GIVEN_BACK_ON_WAIT: u8 = 0b0001;

/// Where the budget stands in the order the guards are asked, after the
/// chain's (see `Policy::chain`): the index a refusal of the budget's is
/// told by.
pub(crate) const BUDGET_AT: usize = 4;

impl<'p> Engine<'p> {
    /// A call's engine before its first attempt; `nested_key` is the key
    /// of a call nested in another's attempt.
    #[inline]
    pub(crate) fn started(
        policy: &'p Policy,
        clock: Clock,
        nested_key: Option<IdempotencyKey>,
    ) -> Self {
        let mut flags = 0;
        if nested_key.is_some() && matches!(policy.get_nested(), Nested::Once) {
            flags |= NESTED_ONCE;
        }
        if clock == Clock::System {
            flags |= BLOCKING;
        }
        let start = if policy.deadline_nanos().is_some()
            || policy.timeout_nanos().is_some()
            || observe::wants_clock(policy)
        {
            Some(now(flags))
        } else {
            None
        };
        let mut engine = Self {
            policy,
            attempts: 0,
            flags,
            stop: None,
            prev: policy.base_nanos(),
            start,
            key: [0; 2],
            #[cfg(feature = "tracing")]
            spans: match policy.get_stats() {
                Some(stats) => observe::Spans::new(stats.name(), policy.get_max()),
                None => observe::Spans::NONE,
            },
        };
        if let Some(key) = nested_key {
            engine.set_key(key);
        }
        engine
    }

    #[inline]
    pub(crate) fn set_key(&mut self, key: IdempotencyKey) {
        let bits = key.as_u128();
        // The halves of the key.
        #[allow(clippy::cast_possible_truncation)]
        {
            self.key = [(bits >> 64) as u64, bits as u64];
        }
        self.flags |= HAS_KEY;
    }

    /// Holds a call nested in a running attempt to one attempt, if its
    /// policy says [`Nested::Once`].
    pub(crate) fn nest(&mut self) {
        if matches!(self.policy.get_nested(), Nested::Once) {
            self.flags |= NESTED_ONCE;
        }
    }

    const fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }

    /// Decides after one attempt: `Break(result)` to return it,
    /// `Continue(delay)` to sleep `delay` and attempt again.
    ///
    /// On an error, in this order:
    /// 1. its class is not in the policy's `on`, or `when` returns false
    ///    (`when` is asked only about classes in `on`): stop,
    ///    [`StopReason::NotRetryable`]; the call is not idempotent and the
    ///    error does not prove nothing was sent
    ///    ([`Classify::not_sent`]): stop, [`StopReason::NotIdempotent`];
    /// 2. `max` attempts were made (the error's own
    ///    [`Limits`](crate::Limits) `max` if it has one, else the policy's):
    ///    stop, [`StopReason::Exhausted`] (or [`StopReason::Nested`] for a
    ///    nested call held to one attempt);
    /// 3. it carries a server hint (`retry_after()`, honoured for any retried
    ///    class) longer than `max_retry_after`: stop,
    ///    [`StopReason::HintTooLong`]; the wait is the backoff of the
    ///    policy's jitter, plus the hint if there is one (a floor, never a
    ///    replacement: a zero hint is no hint);
    /// 4. with a deadline, the next attempt would start, after that wait
    ///    and a tick of the timer's rounding, with less than
    ///    [`MIN_ATTEMPT`](crate::MIN_ATTEMPT) left: stop, [`StopReason::Deadline`];
    /// 5. with a [`Guard`], it refuses the retry ([`Admit::Stop`]): stop
    ///    with its reason; a wait it asks for is added, and checked against
    ///    the deadline again ([`StopReason::Deadline`]);
    /// 6. with a budget, it cannot pay for the retry (5 tokens, 10 after a
    ///    timed-out attempt): stop, [`StopReason::Budget`].
    ///
    /// `notify` is called with the error and the delay just before
    /// `Continue` is returned. The guards hear of every attempt's outcome:
    /// so a success gives the budget back what the call's last retry took,
    /// or 1 token if it did not retry.
    #[inline]
    pub fn step<T, E, W, N>(
        &mut self,
        result: Result<T, E>,
        when: W,
        notify: N,
    ) -> ControlFlow<Result<T, E>, Duration>
    where
        E: Classify,
        W: WhenFn<E>,
        N: NotifyFn<E>,
    {
        match self.step_recording(result, when, notify, |_, _, _, _| {}) {
            ControlFlow::Break(result) => ControlFlow::Break(result),
            ControlFlow::Continue((delay, _)) => ControlFlow::Continue(delay),
        }
    }

    /// [`step`](Engine::step), telling `record` about each failed attempt:
    /// its number, error, class and the delay before the next one (`None`
    /// when the call stops).
    #[inline]
    pub(crate) fn step_recording<T, E, W, N, F>(
        &mut self,
        result: Result<T, E>,
        when: W,
        notify: N,
        record: F,
    ) -> ControlFlow<Result<T, E>, (Duration, E)>
    where
        E: Classify,
        W: WhenFn<E>,
        N: NotifyFn<E>,
        F: FnMut(u32, &E, ErrorClass, Option<Duration>),
    {
        // An attempt's result: it was made, whatever its driver said.
        self.flags &= !(IN_FLIGHT | OWED);
        match result {
            Ok(value) => {
                self.succeeded();
                ControlFlow::Break(Ok(value))
            }
            Err(error) => match self.failed(&error, when, notify, record) {
                ControlFlow::Break(()) => ControlFlow::Break(Err(error)),
                ControlFlow::Continue(delay) => ControlFlow::Continue((delay, error)),
            },
        }
    }

    /// The attempt succeeded. Inlined into every retried call, so kept to
    /// what a first-attempt success without a budget needs: a count of the
    /// attempt and one counter of the statistics record; the rest is out of
    /// line, to keep the retried fn's own code small.
    #[inline]
    fn succeeded(&mut self) {
        let policy = self.policy;
        if self.attempts == 0 && !has_guards(policy) {
            self.attempts = 1;
            if let Some(stats) = policy.get_stats() {
                observe::clean_success(stats);
                #[cfg(feature = "tracing")]
                if self.spans.is_on() {
                    self.spans.succeeded(1);
                }
            }
        } else {
            self.succeeded_otherwise();
        }
    }

    /// A success after retries, or under a guard or a budget.
    #[inline(never)]
    fn succeeded_otherwise(&mut self) {
        self.attempts = self.attempts.saturating_add(1);
        if has_guards(self.policy) {
            self.tell_guards(self.attempts, AttemptResult::Success, Signals::NONE);
        }
        if let Some(stats) = self.policy.get_stats() {
            observe::success(stats, self.attempts);
            #[cfg(feature = "tracing")]
            if self.spans.is_on() {
                self.spans.succeeded(self.attempts);
            }
        }
    }

    /// The attempt failed with `error`: `Break(error)` to return it,
    /// `Continue(delay)` to retry after `delay`.
    ///
    /// Its report of the decision is written out here rather than shared
    /// with [`conclude_stop`](Engine::conclude_stop): through one shared
    /// step for both plans, a call that retried once cost 14 instructions
    /// more (`scripts/instructions.sh policy-two`: 634 against 620).
    fn failed<E, W, N, F>(
        &mut self,
        error: &E,
        mut when: W,
        mut notify: N,
        mut record: F,
    ) -> ControlFlow<(), Duration>
    where
        E: Classify,
        W: WhenFn<E>,
        N: NotifyFn<E>,
        F: FnMut(u32, &E, ErrorClass, Option<Duration>),
    {
        let (class, hint) = self.count_failure(error);
        let plan = self.decide(error, class, hint, &mut when);
        if let Some(stats) = self.policy.get_stats() {
            let failed = FailedAttempt {
                attempt: self.attempts,
                max: self.max_after(error),
                class,
                variant: error.variant(),
                elapsed: self.elapsed(),
            };
            // The events are the call's: emitted in its span.
            #[cfg(feature = "tracing")]
            let call = self.spans.call();
            #[cfg(feature = "tracing")]
            let entered = call.as_ref().map(tracing::Span::enter);
            match plan {
                Plan::Retry(delay) => observe::retry(stats, &failed, delay),
                Plan::Stop(reason) => observe::give_up(stats, &failed, reason),
            }
            #[cfg(feature = "tracing")]
            drop(entered);
            #[cfg(feature = "tracing")]
            if self.spans.is_on() {
                let next = match plan {
                    Plan::Retry(delay) => Ok(delay),
                    Plan::Stop(reason) => Err(reason),
                };
                self.spans
                    .failed(self.attempts, class, failed.variant, next);
            }
        }
        match plan {
            Plan::Stop(reason) => {
                self.stop = Some(reason);
                record(self.attempts, error, class, None);
                ControlFlow::Break(())
            }
            Plan::Retry(delay) => {
                record(self.attempts, error, class, Some(delay));
                let event = RetryEvent {
                    attempt: self.attempts,
                    max: self.max_after(error),
                    delay,
                    class,
                };
                notify.call(error, &event);
                ControlFlow::Continue(delay)
            }
        }
    }

    /// The attempt failed with `error`, and the caller stops the call for
    /// `reason` whatever the policy would decide: a retried stream that
    /// failed after delivering items (a retry would repeat them), or ran
    /// past its deadline. Counted, recorded and told to the guards as any
    /// give-up.
    pub(crate) fn stop_after<E, F>(&mut self, error: &E, reason: StopReason, record: F)
    where
        E: Classify,
        F: FnMut(u32, &E, ErrorClass, Option<Duration>),
    {
        let (class, _) = self.count_failure(error);
        self.flags &= !TIMED_OUT;
        self.conclude_stop(error, class, reason, record);
    }

    /// Counts a failed attempt and tells the guards; its class and hint.
    #[inline(always)]
    fn count_failure<E: Classify>(&mut self, error: &E) -> (ErrorClass, Option<Duration>) {
        self.attempts = self.attempts.saturating_add(1);
        let class = error.classify();
        let hint = error.retry_after();
        if has_guards(self.policy) {
            self.tell_guards(
                self.attempts,
                AttemptResult::Failure {
                    class,
                    // No longer than a call of this policy would wait: a
                    // hint it refuses (`HintTooLong`) must not close a
                    // shared cooldown beyond that.
                    hint: hint.map(|hint| hint.min(self.policy.get_max_retry_after())),
                    timed_out: self.has(TIMED_OUT),
                },
                error.signals(),
            );
        }
        (class, hint)
    }

    /// The call stops for `reason` after `error`: the give-up is counted,
    /// recorded and its reason held.
    fn conclude_stop<E, F>(
        &mut self,
        error: &E,
        class: ErrorClass,
        reason: StopReason,
        mut record: F,
    ) where
        E: Classify,
        F: FnMut(u32, &E, ErrorClass, Option<Duration>),
    {
        if let Some(stats) = self.policy.get_stats() {
            let failed = FailedAttempt {
                attempt: self.attempts,
                max: self.max_after(error),
                class,
                variant: error.variant(),
                elapsed: self.elapsed(),
            };
            #[cfg(feature = "tracing")]
            let call = self.spans.call();
            #[cfg(feature = "tracing")]
            let entered = call.as_ref().map(tracing::Span::enter);
            observe::give_up(stats, &failed, reason);
            #[cfg(feature = "tracing")]
            drop(entered);
            #[cfg(feature = "tracing")]
            if self.spans.is_on() {
                self.spans
                    .failed(self.attempts, class, failed.variant, Err(reason));
            }
        }
        self.stop = Some(reason);
        record(self.attempts, error, class, None);
    }

    // Every reason to stop is checked here and nowhere else (but for a
    // wake-up past the deadline, which `late` catches before the next
    // attempt starts).
    fn decide<E, W>(
        &mut self,
        error: &E,
        class: ErrorClass,
        hint: Option<Duration>,
        when: &mut W,
    ) -> Plan
    where
        E: Classify,
        W: WhenFn<E>,
    {
        let timed_out = self.has(TIMED_OUT);
        self.flags &= !TIMED_OUT;
        let policy = self.policy;
        if !policy.get_on().contains(class) || !when.call(error) {
            return Plan::Stop(StopReason::NotRetryable);
        }
        if !policy.get_idempotent() && !error.not_sent() {
            return Plan::Stop(StopReason::NotIdempotent);
        }
        let limits = error.limits();
        if self.attempts >= self.max_after(error) {
            return Plan::Stop(if self.has(NESTED_ONCE) && policy.get_max() > 1 {
                StopReason::Nested
            } else {
                StopReason::Exhausted
            });
        }
        let hint = match hint {
            Some(hint) => {
                let hint = saturating_nanos(hint);
                if hint > policy.max_retry_after_nanos() {
                    return Plan::Stop(StopReason::HintTooLong);
                }
                hint
            }
            None => 0,
        };
        // After the k-th attempt comes the k-th retry. A server's hint is
        // a floor under the backoff, not a replacement: the wait is the
        // hint plus the backoff, so a zero hint (or one already past, or
        // cut short by a skewed clock) is no hint, and callers that got
        // the same hint are spread over their own backoff window.
        let retry = self.attempts;
        let jitter = policy.get_jitter();
        // An error's own base (`Limits`), under the policy's cap.
        let cap = policy.cap_nanos();
        let base = limits
            .base_nanos()
            .map_or(policy.base_nanos(), |base| base.min(cap));
        let prev = self.prev;
        let backoff = match jitter {
            Jitter::None => backoff::ceiling(base, cap, retry),
            _ => with_thread_rng(|rng| backoff::delay(jitter, base, cap, retry, prev, rng)),
        };
        self.prev = backoff;
        #[cfg(feature = "tracing")]
        self.spans.deciding(backoff, hint);
        let mut nanos = hint.saturating_add(backoff);
        if self.leaves_no_room(nanos) {
            return Plan::Stop(StopReason::Deadline);
        }
        if has_guards(policy) {
            match self.admit_retry(timed_out, nanos) {
                Ok(wait) => nanos = wait,
                Err(reason) => return Plan::Stop(reason),
            }
        }
        Plan::Retry(Duration::from_nanos(nanos))
    }

    /// Whether an attempt started after waiting `nanos` would have less
    /// than [`MIN_ATTEMPT`](crate::MIN_ATTEMPT) left before the deadline,
    /// allowing for a tick of the timer's rounding.
    #[inline]
    pub(crate) fn leaves_no_room(&self, nanos: u64) -> bool {
        let Some(deadline) = self.policy.deadline_nanos() else {
            return false;
        };
        let rounding = if nanos == 0 { 0 } else { TIMER_ROUNDING_NANOS };
        self.elapsed_nanos()
            .saturating_add(nanos)
            .saturating_add(rounding)
            .saturating_add(MIN_ATTEMPT_NANOS)
            > deadline
    }

    /// Asks the guards whether the retry after a wait of `nanos` may be
    /// made: each of the policy's chain in order (see `Policy::chain`),
    /// then its budget. `Ok` with the wait, lengthened by what the guards
    /// asked for, or the reason to stop; the guards that admitted the
    /// retry hear it was not made when a later check stops the call.
    #[inline(never)]
    fn admit_retry(&mut self, after_timeout: bool, nanos: u64) -> Result<u64, StopReason> {
        let policy = self.policy;
        let chain = policy.chain();
        let mut next = self.next_attempt(false);
        next.after_timeout = after_timeout;
        // An async call is paced after its wait, where it can queue: a
        // throttle short of tokens answers `Later` rather than reserving
        // one now at the rate of now (see `NextAttempt::queues`).
        next.queues = !self.has(BLOCKING);
        // The guards asked so far, and of those the ones that asked to be
        // asked again (a wait, or an answer to await) just before it.
        let (mut asked, mut again, mut waits) = (0u8, 0u8, false);
        let mut wait = nanos;
        for (at, guard) in chain.iter().enumerate() {
            let Some(guard) = guard else { continue };
            next.wait = Duration::from_nanos(wait);
            let before = wait;
            let admit = if at == 0
                && let Some(breaker) = policy.get_breaker()
            {
                if let Some(record) = guard.record() {
                    record.register();
                }
                let (admit, probe) = breaker.admit_holding(&next, None);
                if probe.is_some() {
                    self.flags |= PROBING;
                } else {
                    self.flags &= !PROBING;
                }
                admit
            } else {
                ask(*guard, &next)
            };
            match admit {
                Admit::Go => {}
                Admit::Wait(more) => {
                    let more = saturating_nanos(more);
                    wait = wait.saturating_add(more);
                    again |= 1 << at;
                    waits = true;
                    #[cfg(feature = "tracing")]
                    self.spans.lengthened(observe::FROM_GUARD[at], more);
                }
                Admit::Later => {
                    // It took nothing: asked afresh just before the
                    // attempt, not as a recheck.
                    again |= 1 << at;
                    continue;
                }
                Admit::Stop(reason) => {
                    self.tell_not_made(asked, false);
                    self.refused_for(guard.retry_in(&next));
                    return Err(reason);
                }
            }
            asked |= 1 << at;
            if wait != before && self.leaves_no_room(wait) {
                self.tell_not_made(asked, false);
                // The guards would have the retry go after this wait: a
                // call that can wait it may come back then.
                self.refused_for(Some(Duration::from_nanos(wait)));
                return Err(StopReason::Deadline);
            }
        }
        next.wait = Duration::from_nanos(wait);
        if let Some(budget) = policy.get_budget() {
            match budget.admit(&next) {
                Admit::Stop(reason) => {
                    self.tell_not_made(asked, false);
                    return Err(reason);
                }
                // A budget kept in a store answers after the wait, just
                // before the attempt (see `pace.rs`).
                Admit::Later => self.flags |= PACE | BUDGET_LATER,
                Admit::Go | Admit::Wait(_) => {}
            }
        }
        // A guard that asked to wait has the whole chain asked again after
        // the wait, from the first guard: a breaker that let the retry go
        // gives back its probe slot now, to take it afresh then.
        let mut held = asked;
        if waits {
            let given_back = asked & GIVEN_BACK_ON_WAIT & !again;
            self.tell_not_made(given_back, false);
            held &= !given_back;
        }
        if again != 0 {
            self.flags |= PACE;
        }
        if held & GIVEN_BACK_ON_WAIT == 0 {
            self.flags &= !PROBING;
        }
        self.flags = (self.flags & !(u16::from(ALL_HELD) << HELD_SHIFT))
            | u16::from(held) << HELD_SHIFT
            | OWED;
        if after_timeout {
            self.flags |= AFTER_TIMEOUT;
        } else {
            self.flags &= !AFTER_TIMEOUT;
        }
        Ok(wait)
    }

    /// Tells the guards how attempt number `attempt` ended (or that it was
    /// not made): the chain's guards in `chain` (a bit each, by their place
    /// in `Policy::chain`), and the budget if `budget`. Out of line, and
    /// called only when there are guards (`has_guards`), so a call without
    /// them pays no call for it.
    #[inline(never)]
    fn tell_guards_in(
        &self,
        attempt: u32,
        result: AttemptResult,
        signals: Signals,
        chain: u8,
        budget: bool,
    ) {
        let policy = self.policy;
        let (now, elapsed) = self.clock_now();
        let outcome = Outcome {
            attempt,
            after_timeout: self.has(AFTER_TIMEOUT),
            result,
            signals,
            now,
            elapsed,
        };
        for (at, guard) in policy.chain().iter().enumerate() {
            if let Some(guard) = guard
                && chain & 1 << at != 0
            {
                guard.observe(&outcome);
            }
        }
        if budget && let Some(budget) = policy.get_budget() {
            budget.observe(&outcome);
        }
    }

    /// [`tell_guards_in`](Engine::tell_guards_in) every guard.
    fn tell_guards(&self, attempt: u32, result: AttemptResult, signals: Signals) {
        self.tell_guards_in(attempt, result, signals, ALL_HELD, true);
    }

    /// Tells the chain's guards in `chain` that the next attempt, which
    /// they admitted, is not made (yet): each gives back what it took for
    /// it. The budget too if `budget`.
    pub(crate) fn tell_not_made(&self, chain: u8, budget: bool) {
        if chain != 0 || budget {
            let attempt = self.attempts.saturating_add(1);
            self.tell_guards_in(
                attempt,
                AttemptResult::NotMade,
                Signals::NONE,
                chain,
                budget,
            );
        }
    }

    /// The chain's guards (a bit each, by their place in `Policy::chain`)
    /// that hold what they took for the next attempt at its retry's
    /// decision: the pacer asks them again as a recheck
    /// ([`NextAttempt::recheck`]), the others afresh. None before the
    /// first attempt.
    pub(crate) const fn held(&self) -> u8 {
        if self.attempts == 0 {
            0
        } else {
            (self.flags >> HELD_SHIFT) as u8 & ALL_HELD
        }
    }

    /// The attempt the policy's guard is asked about before it starts:
    /// the next one, with nothing left to wait.
    pub(crate) fn next_attempt(&self, recheck: bool) -> NextAttempt {
        let policy = self.policy;
        let (now, elapsed) = self.clock_now();
        let elapsed_nanos = elapsed.map_or(0, saturating_nanos);
        NextAttempt {
            attempt: self.attempts.saturating_add(1),
            max: self.max(),
            after_timeout: self.has(AFTER_TIMEOUT),
            wait: Duration::ZERO,
            recheck,
            now,
            elapsed,
            deadline_left: policy
                .deadline_nanos()
                .map(|deadline| Duration::from_nanos(deadline.saturating_sub(elapsed_nanos))),
            max_retry_after: policy.get_max_retry_after(),
            queues: false,
        }
    }

    /// Now on the call's clock, and the time since the call started if
    /// its clock was read.
    fn clock_now(&self) -> (std::time::Instant, Option<Duration>) {
        let now = now(self.flags);
        (
            now,
            self.start.map(|start| now.saturating_duration_since(start)),
        )
    }

    /// The policy's budget, if it answered [`Admit::Later`] at the retry's
    /// decision and its answer is still to be awaited; asking clears it.
    pub(crate) fn take_budget_later(&mut self) -> Option<&'static RetryBudget> {
        if !self.has(BUDGET_LATER) {
            return None;
        }
        self.flags &= !BUDGET_LATER;
        self.policy.get_budget()
    }

    /// The guard was asked before the next attempt and let it go.
    pub(crate) fn paced(&mut self) {
        self.flags &= !PACE;
    }

    /// The pacer holds what the chain's guards in `held` took for the
    /// next attempt, and a probe slot of the breaker if `probing`: given
    /// back if the call is dropped before the attempt starts.
    pub(crate) fn owe(&mut self, held: u8, probing: bool) {
        self.flags = (self.flags & !(u16::from(ALL_HELD) << HELD_SHIFT | PROBING))
            | u16::from(held) << HELD_SHIFT
            | OWED;
        if probing {
            self.flags |= PROBING;
        }
    }

    /// The attempt starts: what the guards took for it is spent, but a
    /// probe slot, which a dropped attempt gives back.
    #[inline]
    pub(crate) fn attempt_starts(&mut self) {
        if self.flags & OWED != 0 {
            self.flags &= !OWED;
            if self.flags & PROBING != 0 {
                self.flags |= IN_FLIGHT;
            }
        }
    }

    /// The call was dropped while the guards held something for it:
    /// before the attempt started, every guard that admitted it hears it
    /// was not made (a throttle's token, a cooldown's turn, a probe slot,
    /// a retry's budget token go back); during it, the breaker whose
    /// probe slot it held.
    #[cold]
    #[inline(never)]
    fn dropped(&self) {
        let held = (self.flags >> HELD_SHIFT) as u8 & ALL_HELD;
        if self.flags & OWED != 0 {
            let budget = self.attempts > 0 && !self.has(BUDGET_LATER);
            self.tell_not_made(held, budget);
        } else if self.flags & IN_FLIGHT != 0 {
            self.tell_guards_in(
                self.attempts.saturating_add(1),
                AttemptResult::NotMade,
                Signals::NONE,
                held & GIVEN_BACK_ON_WAIT,
                false,
            );
        }
    }

    /// Whether the policy's guards are to be asked before the next
    /// attempt: before the first, or when one asked to be at a retry's
    /// decision. (Read from the policy, not set as a flag when the call
    /// starts, so a call without a guard pays nothing for it there.)
    #[inline]
    pub(crate) const fn wants_pace(&self) -> bool {
        self.has(PACE) || (self.attempts == 0 && self.policy.has_chain())
    }

    /// The policy's breaker, first of its chain, if it has one.
    pub(crate) const fn breaker(&self) -> Option<&'static crate::Breaker> {
        self.policy.get_breaker()
    }

    /// The policy's guards, in the order they are asked.
    pub(crate) const fn chain(&self) -> Chain {
        self.policy.chain()
    }

    /// The call's error type can say a guard refused its first attempt
    /// ([`Classify::refused`]): a refusal there stops the call.
    pub(crate) fn set_refusable(&mut self) {
        self.flags |= REFUSABLE;
    }

    /// Whether a refusal before the first attempt stops the call.
    pub(crate) const fn refusable(&self) -> bool {
        self.has(REFUSABLE)
    }

    /// Why a guard refused the call's first attempt, if one did: the call
    /// then returns `E::refused()` of it, with no attempt.
    #[inline]
    pub(crate) const fn refusal(&self) -> Option<StopReason> {
        if self.attempts == 0 { self.stop } else { None }
    }

    /// Before the attempt after a retry's wait: whether the call stops
    /// there instead. It does when a guard asked again refused the attempt
    /// (see `pace.rs`), or when the wait ended too close to the deadline
    /// (or past it) for an attempt to run, as a late wake-up on a busy
    /// machine can; then the call gives up with [`StopReason::Deadline`].
    /// Either way the guards hear the retry was not made (the budget gets
    /// back what it took), the statistics count the give-up, and the
    /// caller returns the last attempt's error.
    #[inline]
    pub(crate) fn late(&mut self) -> bool {
        if self.stop.is_some() {
            return true;
        }
        let Some(deadline) = self.policy.deadline_nanos() else {
            return false;
        };
        if self.attempts == 0 || deadline.saturating_sub(self.elapsed_nanos()) >= MIN_ATTEMPT_NANOS
        {
            return false;
        }
        self.give_up_before_attempt(StopReason::Deadline, None, ALL_HELD);
        true
    }

    /// The call gives up, for `reason`, before an attempt it had decided
    /// to make (or, refused by a guard, before its first): the chain's
    /// guards in `held` (a bit each, by their place in `Policy::chain`),
    /// which admitted it, hear it was not made, and the budget gets back
    /// what it took. `refused_by`: the chain's guard that refused it,
    /// which is not told.
    #[cold]
    pub(crate) fn give_up_before_attempt(
        &mut self,
        reason: StopReason,
        refused_by: Option<usize>,
        held: u8,
    ) {
        self.stop = Some(reason);
        self.flags &= !(OWED | PROBING);
        let mut held = held;
        if let Some(at) = refused_by {
            held &= !(1 << at);
            if let Some(Some(guard)) = self.policy.chain().get(at).copied() {
                self.refused_for(guard.retry_in(&self.next_attempt(true)));
            }
        }
        if has_guards(self.policy) {
            // Not the budget that refused, nor one whose answer the pacer
            // never awaited (a guard before it, or the deadline, stopped the
            // call): it took nothing to give back.
            let budget = refused_by != Some(BUDGET_AT) && !self.has(BUDGET_LATER);
            self.tell_not_made(held, budget);
        }
        // A call refused before its first attempt made none: counted as a
        // call, `refused`, beside the guard's own count (its `stopped`).
        if let Some(stats) = self.policy.get_stats() {
            if self.attempts > 0 {
                observe::late_give_up(stats, self.attempts, self.max(), self.elapsed(), reason);
            } else {
                observe::refused(stats, self.max(), self.elapsed(), reason);
            }
        }
        #[cfg(feature = "tracing")]
        self.spans.stopped_before_attempt(self.attempts, reason);
    }

    /// The call stops for a guard's refusal, which would admit again
    /// after `wait` (`None`: it cannot tell).
    #[cold]
    fn refused_for(&mut self, wait: Option<Duration>) {
        match wait {
            Some(wait) => {
                self.prev = saturating_nanos(wait);
                self.flags |= RETRY_IN;
            }
            None => self.flags &= !RETRY_IN,
        }
    }

    /// When the call stopped for a guard's refusal, how long after it that
    /// guard would admit an attempt again, as the guard said
    /// ([`Guard::retry_in`]; for a wait that left no room before the
    /// deadline, that wait): what the caller is told to wait before a new
    /// call. `None` otherwise.
    pub(crate) const fn retry_in(&self) -> Option<Duration> {
        if self.stop.is_some() && self.has(RETRY_IN) {
            Some(Duration::from_nanos(self.prev))
        } else {
            None
        }
    }

    /// The refusal the call stopped for before its first attempt, with
    /// the refusing guard's [`retry_in`](Engine::retry_in). `reason`
    /// stands in for a stop the engine does not hold.
    pub(crate) fn refused_error(&self, reason: StopReason) -> crate::Refused {
        let refused = crate::Refused::new(self.refusal().unwrap_or(reason));
        match self.retry_in() {
            Some(wait) => refused.with_retry_in(wait),
            None => refused,
        }
    }

    /// Nanoseconds since the call started, saturating; 0 before the clock
    /// was first read.
    fn elapsed_nanos(&self) -> u64 {
        self.elapsed().map_or(0, saturating_nanos)
    }

    /// Time since the call started, on its clock; `None` before the clock
    /// was first read.
    fn elapsed(&self) -> Option<Duration> {
        self.start
            .map(|start| now(self.flags).saturating_duration_since(start))
    }

    /// Whether the policy bounds each attempt (`timeout`).
    #[inline]
    pub(crate) const fn has_timeout(&self) -> bool {
        self.policy.timeout_nanos().is_some()
    }

    /// How long the next attempt may run: the policy's timeout, cut to what
    /// is left of the deadline; `None` when neither is set.
    #[inline]
    pub(crate) fn attempt_limit(&self) -> Option<Duration> {
        let policy = self.policy;
        let left = policy
            .deadline_nanos()
            .map(|deadline| deadline.saturating_sub(self.elapsed_nanos()));
        let nanos = match (policy.timeout_nanos(), left) {
            (Some(timeout), Some(left)) => timeout.min(left),
            (Some(limit), None) | (None, Some(limit)) => limit,
            (None, None) => return None,
        };
        Some(Duration::from_nanos(nanos))
    }

    /// Notes that the attempt just made ran out of its time.
    pub(crate) fn note_timeout(&mut self) {
        self.flags |= TIMED_OUT;
    }

    /// Whether a subscriber wants the call's spans.
    #[cfg(feature = "tracing")]
    #[inline]
    pub(crate) const fn spans_on(&self) -> bool {
        self.spans.is_on()
    }

    /// The running attempt's span, to enter around its polls, if a
    /// subscriber wants it.
    #[cfg(feature = "tracing")]
    pub(crate) fn attempt_span(&mut self) -> Option<tracing::Span> {
        if !self.spans.is_on() {
            return None;
        }
        let budget_left = self.policy.get_budget().map(RetryBudget::balance);
        self.spans.attempt(self.attempt_number(), budget_left)
    }

    /// The number of the attempt about to run (or running), 1 for the first.
    pub(crate) const fn attempt_number(&self) -> u32 {
        self.attempts.saturating_add(1)
    }

    /// When the call's clock started, starting it now if it was not yet,
    /// and whether it is the system clock (else tokio's).
    pub(crate) fn clock_start(&mut self) -> (std::time::Instant, bool) {
        let flags = self.flags;
        (
            *self.start.get_or_insert_with(|| now(flags)),
            self.has(BLOCKING),
        )
    }

    /// The call's key, drawn now if none was yet.
    pub(crate) fn key(&mut self) -> IdempotencyKey {
        if !self.has(HAS_KEY) {
            self.set_key(IdempotencyKey::random());
        }
        let [high, low] = self.key;
        IdempotencyKey::from_u128((u128::from(high) << 64) | u128::from(low))
    }

    /// The most attempts this call makes: the policy's `max`, or 1 for a
    /// nested call held to one attempt.
    pub(crate) const fn max(&self) -> u32 {
        if self.has(NESTED_ONCE) {
            1
        } else {
            self.policy.get_max()
        }
    }

    /// The policy the call runs under.
    pub(crate) const fn policy(&self) -> &'p Policy {
        self.policy
    }

    /// The most attempts the call makes after `error`: the error's own
    /// [`Limits`](crate::Limits) `max`, if it has one, else the policy's
    /// (1 for a nested call held to one attempt, whatever the error says).
    #[inline]
    fn max_after<E: Classify>(&self, error: &E) -> u32 {
        match error.limits().get_max() {
            Some(max) if !self.has(NESTED_ONCE) => max,
            _ => self.max(),
        }
    }

    /// Attempts made so far (saturating at `u32::MAX`).
    #[must_use]
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Why the call gave up: `None` while retrying and after a success.
    #[must_use]
    pub const fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }
}

impl Drop for Engine<'_> {
    /// A call dropped while the guards hold something for it gives it
    /// back (see `OWED`): one test of the flags otherwise.
    #[inline]
    fn drop(&mut self) {
        if self.flags & (OWED | IN_FLIGHT) != 0 {
            self.dropped();
        }
    }
}

/// Whether `policy` names a guard or a budget: known at compile time for a
/// `const` policy, so a call without either runs no guard code.
#[inline]
const fn has_guards(policy: &Policy) -> bool {
    policy.has_guards()
}

/// Asks `guard` about `next`, its statistics record joining the registry
/// the first time a call asks it (one relaxed load after that).
#[inline]
pub(crate) fn ask(guard: &'static dyn Guard, next: &NextAttempt) -> Admit {
    if let Some(record) = guard.record() {
        record.register();
    }
    guard.admit(next)
}

/// Now, on the clock `flags` name (`BLOCKING`: the system's, else tokio's).
#[inline]
pub(crate) fn now(flags: u16) -> std::time::Instant {
    now_on(flags & BLOCKING != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RetryBudget;
    use crate::call::glue::step;
    use crate::engine::hooks::{always, ignore};
    use crate::{RetryOn, seed_jitter};
    use proptest::prelude::*;

    #[derive(Debug, PartialEq)]
    struct Fail {
        class: ErrorClass,
        hint: Option<Duration>,
    }

    impl Classify for Fail {
        fn classify(&self) -> ErrorClass {
            self.class
        }
        fn retry_after(&self) -> Option<Duration> {
            self.hint
        }
    }

    fn fail(class: ErrorClass) -> Result<(), Fail> {
        Err(Fail { class, hint: None })
    }

    fn hinted(class: ErrorClass, hint: Duration) -> Result<(), Fail> {
        Err(Fail {
            class,
            hint: Some(hint),
        })
    }

    const MS: Duration = Duration::from_millis(1);

    /// The delays, attempts, stop reason and final result of [`run`].
    type Outcome = (
        Vec<Duration>,
        u32,
        Option<StopReason>,
        Option<Result<(), Fail>>,
    );

    /// Steps `results` through one engine until it breaks; returns the delays
    /// and the engine's final state.
    fn run(policy: &Policy, results: impl IntoIterator<Item = Result<(), Fail>>) -> Outcome {
        let mut engine = Engine::new(policy, Clock::Tokio);
        let mut delays = Vec::new();
        for result in results {
            match engine.step(result, always, ignore) {
                ControlFlow::Continue(d) => delays.push(d),
                ControlFlow::Break(r) => {
                    return (delays, engine.attempts(), engine.stop_reason(), Some(r));
                }
            }
        }
        (delays, engine.attempts(), engine.stop_reason(), None)
    }

    #[test]
    fn success_breaks_at_once_without_a_stop_reason() {
        let (delays, attempts, stop, result) = run(&Policy::new(), [Ok(())]);
        assert!(delays.is_empty());
        assert_eq!((attempts, stop, result), (1, None, Some(Ok(()))));
    }

    #[test]
    fn transient_retried_until_max() {
        let policy = Policy::new().max(4).jitter(Jitter::None).base(10 * MS);
        let (delays, attempts, stop, result) = run(
            &policy,
            std::iter::repeat_with(|| fail(ErrorClass::Transient)),
        );
        assert_eq!(delays, [10 * MS, 20 * MS, 40 * MS]);
        assert_eq!(attempts, 4);
        assert_eq!(stop, Some(StopReason::Exhausted));
        assert_eq!(result, Some(fail(ErrorClass::Transient)));
    }

    #[test]
    fn invalid_and_fatal_stop_after_one_attempt() {
        for class in [ErrorClass::Invalid, ErrorClass::Fatal] {
            let (delays, attempts, stop, result) = run(&Policy::new(), [fail(class)]);
            assert!(delays.is_empty());
            assert_eq!(attempts, 1);
            assert_eq!(stop, Some(StopReason::NotRetryable));
            assert_eq!(result, Some(fail(class)));
        }
    }

    #[test]
    fn classes_outside_on_are_not_retried() {
        let policy = Policy::new().on(RetryOn::TRANSIENT);
        let (_, attempts, stop, _) = run(&policy, [fail(ErrorClass::RateLimited)]);
        assert_eq!((attempts, stop), (1, Some(StopReason::NotRetryable)));
        let policy = Policy::new().on(RetryOn::RATE_LIMITED);
        let (_, attempts, stop, _) = run(&policy, [fail(ErrorClass::Transient)]);
        assert_eq!((attempts, stop), (1, Some(StopReason::NotRetryable)));
    }

    #[test]
    fn a_non_retryable_error_on_the_last_attempt_is_not_retryable_rather_than_exhausted() {
        let policy = Policy::new().max(2).base(Duration::ZERO);
        let (_, attempts, stop, _) = run(
            &policy,
            [fail(ErrorClass::Transient), fail(ErrorClass::Fatal)],
        );
        assert_eq!((attempts, stop), (2, Some(StopReason::NotRetryable)));
    }

    #[test]
    fn when_is_anded_with_on_and_asked_only_about_retried_classes() {
        let policy = Policy::new().base(Duration::ZERO).on(RetryOn::TRANSIENT);
        let mut asked = Vec::new();
        let mut engine = Engine::new(&policy, Clock::Tokio);
        let mut when = |e: &Fail| {
            asked.push(e.class);
            e.hint.is_none()
        };
        assert!(
            engine
                .step(fail(ErrorClass::Transient), &mut when, ignore)
                .is_continue()
        );
        assert!(
            engine
                .step(hinted(ErrorClass::Transient, MS), &mut when, ignore)
                .is_break()
        );
        assert_eq!(engine.stop_reason(), Some(StopReason::NotRetryable));
        let mut engine = Engine::new(&policy, Clock::Tokio);
        assert!(
            engine
                .step(fail(ErrorClass::RateLimited), &mut when, ignore)
                .is_break()
        );
        assert!(
            engine
                .step(fail(ErrorClass::Invalid), &mut when, ignore)
                .is_break()
        );
        assert_eq!(asked, [ErrorClass::Transient, ErrorClass::Transient]);
    }

    #[test]
    fn notify_sees_each_retry_before_its_sleep() {
        let policy = Policy::new().max(3).jitter(Jitter::None).base(5 * MS);
        let mut events = Vec::new();
        let mut engine = Engine::new(&policy, Clock::Tokio);
        let mut notify = |e: &Fail, ev: &RetryEvent| events.push((e.class, *ev));
        let mut delays = Vec::new();
        for class in [
            ErrorClass::Transient,
            ErrorClass::RateLimited,
            ErrorClass::Transient,
        ] {
            if let ControlFlow::Continue(d) = engine.step(fail(class), always, &mut notify) {
                delays.push(d);
            }
        }
        let expected = |attempt, delay, class| {
            (
                class,
                RetryEvent {
                    attempt,
                    max: 3,
                    delay,
                    class,
                },
            )
        };
        assert_eq!(
            events,
            [
                expected(1, 5 * MS, ErrorClass::Transient),
                expected(2, 10 * MS, ErrorClass::RateLimited),
            ]
        );
        assert_eq!(delays, [5 * MS, 10 * MS]);
    }

    #[test]
    fn a_hint_is_waited_for_any_retried_class_on_top_of_the_backoff() {
        let policy = Policy::new().jitter(Jitter::None).base(MS);
        for class in [ErrorClass::Transient, ErrorClass::RateLimited] {
            let (delays, ..) = run(&policy, [hinted(class, Duration::from_secs(3)), Ok(())]);
            assert_eq!(delays, [Duration::from_secs(3) + MS]);
        }
    }

    #[test]
    fn a_zero_hint_waits_the_backoff_like_no_hint() {
        let policy = Policy::new().base(100 * MS).max(2);
        for seed in 0..20 {
            seed_jitter(seed);
            let (hinted_delays, ..) = run(
                &policy,
                [hinted(ErrorClass::RateLimited, Duration::ZERO), Ok(())],
            );
            seed_jitter(seed);
            let (plain, ..) = run(&policy, [fail(ErrorClass::RateLimited), Ok(())]);
            assert_eq!(hinted_delays, plain, "seed {seed}");
        }
    }

    #[test]
    fn a_hint_above_the_limit_stops_at_once() {
        let policy = Policy::new().max_retry_after(Duration::from_secs(10));
        let (delays, attempts, stop, result) = run(
            &policy,
            [hinted(ErrorClass::RateLimited, Duration::from_secs(11))],
        );
        assert!(delays.is_empty());
        assert_eq!((attempts, stop), (1, Some(StopReason::HintTooLong)));
        assert_eq!(
            result,
            Some(hinted(ErrorClass::RateLimited, Duration::from_secs(11)))
        );
        // Exactly the limit is still honoured.
        let (delays, ..) = run(
            &policy.jitter(Jitter::None),
            [
                hinted(ErrorClass::RateLimited, Duration::from_secs(10)),
                Ok(()),
            ],
        );
        assert_eq!(delays, [Duration::from_secs(10) + policy.get_base()]);
    }

    #[test]
    fn decorrelated_follows_the_previous_backoff_not_the_hint() {
        seed_jitter(3);
        let policy = Policy::new()
            .jitter(Jitter::Decorrelated)
            .base(10 * MS)
            .cap(Duration::from_secs(100))
            .max(10);
        let mut engine = Engine::new(&policy, Clock::Tokio);
        let mut prev = 10 * MS;
        for i in 0..9 {
            let result = if i == 4 {
                hinted(ErrorClass::RateLimited, Duration::from_secs(60))
            } else {
                fail(ErrorClass::Transient)
            };
            let ControlFlow::Continue(d) = engine.step(result, always, ignore) else {
                panic!("stopped early");
            };
            // The hint is waited on top of a backoff drawn as usual, which
            // the next draw follows.
            let backoff = if i == 4 {
                assert!(d >= Duration::from_secs(60));
                d - Duration::from_secs(60)
            } else {
                d
            };
            assert!(
                backoff >= 10 * MS && backoff <= prev * 3,
                "{backoff:?} after {prev:?}"
            );
            prev = backoff;
        }
    }

    #[test]
    fn max_u32_attempts_does_not_overflow() {
        let policy = Policy::new().max(u32::MAX).base(Duration::MAX);
        let (delays, attempts, stop, result) = run(&policy, [fail(ErrorClass::Transient), Ok(())]);
        assert_eq!(delays.len(), 1);
        assert!(delays[0] <= policy.get_cap());
        assert_eq!((attempts, stop, result), (2, None, Some(Ok(()))));

        // An engine driven past u32::MAX attempts saturates and stops.
        let mut engine = Engine::new(&policy, Clock::Tokio);
        engine.attempts = u32::MAX - 1;
        assert!(
            engine
                .step(fail(ErrorClass::Transient), always, ignore)
                .is_break()
        );
        assert_eq!(engine.attempts(), u32::MAX);
        assert_eq!(engine.stop_reason(), Some(StopReason::Exhausted));
        assert!(
            engine
                .step(fail(ErrorClass::Transient), always, ignore)
                .is_break()
        );
        assert_eq!(engine.attempts(), u32::MAX);
    }

    #[test]
    fn max_zero_still_makes_one_attempt() {
        let (delays, attempts, stop, _) = run(&Policy::new().max(0), [fail(ErrorClass::Transient)]);
        assert!(delays.is_empty());
        assert_eq!((attempts, stop), (1, Some(StopReason::Exhausted)));
    }

    #[test]
    fn the_generated_codes_step_is_engine_step() {
        let policy = Policy::new().max(2).jitter(Jitter::None).base(MS);
        let mut engine = Engine::new(&policy, Clock::Tokio);
        let first = step(&mut engine, fail(ErrorClass::Transient), always, ignore);
        assert_eq!(first, ControlFlow::Continue(MS));
        let second = step(&mut engine, fail(ErrorClass::Transient), always, ignore);
        assert_eq!(second, ControlFlow::Break(fail(ErrorClass::Transient)));
        assert_eq!(engine.stop_reason(), Some(StopReason::Exhausted));
        let mut engine = Engine::new(&policy, Clock::Tokio);
        let ok = step(&mut engine, Ok::<u8, Fail>(7), always, ignore);
        assert_eq!(ok, ControlFlow::Break(Ok(7)));
    }

    #[test]
    fn the_budget_pays_only_for_retries_that_happen() {
        static BUDGET: RetryBudget = RetryBudget::with_capacity(100);
        let policy = Policy::new()
            .max(2)
            .max_retry_after(Duration::from_secs(1))
            .budget(&BUDGET);
        // Stopped before any wait: not retryable, exhausted, hint too long.
        let (_, _, stop, _) = run(&policy, [fail(ErrorClass::Invalid)]);
        assert_eq!(stop, Some(StopReason::NotRetryable));
        let (_, _, stop, _) = run(
            &policy,
            [hinted(ErrorClass::RateLimited, Duration::from_secs(2))],
        );
        assert_eq!(stop, Some(StopReason::HintTooLong));
        assert_eq!(BUDGET.balance(), 100);
        let (delays, _, stop, _) = run(
            &policy,
            std::iter::repeat_with(|| fail(ErrorClass::Transient)),
        );
        assert_eq!((delays.len(), stop), (1, Some(StopReason::Exhausted)));
        assert_eq!(BUDGET.balance(), 95, "one retry, one charge");

        // A deadline that stops the wait stops it before the charge.
        let policy = policy
            .deadline(Duration::from_nanos(1))
            .jitter(Jitter::None);
        let (_, _, stop, _) = run(&policy, [fail(ErrorClass::Transient)]);
        assert_eq!(stop, Some(StopReason::Deadline));
        assert_eq!(BUDGET.balance(), 95);
    }

    #[test]
    fn a_retry_after_a_timeout_costs_more_and_a_success_gives_it_back() {
        static BUDGET: RetryBudget = RetryBudget::with_capacity(100);
        let policy = Policy::new().max(3).base(MS).budget(&BUDGET);
        let mut engine = Engine::new(&policy, Clock::Tokio);
        engine.note_timeout();
        assert!(
            engine
                .step(fail(ErrorClass::Transient), always, ignore)
                .is_continue()
        );
        assert_eq!(BUDGET.balance(), 90);
        // The flag is for one attempt only.
        assert!(
            engine
                .step(fail(ErrorClass::Transient), always, ignore)
                .is_continue()
        );
        assert_eq!(BUDGET.balance(), 85);
        assert!(engine.step(Ok::<(), Fail>(()), always, ignore).is_break());
        assert_eq!(BUDGET.balance(), 90, "the last retry's 5 come back");
    }

    #[test]
    fn attempt_limit_is_the_timeout_cut_to_what_is_left() {
        let policy = Policy::new();
        assert_eq!(Engine::new(&policy, Clock::Tokio).attempt_limit(), None);
        let policy = Policy::new().timeout(Duration::from_secs(5));
        assert_eq!(
            Engine::new(&policy, Clock::Tokio).attempt_limit(),
            Some(Duration::from_secs(5))
        );
        let policy = Policy::new().deadline(Duration::from_secs(3600));
        let limit = Engine::new(&policy, Clock::Tokio).attempt_limit().unwrap();
        assert!(limit <= Duration::from_secs(3600) && limit > Duration::from_secs(3500));
        let policy = policy.timeout(Duration::from_secs(5));
        assert_eq!(
            Engine::new(&policy, Clock::Tokio).attempt_limit(),
            Some(Duration::from_secs(5))
        );
        let policy = Policy::new()
            .deadline(Duration::ZERO)
            .timeout(Duration::from_secs(5));
        assert_eq!(
            Engine::new(&policy, Clock::Tokio).attempt_limit(),
            Some(Duration::ZERO)
        );
    }

    fn any_class() -> impl Strategy<Value = ErrorClass> {
        prop_oneof![
            Just(ErrorClass::Transient),
            Just(ErrorClass::RateLimited),
            Just(ErrorClass::Invalid),
            Just(ErrorClass::Fatal),
        ]
    }

    fn any_duration() -> impl Strategy<Value = Duration> {
        prop_oneof![
            Just(Duration::ZERO),
            Just(Duration::MAX),
            (0..=u64::MAX).prop_map(Duration::from_nanos),
            (any::<u64>(), 0..1_000_000_000u32).prop_map(|(s, n)| Duration::new(s, n)),
        ]
    }

    proptest! {
        #[test]
        fn hinted_waits_are_bounded(
            hint in any_duration(),
            limit in any_duration(),
            seed in any::<u64>(),
            jitter in prop_oneof![Just(Jitter::None), Just(Jitter::Full), Just(Jitter::Equal), Just(Jitter::Decorrelated)],
        ) {
            seed_jitter(seed);
            let policy = Policy::new().jitter(jitter).max_retry_after(limit);
            let mut engine = Engine::new(&policy, Clock::Tokio);
            let step = engine.step(hinted(ErrorClass::RateLimited, hint), always, ignore);
            let hint_ns = saturating_nanos(hint);
            if hint_ns > saturating_nanos(limit) {
                prop_assert!(step.is_break());
                prop_assert_eq!(engine.stop_reason(), Some(StopReason::HintTooLong));
            } else {
                let ControlFlow::Continue(d) = step else {
                    return Err(TestCaseError::fail("a hint within the limit must be waited"));
                };
                let d = saturating_nanos(d);
                prop_assert!(d >= hint_ns);
                prop_assert!(d - hint_ns <= policy.cap_nanos(), "the backoff on top is capped");
            }
        }

        #[test]
        fn any_sequence_of_errors_ends_within_max_and_never_waits_past_cap(
            classes in proptest::collection::vec(any_class(), 1..20),
            max in 0..10u32,
            base in any_duration(),
            cap in any_duration(),
            seed in any::<u64>(),
        ) {
            seed_jitter(seed);
            let policy = Policy::new().max(max).base(base).cap(cap).jitter(Jitter::Decorrelated);
            let mut engine = Engine::new(&policy, Clock::Tokio);
            let mut steps = 0;
            for class in classes {
                steps += 1;
                match engine.step(fail(class), always, ignore) {
                    ControlFlow::Continue(d) => {
                        prop_assert!(class.is_retryable());
                        prop_assert!(d <= policy.get_cap());
                    }
                    ControlFlow::Break(_) => break,
                }
            }
            prop_assert!(steps <= max.max(1));
            prop_assert_eq!(engine.attempts(), steps);
        }
    }
}
