//! A [`Breaker`] shared through Redis: one state for the fleet, opened by
//! the outcomes every process counts (sent in a batch every refresh) over
//! a window on the server's clock. Each process mirrors the state, so a
//! closed or open breaker costs no round trip; a half-open one grants its
//! probes across the fleet.
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::scripts::BREAKER_SCRIPT;
use crate::{
    Agreed, BREAKER_IDLE, BindError, BoxedSync, Link, Member, Settings, Shareable, Unit, micros,
};
use tenacious_runtime::store::hooks::since_epoch;
use tenacious_runtime::{Admit, Breaker, NextAttempt, Outcome, PendingAdmit, StopReason};

const CLOSED: u8 = 0;
const OPEN: u8 = 1;

pub(crate) struct SharedBreaker {
    pub(crate) link: Arc<Link>,
    key: Arc<str>,
    breaker: &'static Breaker,
    /// Its ratio, window, minimum throughput, break and probes, the
    /// fleet's.
    agreed: Arc<Agreed>,
    /// The fleet's state as last heard (0 closed, 1 open, 2 half-open).
    state: AtomicU8,
    /// Open until then, guard epoch nanoseconds.
    open_until: AtomicU64,
    /// Outcomes counted, not sent yet.
    failures: AtomicU32,
    outcomes: AtomicU32,
}

impl SharedBreaker {
    /// Closes the fleet's breaker (see [`Breaker::reset`]): its mirror at
    /// once, the key deleted in the background.
    pub(crate) fn reset(&'static self) {
        self.state.store(CLOSED, Ordering::Release);
        self.open_until.store(0, Ordering::Release);
        self.failures.store(0, Ordering::Release);
        self.outcomes.store(0, Ordering::Release);
        crate::forget(&self.link, &self.key);
    }

    fn args(&self, op: i64, failures: u32, outcomes: u32) -> Vec<i64> {
        let b = &self.agreed;
        vec![
            op,
            i64::from(failures),
            i64::from(outcomes),
            b.get(0),
            b.get(1),
            b.get(2),
            b.get(3),
            b.get(4),
            micros(BREAKER_IDLE) / 1000,
        ]
    }

    fn heard(&self, now: Instant, state: i64, left: i64) {
        let state = u8::try_from(state).unwrap_or(CLOSED);
        let until = since_epoch(now).saturating_add(
            tenacious_runtime::store::hooks::saturating_nanos(crate::from_micros(left)),
        );
        self.open_until.store(until, Ordering::Release);
        let before = self.state.swap(state, Ordering::AcqRel);
        if before != state {
            let name = match state {
                CLOSED => "closed",
                OPEN => "open",
                _ => "half_open",
            };
            self.breaker.guard_record().changed(name);
        }
    }

    /// Where the fleet's breaker stands at `now`, as last read, and how
    /// long until it admits again (zero once half-open: whether a probe
    /// slot is free is the fleet's to answer). What the breaker reports
    /// while bound and the store is up, as its decisions are the fleet's.
    pub(crate) fn view(&self, now: Instant) -> (tenacious_runtime::BreakerState, Duration) {
        let now = since_epoch(now);
        match self.state.load(Ordering::Acquire) {
            CLOSED => (tenacious_runtime::BreakerState::Closed, Duration::ZERO),
            OPEN if self.open_until.load(Ordering::Acquire) > now => (
                tenacious_runtime::BreakerState::Open,
                Duration::from_nanos(self.open_until.load(Ordering::Acquire) - now),
            ),
            _ => (tenacious_runtime::BreakerState::HalfOpen, Duration::ZERO),
        }
    }

    /// The in-process answer from the mirrored state: go while closed,
    /// stop while open, ask the fleet for a probe's slot once half-open.
    pub(crate) fn admit(&self, next: &NextAttempt) -> Admit {
        match self.state.load(Ordering::Acquire) {
            CLOSED => Admit::Go,
            OPEN if self.open_until.load(Ordering::Acquire) > since_epoch(next.now) => {
                self.breaker.guard_record().stopped();
                Admit::Stop(StopReason::CircuitOpen)
            }
            _ => Admit::Later,
        }
    }

