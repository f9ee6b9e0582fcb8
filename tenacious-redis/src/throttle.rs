//! A [`Throttle`] shared through Redis: one token bucket and one adaptive
//! rate for the fleet, on the server's clock. Each process takes tokens in
//! batches (50 ms of the rate, at most 64) into a local lease, so most
//! attempts take one in process, a retry just before it starts; the rate
//! is cut by any process's throttle and set by any process's rate-limit
//! headers (an error's, or a success's handed to `Throttle::report`).
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::scripts::THROTTLE_SCRIPT;
use crate::{
    Agreed, BindError, BoxedSync, Link, Member, Settings, Shareable, THROTTLE_IDLE, Unit,
    from_micros, micros,
};
use tenacious_runtime::store::hooks::{MIN_ATTEMPT_NANOS, TIMER_ROUNDING_NANOS, since_epoch};
use tenacious_runtime::{
    Admit, AttemptResult, NextAttempt, Outcome, PendingAdmit, StopReason, Throttle,
};

/// How long a lease's tokens may be used: 50 ms, the batch's span.
const LEASE: Duration = Duration::from_millis(50);
/// The most tokens one batch takes.
const MOST: f64 = 64.0;

pub(crate) struct SharedThrottle {
    pub(crate) link: Arc<Link>,
    key: Arc<str>,
    throttle: &'static Throttle,
    /// Its least and greatest rates, the fleet's.
    agreed: Arc<Agreed>,
    /// Whether the fleet's throttle paces, as last heard.
    on: AtomicBool,
    /// Its rate, ‰ per second, as last heard.
    rate: AtomicU64,
    /// Tokens reserved with a wait, for the calls asked again after it:
    /// when each is due (guard epoch nanoseconds). A call asked again
    /// takes one that is due, never one reserved for a later start: a
    /// call held for another reason (the probe's answer, a backoff)
    /// asked again first would send it early.
    reserved: Mutex<Vec<u64>>,
    /// Tokens leased, and until when (guard epoch nanoseconds).
    lease: AtomicU32,
    lease_until: AtomicU64,
    /// The latest rate-limit report not sent yet, and whether one is on
    /// its way: at most one in flight, the newest sent next.
    report: Mutex<Option<[i64; 3]>>,
    reporting: AtomicBool,
    /// Attempts admitted while the fleet's throttle was off, not counted
    /// in Redis yet: the fleet's send rate, which its first cut starts
    /// from.
    sent: AtomicU32,
    /// Whether the next [`take`](Self::take) is this process's probe,
    /// asking whether it is the fleet's.
    probing: AtomicBool,
}

impl SharedThrottle {
    /// Turns the fleet's throttle off (see [`Throttle::reset`]): its
    /// mirror at once, the key deleted in the background.
    pub(crate) fn reset(&'static self) {
        self.on.store(false, Ordering::Release);
        self.rate.store(0, Ordering::Release);
        self.reserved
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        self.lease.store(0, Ordering::Release);
        self.lease_until.store(0, Ordering::Release);
        *self.report.lock().unwrap_or_else(PoisonError::into_inner) = None;
        crate::forget(&self.link, &self.key);
    }

    fn args(&self, op: i64, a: i64, b: i64, c: i64) -> Vec<i64> {
        let (least, most) = (self.agreed.get(0), self.agreed.get(1));
        vec![op, a, b, c, least, most, micros(THROTTLE_IDLE) / 1000, 0, 0]
    }

    /// This process's probe asks the fleet whether it is the fleet's: the
    /// next [`take`](Self::take) asks as a probe.
    pub(crate) fn probe(&self) -> Admit {
        self.probing.store(true, Ordering::Release);
        Admit::Later
    }

    fn heard(&self, rate: i64, on: i64) {
        self.rate
            .store(u64::try_from(rate).unwrap_or(0), Ordering::Relaxed);
        self.on.store(on == 1, Ordering::Release);
    }

    /// The in-process answer, when it needs no round trip: the fleet's
    /// throttle is off, the call's token was reserved with the wait it
    /// just made, or the lease holds a token. A retry's token is taken
    /// just before it starts, not at its decision: taken then, for a start
    /// after its backoff and its hint, the tokens the fleet's bucket
    /// refills meanwhile would let the calls start in a burst.
    pub(crate) fn admit(&self, next: &NextAttempt) -> Admit {
        if !self.on.load(Ordering::Acquire) {
            if !next.recheck {
                self.sent.fetch_add(1, Ordering::Relaxed);
            }
            return Admit::Go;
        }
        if next.recheck {
            // After a wait: one this throttle asked for, its token taken
            // (tokens due are alike: whichever call comes first uses
            // one); or the retry's own backoff, or another guard's wait.
            if self.take_due(since_epoch(next.now)) {
                return Admit::Go;
            }
        } else if next.attempt > 1 {
            // The retry's decision: asked again just before it starts.
            return Admit::Later;
        }
        let now = since_epoch(next.now);
        if self.lease_until.load(Ordering::Acquire) > now
            && self
                .lease
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                .is_ok()
        {
            return Admit::Go;
        }
        Admit::Later
    }

