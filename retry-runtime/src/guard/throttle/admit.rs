//! The throttle's answers in process: `admit_here` (the gate before the
//! first answer, the bucket, the window), the recheck after a wait, what
//! each outcome does to the rate (`observe_here`), and what a store reads
//! of an outcome.
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::bucket::{nanos_ceil, seconds};
use super::{HEARD, PROBE_POLL, Throttle};
use crate::clock::{MIN_ATTEMPT_NANOS, TIMER_ROUNDING_NANOS, saturating_nanos, since_epoch};
use crate::{Admit, AttemptResult, ErrorClass, NextAttempt, Outcome, StopReason};

impl Throttle {
    /// Before the provider first answered, with
    /// [`probe_first`](Throttle::probe_first): `Go` for the first attempt,
    /// a short wait for the others until the answer comes or the wait runs
    /// out; `None` once it did.
    pub(super) fn gate(&self, next: &NextAttempt) -> Option<Admit> {
        let mut probe = self.probe.load(Ordering::Acquire);
        if probe == HEARD {
            return None;
        }
        let now = since_epoch(next.now);
        if probe == 0 {
            match self
                .probe
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
            {
                // The probe: it goes, and the answer it gets opens the gate.
                Ok(_) => return Some(Admit::Go),
                Err(started) => probe = started,
            }
            if probe == HEARD {
                return None;
            }
        }
        let until = probe.saturating_add(self.probe_first);
        if now >= until {
            // No answer in time: the gate opens without one.
            self.probe.store(HEARD, Ordering::Release);
            return None;
        }
        let wait = PROBE_POLL.min(until - now);
        if next.deadline_left.is_some_and(|left| no_room(wait, left)) {
            // No time to wait for the answer: it goes without.
            return None;
        }
        self.gated.fetch_add(1, Ordering::AcqRel);
        let wait = Duration::from_nanos(wait);
        self.record.waited(wait);
        Some(Admit::Wait(wait))
    }

    /// An attempt about to start after a wait: it goes if the starts
    /// keep to the rate, else it waits until they would (taking nothing:
    /// it is asked again then). Its token was taken when the wait was
    /// planned; this only keeps calls another guard held back (a
    /// cooldown's queue, released every 10 ms) from starting in a burst.
    fn recheck(&self, next: &NextAttempt) -> Admit {
        let now = since_epoch(next.now);
        let mut state = self.lock();
        if !state.enabled {
            return Admit::Go;
        }
        let earliest = state.earliest_start();
        if earliest <= now {
            state.start(now);
            return Admit::Go;
        }
        drop(state);
        let wait = earliest - now;
        if next.deadline_left.is_some_and(|left| no_room(wait, left)) {
            self.record.stopped();
            return Admit::Stop(StopReason::Deadline);
        }
        Admit::Wait(Duration::from_nanos(wait))
    }

