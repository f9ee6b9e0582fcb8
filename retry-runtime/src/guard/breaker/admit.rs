//! The breaker's admission: refused while open, a probe slot while
//! half-open, and its opening.
use std::sync::atomic::Ordering;

use super::Breaker;
use super::window::{TAG_MASK, pack_probes, unpack_probes};
use crate::clock::since_epoch;
use crate::{Admit, Guard, NextAttempt, StopReason};

impl Breaker {
    fn refuse(&self) -> Admit {
        self.record.stopped();
        Admit::Stop(StopReason::CircuitOpen)
    }

    /// `admit` once it is not closed: `opened` is when it opened.
    pub(super) fn admit_open(&self, opened: u64, now: u64) -> Admit {
        self.admit_open_slot(opened, now).0
    }

    /// Asked before an attempt of a call that may hold one of its probe
    /// slots already: `held`, the half-open phase of the slot this call
    /// took for the attempt, if it took one, before a wait another guard
    /// asked for. The same answer as [`Guard::admit`], and, for a Go that
    /// holds a probe slot in process, its phase: a call that holds the slot
    /// of the phase the breaker is in is that phase's probe, and goes
    /// without taking another. (A breaker bound to a store gives its slot
    /// back over a wait instead: `None`.)
    pub(crate) fn admit_holding(
        &self,
        next: &NextAttempt,
        held: Option<u32>,
    ) -> (Admit, Option<u32>) {
        if self.shared.get().is_some() {
            return (self.admit(next), None);
        }
        let opened = self.opened.load(Ordering::Acquire);
        if opened == 0 {
            return (Admit::Go, None);
        }
        let now = since_epoch(next.now);
        #[allow(clippy::cast_possible_truncation)] // the tag is 32 bits
        let tag = (opened & TAG_MASK) as u32;
        if held == Some(tag) && now >= opened.saturating_add(self.open_for) {
            return (Admit::Go, held);
        }
        self.admit_open_slot(opened, now)
    }

    /// [`admit_open`](Breaker::admit_open), with the phase of the probe
    /// slot a Go took (`None` for a Go because it closed meanwhile).
    fn admit_open_slot(&self, mut opened: u64, now: u64) -> (Admit, Option<u32>) {
        loop {
            let half_open_at = opened.saturating_add(self.open_for);
            if now < half_open_at {
                return (self.refuse(), None);
            }
            let tag = opened & TAG_MASK;
            let probes = u64::from(self.probes);
            let took = self
                .probes_out
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |out| {
                    let (out_tag, taken, succeeded) = unpack_probes(out);
                    let (taken, succeeded) = if out_tag == tag {
                        (taken, succeeded)
                    } else {
                        (0, 0)
                    };
                    (taken < probes).then(|| pack_probes(tag, taken + 1, succeeded))
                });
            if took.is_ok() {
                self.probes_admitted.fetch_add(1, Ordering::Relaxed);
                #[allow(clippy::cast_possible_truncation)] // the tag is 32 bits
                return (Admit::Go, Some(tag as u32));
            }
            // Every slot is out. Probes out for a whole `open_for` without a
            // word (their calls were dropped) free them: a new half-open
            // phase, starting now.
            if self.open_for == 0 || now < half_open_at.saturating_add(self.open_for) {
                return (self.refuse(), None);
            }
            let fresh = now - self.open_for;
            match self
                .opened
                .compare_exchange(opened, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    self.probes_out
                        .store(pack_probes(fresh & TAG_MASK, 0, 0), Ordering::Release);
                    opened = fresh;
                }
                Err(0) => return (Admit::Go, None),
                Err(other) => opened = other,
            }
        }
    }

    /// Opens it at `now` if it still stands as `from` (0: closed, else when
    /// it last opened); whoever wins counts the opening and starts the
    /// new phase's probes afresh.
    pub(super) fn open(&self, from: u64, now: u64) {
        // Never 0 (closed), never the time it stands at (a new phase).
        let at = now.max(1).max(from.saturating_add(1));
        if self
            .opened
            .compare_exchange(from, at, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.probes_out
                .store(pack_probes(at & TAG_MASK, 0, 0), Ordering::Release);
            self.openings.fetch_add(1, Ordering::Relaxed);
            self.record.changed("open");
        }
    }
}
