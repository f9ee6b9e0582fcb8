//! The decision: what the engine makes of a failed attempt, every reason
//! to stop in one place (`decide`), and how the outcome is reported to
//! the statistics, the events and the spans.
use std::ops::ControlFlow;
use std::time::Duration;

use super::{Engine, NESTED_ONCE, TIMED_OUT, has_guards};
use crate::clock::{MIN_ATTEMPT_NANOS, TIMER_ROUNDING_NANOS, saturating_nanos};
use crate::engine::hooks::{NotifyFn, WhenFn};
use crate::guard::AttemptResult;
use crate::observe::{self, FailedAttempt};
use crate::policy::backoff::{self, with_thread_rng};
use crate::{Classify, ErrorClass, Jitter, RetryEvent, StopReason};

/// What the engine decided about a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Plan {
    Retry(Duration),
    Stop(StopReason),
}

impl Engine<'_> {
    /// The attempt failed with `error`: `Break(error)` to return it,
    /// `Continue(delay)` to retry after `delay`.
    ///
    /// Its report of the decision is written out here rather than shared
    /// with [`conclude_stop`](Engine::conclude_stop): through one shared
    /// step for both plans, a call that retried once cost 14 instructions
    /// more (`scripts/instructions.sh policy-two`: 634 against 620).
    pub(super) fn failed<E, W, N, F>(
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
            self.spans.in_call(|| match plan {
                Plan::Retry(delay) => observe::retry(stats, &failed, delay),
                Plan::Stop(reason) => observe::give_up(stats, &failed, reason),
            });
            let next = match plan {
                Plan::Retry(delay) => Ok(delay),
                Plan::Stop(reason) => Err(reason),
            };
            self.spans
                .failed(self.attempts, class, failed.variant, next);
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
    pub(super) fn count_failure<E: Classify>(
        &mut self,
        error: &E,
    ) -> (ErrorClass, Option<Duration>) {
        self.attempts = self.attempts.saturating_add(1);
        let class = error.classify();
        let hint = error.retry_after();
        if has_guards(self.policy) {
            if self.permit {
                let outcome = if class == ErrorClass::RateLimited || error.signals().is_overloaded()
                {
                    Some(crate::SampleOutcome::Overloaded)
                } else if self.has(TIMED_OUT) {
                    Some(crate::SampleOutcome::Dropped)
                } else {
                    None
                };
                if let Some(outcome) = outcome {
                    self.sample_permit(outcome);
                }
            }
            self.release_permit();
        }
        if self.policy.has_observers() {
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
    pub(super) fn conclude_stop<E, F>(
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
            self.spans
                .in_call(|| observe::give_up(stats, &failed, reason));
            self.spans
                .failed(self.attempts, class, failed.variant, Err(reason));
        }
        self.stop = Some(reason);
        record(self.attempts, error, class, None);
    }

    // Every reason to stop is checked here and nowhere else (but for a
    // wake-up past the deadline, which `late` catches before the next
    // attempt starts).
    pub(super) fn decide<E, W>(
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

    /// The most attempts the call makes after `error`: the error's own
    /// [`Limits`](crate::Limits) `max`, if it has one, else the policy's
    /// (1 for a nested call held to one attempt, whatever the error says).
    #[inline]
    pub(super) fn max_after<E: Classify>(&self, error: &E) -> u32 {
        match error.limits().get_max() {
            Some(max) if !self.has(NESTED_ONCE) => max,
            _ => self.max(),
        }
    }
}