    /// Takes a reserved token due by `now` (within the timers' rounding),
    /// if any: the earliest.
    fn take_due(&self, now: u64) -> bool {
        let mut reserved = self.reserved.lock().unwrap_or_else(PoisonError::into_inner);
        let by = now.saturating_add(TIMER_ROUNDING_NANOS);
        let earliest = reserved
            .iter()
            .enumerate()
            .filter(|&(_, &due)| due <= by)
            .min_by_key(|&(_, &due)| due)
            .map(|(at, _)| at);
        earliest.is_some_and(|at| {
            reserved.swap_remove(at);
            true
        })
    }

    /// A batch of tokens from the fleet's bucket, or one reserved with its
    /// wait.
    pub(crate) fn take(&'static self, next: NextAttempt) -> PendingAdmit<'static> {
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        let batch = {
            let rate = self.rate.load(Ordering::Relaxed) as f64 / 1000.0;
            (rate * LEASE.as_secs_f64()).clamp(1.0, MOST) as i64
        };
        let longest = next.deadline_left.map_or(i64::MAX, |left| {
            let spare = Duration::from_nanos(TIMER_ROUNDING_NANOS + MIN_ATTEMPT_NANOS);
            micros(left.saturating_sub(next.wait).saturating_sub(spare))
        });
        let probing = self.probing.swap(false, Ordering::AcqRel);
        let mut args = self.args(1, batch, micros(next.wait), longest);
        if probing {
            args[7] =
                i64::try_from(self.throttle.get_probe_first().as_micros()).unwrap_or(i64::MAX);
        }
        // On in this process (its report or cut on its way, or heard):
        // the fleet's bucket, never the free grant of a throttle off.
        args[8] = i64::from(self.on.load(Ordering::Acquire));
        let answer = self
            .link
            .decide::<(i64, i64, i64, i64)>(&THROTTLE_SCRIPT, &self.key, args);
        Box::pin(async move {
            let Some((granted, wait, rate, on)) = answer.await else {
                self.link.local_decision();
                if probing {
                    // This process's probe goes, as it would unbound.
                    return Admit::Go;
                }
                return self.throttle.admit_here(&next);
            };
            if probing {
                if on == 2 {
                    // The fleet's probe: its answer turns the fleet's
                    // throttle on, for every process.
                    return Admit::Go;
                }
                if granted < 0 {
                    // Another process's probe is out: held, and asked again.
                    return self.throttle.held_for_the_fleet(&next, from_micros(wait));
                }
                // The fleet's throttle paces, or the probe's wait ran
                // out: this process's calls are held no longer.
                self.throttle.heard_first();
            }
            if granted < 0 {
                // This process's report or cut has not reached the fleet
                // yet: asked again shortly (its mirror left as it is,
                // until the report lands or a refresh reads the fleet's).
                return Admit::Wait(from_micros(wait));
            }
            self.heard(rate, on);
            if granted <= 0 {
                self.throttle.guard_record().stopped();
                return Admit::Stop(StopReason::Deadline);
            }
            if granted > 1 {
                let until = since_epoch(next.now)
                    .saturating_add(tenacious_runtime::store::hooks::saturating_nanos(LEASE));
                self.lease
                    .store(u32::try_from(granted - 1).unwrap_or(0), Ordering::Release);
                self.lease_until.store(until, Ordering::Release);
            }
            if wait <= 0 {
                Admit::Go
            } else {
                let wait = from_micros(wait);
                self.throttle.guard_record().waited(wait);
                // Due after the wait the call plans anyway and this one.
                let due = since_epoch(next.now)
                    .saturating_add(tenacious_runtime::store::hooks::saturating_nanos(next.wait))
                    .saturating_add(tenacious_runtime::store::hooks::saturating_nanos(wait));
                self.reserved
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(due);
                Admit::Wait(wait)
            }
        })
    }

    /// Tells the fleet's throttle what this outcome said: a throttle cuts
    /// its rate (an overload, while the headers pace it, only as the third
    /// in a row fleet-wide: the script's rule), a rate-limit report sets
    /// it; a retry not made gives its token back to the lease.
    pub(crate) fn observe(&'static self, outcome: &Outcome) {
        if outcome.result == AttemptResult::NotMade {
            if self.on.load(Ordering::Acquire) {
                self.lease.fetch_add(1, Ordering::AcqRel);
            }
            return;
        }
        if tenacious_runtime::store::hooks::throttled(outcome) == Some(true) {
            // On from now: the retry decided next is paced, not only those
            // decided once the fleet's answer is back.
            self.on.store(true, Ordering::Release);
            // An overload the script counts in a run, fleet-wide, while
            // the headers pace: a process that never heard them cuts no
            // sooner than one that did.
            let overload = i64::from(tenacious_runtime::store::hooks::overload_only(outcome));
            self.link.push::<(i64, i64, i64, i64), _>(
                &THROTTLE_SCRIPT,
                &self.key,
                self.args(2, overload, 0, 0),
                move |(_, _, rate, on)| self.heard(rate, on),
            );
        }
        self.report(outcome.signals);
    }

    /// Whether the fleet's throttle paces, as last heard (or as this
    /// process's own throttle or report just turned it).
    pub(crate) fn is_on(&self) -> bool {
        self.on.load(Ordering::Acquire)
    }

    /// Tells the fleet's throttle where the provider's bucket stands, if
    /// `signals` say (`remaining` and `reset`): an outcome's, or a
    /// success's headers handed to [`Throttle::report`].
    pub(crate) fn report(&'static self, signals: tenacious_runtime::Signals) {
        if let (Some(remaining), Some(reset)) = (signals.get_remaining(), signals.get_reset()) {
            if reset > tenacious_runtime::store::hooks::MAX_RESET {
                // A saturated or garbled reset says nothing of the window,
                // fleet-wide as in process.
                return;
            }
            let limit = signals.get_limit().unwrap_or(0);
            if !reset.is_zero() && (limit == 0 || remaining < limit) {
                // What the fleet's throttle turns on at (the script's op 3).
                self.on.store(true, Ordering::Release);
            }
            let report = [
                i64::try_from(limit).unwrap_or(i64::MAX),
                i64::try_from(remaining).unwrap_or(i64::MAX),
                micros(reset),
            ];
            *self.report.lock().unwrap_or_else(PoisonError::into_inner) = Some(report);
            if !self.reporting.swap(true, Ordering::AcqRel) {
                self.send_report();
            }
        }
    }

    /// Sends the newest report, then the one that came meanwhile, if any.
    fn send_report(&'static self) {
        let Some([limit, remaining, reset]) = self
            .report
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            self.reporting.store(false, Ordering::Release);
            // One may have come between the take and the store.
            if self
                .report
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some()
                && !self.reporting.swap(true, Ordering::AcqRel)
            {
                self.send_report();
            }
            return;
        };
        let link = Arc::clone(&self.link);
        let args = self.args(3, limit, remaining, reset);
        drop(link.handle.spawn(async move {
            if let Some((_, _, rate, on)) = self
                .link
                .run::<(i64, i64, i64, i64)>(&THROTTLE_SCRIPT, &self.key, &args)
                .await
            {
                self.heard(rate, on);
            }
            self.send_report();
        }));
    }
}

