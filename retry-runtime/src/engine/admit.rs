//! The engine and the guards: asking the chain and the budget at a
//! retry's decision (`admit_retry`), telling them every outcome, and what
//! the pacer and a dropped call need of the engine to give back what the
//! guards took.
use std::time::Duration;

use super::{
    AFTER_TIMEOUT, ALL_HELD, BLOCKING, BUDGET_AT, BUDGET_LATER, Engine, GIVEN_BACK_ON_WAIT,
    HELD_SHIFT, IN_FLIGHT, OWED, PACE, PROBING, REFUSABLE, RETRY_IN, has_guards, now,
};
use crate::clock::{MIN_ATTEMPT_NANOS, saturating_nanos};
use crate::guard::{AttemptResult, NextAttempt, Outcome};
use crate::observe;
use crate::policy::Chain;
use crate::{Admit, Guard, RetryBudget, Signals, StopReason};

impl<'p> Engine<'p> {
    /// Asks the guards whether the retry after a wait of `nanos` may be
    /// made: each of the policy's chain in order (see `Policy::chain`),
    /// then its budget. `Ok` with the wait, lengthened by what the guards
    /// asked for, or the reason to stop; the guards that admitted the
    /// retry hear it was not made when a later check stops the call.
    #[inline(never)]
    pub(super) fn admit_retry(
        &mut self,
        after_timeout: bool,
        nanos: u64,
    ) -> Result<u64, StopReason> {
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
                    self.spans.lengthened(at, more);
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
                // before the attempt (see `call/pace/`).
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
        // A concurrency limit's permit is taken just before the attempt,
        // after the wait (see `call/pace/`).
        if again != 0 || policy.get_concurrency().is_some() {
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
    pub(super) fn tell_guards_in(
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
    pub(super) fn tell_guards(&self, attempt: u32, result: AttemptResult, signals: Signals) {
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
    pub(super) fn clock_now(&self) -> (std::time::Instant, Option<Duration>) {
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
    /// probe slot it held. Either way its concurrency permit, if it holds
    /// one.
    #[cold]
    #[inline(never)]
    pub(super) fn dropped(&mut self) {
        self.release_permit();
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

    /// The call now holds a permit of its policy's concurrency limit,
    /// for its next attempt.
    pub(crate) fn take_permit(&mut self) {
        self.permit = true;
    }

    /// Whether the call holds a permit for its next attempt (or the one
    /// running).
    pub(crate) const fn holds_permit(&self) -> bool {
        self.permit
    }

    /// An attempt that held a permit ended with `outcome`: an adaptive
    /// limit hears of it (see [`Concurrency::adaptive`](crate::Concurrency::adaptive)).
    #[inline]
    pub(crate) fn sample_permit(&self, outcome: crate::SampleOutcome) {
        if self.permit
            && let Some(concurrency) = self.policy.get_concurrency()
            && concurrency.get_adaptive().is_some()
        {
            concurrency.sampled(outcome);
        }
    }

    /// Gives back the call's concurrency permit, if it holds one: its
    /// attempt ended (or will not be made), or the call is dropped.
    #[inline]
    pub(crate) fn release_permit(&mut self) {
        if self.permit {
            self.permit = false;
            if let Some(concurrency) = self.policy.get_concurrency() {
                // Kept for the running task's next call, if it makes one
                // in this poll (see `Task`).
                crate::task::give_back(concurrency);
            }
        }
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
    /// (see `call/pace/`), or when the wait ended too close to the deadline
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
        self.release_permit();
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
        self.spans.stopped_before_attempt(self.attempts, reason);
    }

    /// The call stops for a guard's refusal, which would admit again
    /// after `wait` (`None`: it cannot tell).
    #[cold]
    pub(super) fn refused_for(&mut self, wait: Option<Duration>) {
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