    /// Bound to a store, this process's probe held for another process's
    /// (`left` until its wait ends): the gate reopens, so the next call
    /// asking becomes this process's probe and asks the fleet again, in
    /// [`PROBE_POLL`] at most; with no time for that before the
    /// deadline, the call goes without.
    #[doc(hidden)]
    pub fn held_for_the_fleet(&self, next: &NextAttempt, left: Duration) -> Admit {
        let _ = self
            .probe
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |probe| {
                (probe != HEARD).then_some(0)
            });
        let wait = PROBE_POLL.min(saturating_nanos(left).max(1));
        if next.deadline_left.is_some_and(|left| no_room(wait, left)) {
            return Admit::Go;
        }
        self.gated.fetch_add(1, Ordering::AcqRel);
        let wait = Duration::from_nanos(wait);
        self.record.waited(wait);
        Admit::Wait(wait)
    }

    /// Bound to a store, the fleet's throttle paces or its probe's wait
    /// ran out: this process's calls are held no longer.
    #[doc(hidden)]
    pub fn heard_first(&self) {
        self.probe.store(HEARD, Ordering::Release);
    }

    /// [`Guard::admit`] on this process's state alone.
    #[doc(hidden)]
    pub fn admit_here(&self, next: &NextAttempt) -> Admit {
        // A call asked again after waiting for the first answer holds no
        // token: it is admitted afresh. (One that was dropped while
        // waiting leaves its count behind: the next call asked again
        // after a wait takes a token it needs not, once.)
        let gated = next.recheck
            && self.probe_first != 0
            && self
                .gated
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                .is_ok();
        if self.probe_first != 0
            && let Some(answer) = self.gate(next)
        {
            return answer;
        }
        if !self.engaged.load(Ordering::Acquire) {
            return Admit::Go;
        }
        if next.recheck && !gated {
            return self.recheck(next);
        }
        let now = since_epoch(next.now);
        let planned = saturating_nanos(next.wait);
        let ready = now.saturating_add(planned);
        let mut state = self.lock();
        // The window's start for it, held to `max_retry_after`.
        let slot = state.window_slot(ready);
        let held = slot.map_or(ready, |slot| {
            slot.min(ready.saturating_add(saturating_nanos(next.max_retry_after)))
        });
        let mut extra = held - ready;
        // Its token, if the bucket paces: what the bucket holds now, less
        // one. Under a window's hold, what the bucket could not hold by the
        // end of it is lost too: no call starts before then to use it, so
        // the calls held are released at the rate, not in a burst. (A
        // call's own planned wait is its own: the tokens before it are
        // left to the others.)
        let mut tokens = 0.0;
        if state.enabled {
            let at = state.at(now);
            state.fill(at);
            let hold = if extra > 0 { seconds(held - now) } else { 0.0 };
            tokens = state.tokens.min(state.capacity - hold * state.fill_rate) - 1.0;
            if tokens < 0.0 {
                let until_token = nanos_ceil(-tokens / state.fill_rate);
                extra = extra.max(until_token.saturating_sub(planned));
            }
            if planned == 0 {
                // Starting now: no sooner than the starts keep to the rate.
                extra = extra.max(state.earliest_start().saturating_sub(now));
            }
        }
        if extra > 0
            && let Some(left) = next.deadline_left
        {
            // The engine's own check (`Engine::leaves_no_room`), on the
            // whole wait.
            if no_room(planned.saturating_add(extra), left) {
                drop(state);
                self.record.stopped();
                return Admit::Stop(StopReason::Deadline);
            }
        }
        if tokens < 0.0 && slot.is_none() && next.queues && !next.recheck && !self.is_bound() {
            // An async call waits for its token in the queue, which
            // re-times it as the rate changes, rather than keeping a slot
            // reserved at the rate of now (`admit_async`); at a retry's
            // decision it takes nothing, and is asked again after its
            // backoff.
            return Admit::Later;
        }
        if state.enabled {
            state.tokens = tokens;
        }
        if let Some(slot) = slot {
            // The next start: one spacing on, after any burst the window
            // still allows.
            let from = state
                .window_next
                .max(slot.saturating_sub(state.window_burst));
            state.window_next = from.saturating_add(state.window_spacing);
        }
        if state.enabled && planned == 0 && extra == 0 {
            // It starts now, and will not be asked again.
            state.start(now);
        }
        drop(state);
        if extra == 0 {
            return Admit::Go;
        }
        let wait = Duration::from_nanos(extra);
        self.record.waited(wait);
        Admit::Wait(wait)
    }

    /// [`Guard::observe`] on this process's state alone.
    pub(super) fn observe_here(&self, outcome: &Outcome) {
        if self.probe_first != 0 && outcome.result != AttemptResult::NotMade {
            // The provider answered: the calls held for it go.
            self.probe.store(HEARD, Ordering::Release);
        }
        if outcome.result == AttemptResult::NotMade {
            let mut state = self.lock();
            if state.enabled {
                state.credit(1.0);
            }
            return;
        }
        let mut throttled = throttled(outcome);
        let now = since_epoch(outcome.now);
        let mut state = self.lock();
        let overload = overload_only(outcome);
        state.overloads = if overload {
            state.overloads.saturating_add(1)
        } else {
            0
        };
        if throttled == Some(true) && state.mirrored && overload {
            // An overload says nothing of this fleet's rate (a busy
            // provider answers a share of everyone's calls 529 or
            // overloaded_error), and did not take from the provider's
            // bucket: its start under the window goes back. While the
            // provider's headers say what it allows, an overload cuts the
            // adaptive rate only in a run of them (an outage, met with a
            // trickle); the next success puts the rate back to what the
            // headers allow (`State::update`).
            if state.overloads < OVERLOADS_TO_CUT {
                throttled = None;
            }
            let floor = now;
            state.window_next = state
                .window_next
                .saturating_sub(state.window_spacing)
                .max(floor);
        }
        match throttled {
            Some(throttled) => {
                let (was_on, before) = (state.enabled, state.fill_rate);
                let at = state.at(now);
                let after = state.update(at, throttled, self.min_rate, self.max_rate);
                if throttled {
                    self.decreases.fetch_add(1, Ordering::Relaxed);
                    self.record.changed(if was_on { "rate cut" } else { "on" });
                } else if was_on && after > before {
                    self.increases.fetch_add(1, Ordering::Relaxed);
                }
            }
            None => {
                let at = state.at(now);
                state.measure(at);
            }
        }
        if let (Some(remaining), Some(reset)) =
            (outcome.signals.get_remaining(), outcome.signals.get_reset())
        {
            state.report(now, remaining, reset, outcome.signals.get_limit());
        }
        let engaged = state.enabled || state.window_until != 0 || state.mirrored;
        self.publish(&state);
        // The calls queued for a token look again when the rate rose by a
        // tenth since they last did (a few wakes for each doubling).
        let rose = state.enabled && state.fill_rate > state.told_rate * 1.1;
        if rose || state.fill_rate < state.told_rate {
            state.told_rate = state.fill_rate;
        }
        drop(state);
        if engaged {
            self.engaged.store(true, Ordering::Release);
        }
        if rose {
            self.rose.notify_waiters();
        }
    }
}

