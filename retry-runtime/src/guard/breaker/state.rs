//! What the breaker's state is at a time, and how long until it admits.
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::window::{TAG_MASK, unpack_probes};
use super::{Breaker, BreakerState};
use crate::clock::since_epoch;

impl Breaker {
    /// Where it stands now, on the system's clock. (A call asks on its own
    /// clock, tokio's for an async call: see [`state_at`](Breaker::state_at).)
    #[must_use]
    pub fn state(&self) -> BreakerState {
        self.state_at(Instant::now())
    }

    /// Where it stands at `now`, an instant of the calls' clock (for an
    /// async call on tokio's clock, `tokio::time::Instant::now().into_std()`).
    /// Bound to a store that is up (feature `redis`), the fleet's breaker,
    /// as last read: what its decisions follow. So is
    /// [`admits_in_at`](Breaker::admits_in_at).
    ///
    /// ```
    /// use std::time::Instant;
    /// use tenacious::{Breaker, BreakerState};
    ///
    /// assert_eq!(Breaker::new().state_at(Instant::now()), BreakerState::Closed);
    /// ```
    #[must_use]
    pub fn state_at(&self, now: Instant) -> BreakerState {
        if let Some(shared) = self.shared.get()
            && shared.is_up()
        {
            return shared.view(now).0;
        }
        match self.opened.load(Ordering::Acquire) {
            0 => BreakerState::Closed,
            opened if since_epoch(now) < opened.saturating_add(self.open_for) => BreakerState::Open,
            _ => BreakerState::HalfOpen,
        }
    }

    /// Whether it refuses an attempt now, on the system's clock: while
    /// [`Open`](BreakerState::Open), and while
    /// [`HalfOpen`](BreakerState::HalfOpen) with every probe slot out —
    /// what its decisions say, so `is_open()` is true exactly when a call
    /// asking now would stop with [`StopReason::CircuitOpen`](crate::StopReason::CircuitOpen). See
    /// [`is_open_at`](Breaker::is_open_at) for a call's own clock.
    #[must_use]
    pub fn is_open(&self) -> bool {
        self.is_open_at(Instant::now())
    }

    /// [`is_open`](Breaker::is_open) at `now`, an instant of the calls'
    /// clock (for an async call on tokio's clock,
    /// `tokio::time::Instant::now().into_std()`).
    ///
    /// ```
    /// use std::time::Instant;
    /// use tenacious::Breaker;
    ///
    /// assert!(!Breaker::new().is_open_at(Instant::now()));
    /// ```
    #[must_use]
    pub fn is_open_at(&self, now: Instant) -> bool {
        !self.admits_in_at(now).is_zero()
    }

    /// How long from now, on the system's clock, until it may admit an
    /// attempt again: what to tell a caller (or a model) it stopped.
    /// See [`admits_in_at`](Breaker::admits_in_at).
    #[must_use]
    pub fn admits_in(&self) -> Duration {
        self.admits_in_at(Instant::now())
    }

    /// How long from `now` (an instant of the calls' clock) until it may
    /// admit an attempt again: zero while closed or while a probe slot is
    /// free; the rest of the break while open; while half-open with every
    /// probe out, until those slots are freed, a whole
    /// [`open_for`](Breaker::open_for) after the break ended — the latest
    /// it admits again (sooner, at once, if the probes succeed and close
    /// it; a probe that fails opens it for another `open_for`). What a call
    /// it refuses is told ([`Guard::retry_in`](crate::Guard::retry_in)).
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use tenacious::Breaker;
    ///
    /// assert_eq!(Breaker::new().admits_in_at(Instant::now()), Duration::ZERO);
    /// ```
    #[must_use]
    pub fn admits_in_at(&self, now: Instant) -> Duration {
        if let Some(shared) = self.shared.get()
            && shared.is_up()
        {
            return shared.view(now).1;
        }
        let opened = self.opened.load(Ordering::Acquire);
        if opened == 0 {
            return Duration::ZERO;
        }
        let now = since_epoch(now);
        let half_open_at = opened.saturating_add(self.open_for);
        if now < half_open_at {
            return Duration::from_nanos(half_open_at - now);
        }
        let (tag, taken, _) = unpack_probes(self.probes_out.load(Ordering::Acquire));
        if tag != opened & TAG_MASK || taken < u64::from(self.probes) {
            Duration::ZERO
        } else {
            // `admit_open` frees the slots then.
            let freed_at = half_open_at.saturating_add(self.open_for);
            Duration::from_nanos(freed_at.saturating_sub(now))
        }
    }
}