impl Member for SharedThrottle {
    fn sync(&'static self) -> BoxedSync {
        Box::pin(async move {
            let sent = self.sent.swap(0, Ordering::Relaxed);
            let args = if sent == 0 {
                self.args(0, 0, 0, 0)
            } else {
                self.args(4, i64::from(sent), 0, 0)
            };
            match self
                .link
                .run::<(i64, i64, i64, i64)>(&THROTTLE_SCRIPT, &self.key, &args)
                .await
            {
                Some((_, _, rate, on)) => self.heard(rate, on),
                None => {
                    self.sent.fetch_add(sent, Ordering::Relaxed);
                }
            }
        })
    }
}

impl Shareable for Throttle {
    fn bind_to(
        &'static self,
        link: &Arc<Link>,
        key: String,
        agreed: Arc<Agreed>,
    ) -> Result<(), BindError> {
        let shared = crate::bind(
            self.store_slot(),
            || SharedThrottle {
                link: Arc::clone(link),
                key: key.into(),
                throttle: self,
                agreed,
                on: AtomicBool::new(false),
                rate: AtomicU64::new(0),
                reserved: Mutex::new(Vec::new()),
                lease: AtomicU32::new(0),
                lease_until: AtomicU64::new(0),
                report: Mutex::new(None),
                reporting: AtomicBool::new(false),
                sent: AtomicU32::new(0),
                probing: AtomicBool::new(false),
            },
            |shared| shared,
        )?;
        link.join(shared);
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "throttle"
    }

    /// Its rates in thousandths (an unbounded one 0); not `probe_first`,
    /// whose wait each process keeps for its own calls.
    fn settings(&self) -> Settings {
        let milli = |rate: f64| {
            if rate.is_finite() {
                #[allow(clippy::cast_possible_truncation)]
                let milli = (rate * 1000.0).round() as i64;
                milli
            } else {
                0
            }
        };
        Settings::new(
            &[("min_rate", Unit::Milli), ("max_rate", Unit::MilliOrNone)],
            vec![milli(self.get_min_rate()), milli(self.get_max_rate())],
        )
    }
}

crate::forward_store!(SharedThrottle);

impl tenacious_runtime::store::ThrottleStore for SharedThrottle {
    fn is_on(&self) -> bool {
        Self::is_on(self)
    }

    fn probe(&self) -> Admit {
        Self::probe(self)
    }

    fn admit(&self, next: &NextAttempt) -> Admit {
        Self::admit(self, next)
    }

    fn take(&'static self, next: NextAttempt) -> PendingAdmit<'static> {
        Self::take(self, next)
    }

    fn observe(&'static self, outcome: &Outcome) {
        Self::observe(self, outcome);
    }

    fn report(&'static self, signals: tenacious_runtime::Signals) {
        Self::report(self, signals);
    }

    fn reset(&'static self) {
        Self::reset(self);
    }
}