/// Whether a wait of `wait` nanoseconds leaves no room in `left` for an
/// attempt: the wait, a tick of the timer's rounding and one attempt's
/// least time must fit (the engine's check, `Engine::leaves_no_room`).
pub(super) fn no_room(wait: u64, left: Duration) -> bool {
    wait.saturating_add(TIMER_ROUNDING_NANOS)
        .saturating_add(MIN_ATTEMPT_NANOS)
        > saturating_nanos(left)
}

/// What an outcome tells a throttle: `Some(true)` a throttle (a
/// `RateLimited` or overloaded failure), `Some(false)` a success, `None`
/// neither (another failure, an attempt not made, or a 429 that says where
/// the provider's bucket stands: that corrects the mirror of it, and does
/// not cut the adaptive rate).
/// Overloads in a row, with no other outcome between, that cut the rate
/// of a throttle the provider's headers pace: three (at a tenth of
/// answers overloaded at random, one outcome in a thousand ends such a
/// run; in an outage every one does). A throttle bound to a store has the
/// fleet's script keep the same rule, counting the overloads every
/// process heard, a report between ending the run.
pub(super) const OVERLOADS_TO_CUT: u32 = 3;

/// Whether `outcome` is an overload and not a rate limit: a failure that
/// says the provider as a whole is refusing work, of a class other than
/// `RateLimited`.
pub fn overload_only(outcome: &Outcome) -> bool {
    matches!(
        outcome.result,
        AttemptResult::Failure { class, .. } if class != ErrorClass::RateLimited
    ) && outcome.signals.is_overloaded()
}

/// What `outcome` says of the rate: `Some(true)` a throttle (a rate limit
/// that does not say where the provider's bucket stands, or an overload),
/// `Some(false)` a success, `None` nothing (another failure, a 429 whose
/// headers say where the bucket stands, an attempt not made).
pub fn throttled(outcome: &Outcome) -> Option<bool> {
    let signals = outcome.signals;
    let bucket_said = signals.get_limit().is_some()
        && signals.get_remaining().is_some()
        && signals.get_reset().is_some();
    match outcome.result {
        AttemptResult::Success => Some(false),
        AttemptResult::Failure {
            class: ErrorClass::RateLimited,
            ..
        } if bucket_said && !signals.is_overloaded() => None,
        AttemptResult::Failure {
            class: ErrorClass::RateLimited,
            ..
        } => Some(true),
        AttemptResult::Failure { .. } if signals.is_overloaded() => Some(true),
        AttemptResult::Failure { .. } | AttemptResult::NotMade => None,
    }
}