    /// A probe's slot from the fleet's half-open breaker.
    pub(crate) fn probe(&'static self, next: NextAttempt) -> PendingAdmit<'static> {
        let answer =
            self.link
                .decide::<(i64, i64, i64)>(&BREAKER_SCRIPT, &self.key, self.args(2, 0, 0));
        Box::pin(async move {
            let Some((state, left, granted)) = answer.await else {
                self.link.local_decision();
                return self.breaker.admit_here(&next);
            };
            self.heard(next.now, state, left);
            if granted == 1 || state == i64::from(CLOSED) {
                Admit::Go
            } else {
                self.breaker.guard_record().stopped();
                Admit::Stop(StopReason::CircuitOpen)
            }
        })
    }

    /// Counts an outcome for the next batch; a probe's is sent at once.
    pub(crate) fn observe(&'static self, outcome: &Outcome) {
        let Some(failed) = tenacious_runtime::store::hooks::counted(outcome) else {
            return;
        };
        if failed {
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
        self.outcomes.fetch_add(1, Ordering::Relaxed);
        if self.state.load(Ordering::Acquire) != CLOSED {
            drop(self.link.handle.spawn(self.sync()));
        }
    }
}

impl Member for SharedBreaker {
    fn sync(&'static self) -> BoxedSync {
        Box::pin(async move {
            let failures = self.failures.swap(0, Ordering::Relaxed);
            let outcomes = self.outcomes.swap(0, Ordering::Relaxed);
            let op = if outcomes == 0 { 0 } else { 1 };
            let now = Instant::now();
            match self
                .link
                .run::<(i64, i64, i64)>(
                    &BREAKER_SCRIPT,
                    &self.key,
                    &self.args(op, failures, outcomes),
                )
                .await
            {
                Some((state, left, _)) => self.heard(now, state, left),
                None => {
                    // Not sent: kept for the next time.
                    self.failures.fetch_add(failures, Ordering::Relaxed);
                    self.outcomes.fetch_add(outcomes, Ordering::Relaxed);
                }
            }
        })
    }
}

impl Shareable for Breaker {
    fn bind_to(
        &'static self,
        link: &Arc<Link>,
        key: String,
        agreed: Arc<Agreed>,
    ) -> Result<(), BindError> {
        let shared = crate::bind(
            self.store_slot(),
            || SharedBreaker {
                link: Arc::clone(link),
                key: key.into(),
                breaker: self,
                agreed,
                state: AtomicU8::new(CLOSED),
                open_until: AtomicU64::new(0),
                failures: AtomicU32::new(0),
                outcomes: AtomicU32::new(0),
            },
            |shared| shared,
        )?;
        link.join(shared);
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "breaker"
    }

    fn settings(&self) -> Settings {
        #[allow(clippy::cast_possible_truncation)] // within 0..=1000
        let ratio = (self.get_ratio() * 1000.0).round() as i64;
        Settings::new(
            &[
                ("ratio", Unit::Milli),
                ("window", Unit::Micros),
                ("min_throughput", Unit::Count),
                ("open_for", Unit::Micros),
                ("probes", Unit::Count),
            ],
            vec![
                ratio,
                micros(self.get_window()),
                i64::from(self.get_min_throughput()),
                micros(self.get_open_for()),
                i64::from(self.get_probes()),
            ],
        )
    }
}

crate::forward_store!(SharedBreaker);

impl tenacious_runtime::store::BreakerStore for SharedBreaker {
    fn admit(&self, next: &NextAttempt) -> Admit {
        Self::admit(self, next)
    }

    fn probe(&'static self, next: NextAttempt) -> PendingAdmit<'static> {
        Self::probe(self, next)
    }

    fn observe(&'static self, outcome: &Outcome) {
        Self::observe(self, outcome);
    }

    fn view(&self, now: Instant) -> (tenacious_runtime::BreakerState, Duration) {
        Self::view(self, now)
    }

    fn reset(&'static self) {
        Self::reset(self);
    }
}
