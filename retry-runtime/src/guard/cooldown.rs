//! [`Cooldown`]: "the provider said wait until T", shared by every call
//! naming it, as a [`Guard`].
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::clock::{MIN_ATTEMPT_NANOS, saturating_nanos, since_epoch};
use crate::stats::GuardRecord;
use crate::{Admit, AttemptResult, ErrorClass, Guard, NextAttempt, Outcome, StopReason};

/// A shared rate-limit cooldown: when any call naming it gets a
/// `RateLimited` error with a server hint, it closes until then, and every
/// call waits for it to reopen before each attempt.
///
/// - **Closed by a hint, never shortened.** A `RateLimited` error whose
///   `retry_after()` is `h` closes it until `now + h`; a later, shorter
///   hint leaves the later time. A zero hint, another class, or an
///   overload (a 529: the provider's trouble, not the caller's quota) does
///   not close it.
/// - **Waited for before each attempt.** A call asks it before its first
///   attempt and when it decides each retry; the wait is beyond what the
///   call already plans (its backoff and hint), outside the attempt's
///   `timeout`, inside its `deadline`.
/// - **Released spread out.** The calls waiting on one closing start one
///   every [`spacing`](Cooldown::spacing) after it reopens (default
///   [`SPACING`](Cooldown::SPACING), 10 ms: 100 waiters over 990 ms), in
///   the order they asked, never all at once; a call that comes while the
///   waiters are being released queues behind them.
/// - **A wait it cannot serve stops the call at once** with
///   [`StopReason::Cooldown`]: one longer than the policy's
///   `max_retry_after`, or one that leaves less than a millisecond of the
///   call's deadline. Before the first attempt the call returns its error
///   made from a [`Refused`](crate::Refused), with no attempt, if its error
///   type can say so ([`Classify::refused`](crate::Classify::refused));
///   otherwise it has no error to return and makes its attempt at once.
///
/// Lock-free: two `AtomicU64`s of nanoseconds on the calls' clock (tokio's
/// for async calls, paused in tests, or the system's for blocking ones);
/// nothing allocated. Name it with `#[retry(cooldown = NAME)]` or
/// [`Policy::cooldown`](crate::Policy::cooldown).
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Cooldown, Policy};
///
/// static OPENAI: Cooldown = Cooldown::new();
/// const POLICY: Policy = Policy::new().cooldown(&OPENAI);
///
/// assert!(!OPENAI.is_closed());
/// assert_eq!(OPENAI.get_spacing(), Duration::from_millis(10));
/// ```
#[derive(Debug)]
pub struct Cooldown {
    /// Closed until then: nanoseconds since [`epoch`], 0 when never closed.
    pub(crate) until: AtomicU64,
    /// The next waiter's start, nanoseconds since [`epoch`].
    pub(crate) next_release: AtomicU64,
    spacing: u64,
    /// The spacing of the provider's own rate, nanoseconds, as the last
    /// rate-limit headers of a 429 said (0 before any): waiters are
    /// released no faster than it.
    learned: AtomicU64,
    pub(crate) record: GuardRecord,
    pub(crate) shared: crate::store::StoreSlot<dyn crate::store::CooldownStore>,
}

impl Cooldown {
    /// The default spacing of released waiters: 10 ms.
    pub const SPACING: Duration = Duration::from_millis(10);

    /// An open cooldown releasing waiters every
    /// [`SPACING`](Cooldown::SPACING).
    #[must_use]
    pub const fn new() -> Self {
        Self {
            until: AtomicU64::new(0),
            next_release: AtomicU64::new(0),
            spacing: 10_000_000,
            learned: AtomicU64::new(0),
            record: GuardRecord::new("cooldown", "cooldown"),
            shared: crate::store::StoreSlot::new(),
        }
    }

    crate::stats::guard_name!(Cooldown, OPENAI, "openai", "cooldown");

    /// The time between two waiters released after a reopening (a zero
    /// spacing releases them all at once). Default
    /// [`SPACING`](Cooldown::SPACING).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Cooldown;
    ///
    /// static SLOW: Cooldown = Cooldown::new().spacing(Duration::from_millis(50));
    /// assert_eq!(SLOW.get_spacing(), Duration::from_millis(50));
    /// ```
    #[must_use]
    pub const fn spacing(self, spacing: Duration) -> Self {
        Self {
            spacing: saturating_nanos(spacing),
            ..self
        }
    }

    /// The spacing set by [`spacing`](Cooldown::spacing).
    #[must_use]
    pub const fn get_spacing(&self) -> Duration {
        Duration::from_nanos(self.spacing)
    }

    /// The spacing its waiters are released at: the one set, or, once a
    /// 429's rate-limit headers said how fast the provider's bucket
    /// refills, one start per refill if that is slower.
    #[must_use]
    pub fn release_spacing(&self) -> Duration {
        Duration::from_nanos(self.release_nanos())
    }

    /// The spacing a 429's headers said the provider's bucket refills at
    /// (zero before any): what a store spaces the fleet's waiters by.
    #[doc(hidden)]
    #[must_use]
    pub fn learned_spacing(&self) -> Duration {
        Duration::from_nanos(self.learned.load(Ordering::Relaxed))
    }

    /// Sets what a store mirrors of the fleet's cooldown: when it reopens
    /// and when its queue's last turn is, on [`since_epoch`]'s clock (0:
    /// open, no queue).
    #[doc(hidden)]
    pub fn mirror(&self, until: u64, next_release: u64) {
        self.until.store(until, Ordering::Release);
        self.next_release.store(next_release, Ordering::Release);
    }

    fn release_nanos(&self) -> u64 {
        self.spacing.max(self.learned.load(Ordering::Relaxed))
    }

    /// Whether it is closed now, on the system's clock. (A call asks on
    /// its own clock, tokio's for an async call.)
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.until.load(Ordering::Acquire) > since_epoch(Instant::now())
    }

    /// How long until it reopens, from `now` on the calls' clock (for an
    /// async call, `tokio::time::Instant::now().into_std()`): zero when it
    /// is open. What an agent tells a task stopped by the cooldown to
    /// wait, for example with
    /// `agent::Observation::with_retry_after` (feature `agent`).
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use tenacious::Cooldown;
    ///
    /// static OPENAI: Cooldown = Cooldown::new();
    /// assert_eq!(OPENAI.reopens_in_at(Instant::now()), Duration::ZERO);
    /// ```
    #[must_use]
    pub fn reopens_in_at(&self, now: Instant) -> Duration {
        let until = self.until.load(Ordering::Acquire);
        Duration::from_nanos(until.saturating_sub(since_epoch(now)))
    }

    /// Reopens it now, by hand: for an operator who knows the provider is
    /// serving again before its hint ran out. Its queue of turns is
    /// emptied (calls already waiting keep the wait they were given; the
    /// next calls go at once). Bound to a store (feature `redis`), the
    /// fleet's cooldown reopens too, in every process at its next read.
    ///
    /// ```
    /// use std::time::Instant;
    /// use tenacious::Cooldown;
    ///
    /// static OPENAI: Cooldown = Cooldown::new();
    /// OPENAI.reopen();
    /// assert!(OPENAI.reopens_in_at(Instant::now()).is_zero());
    /// ```
    pub fn reopen(&self) {
        self.until.store(0, Ordering::Release);
        self.next_release.store(0, Ordering::Release);
        self.record.changed("reopened by hand");
        if let Some(shared) = self.shared.get() {
            shared.reset();
        }
    }
}

impl Default for Cooldown {
    /// [`Cooldown::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl Guard for Cooldown {
    /// Go when it is open by the time the call would start anyway and no
    /// waiters are still being released; else the wait for this call's
    /// turn, or [`StopReason::Cooldown`] when that wait is longer than
    /// `max_retry_after` or leaves no room before the deadline.
    fn admit(&self, next: &NextAttempt) -> Admit {
        if let Some(shared) = self.shared.get() {
            // Bound to a store: open by the mirror, go at once; closed,
            // the turn is the fleet's (in process while Redis is down).
            let ready = since_epoch(next.now).saturating_add(saturating_nanos(next.wait));
            if self.until.load(Ordering::Acquire) <= ready
                && (next.recheck || self.next_release.load(Ordering::Acquire) <= ready)
            {
                return Admit::Go;
            }
            if shared.is_up() {
                return Admit::Later;
            }
            shared.local_decision();
        }
        self.admit_here(next)
    }

    /// Bound to a store (feature `redis`): a waiter's turn in the fleet's
    /// queue, or in process when Redis fails to answer.
    fn admit_async(&self, next: NextAttempt) -> crate::PendingAdmit<'_> {
        if let Some(shared) = self.shared.get() {
            return shared.turn(next);
        }
        Box::pin(std::future::ready(self.admit_here(&next)))
    }

    fn record(&self) -> Option<&GuardRecord> {
        Some(&self.record)
    }

    /// Until it reopens and the waiters queued before the call have gone:
    /// when a call refused for a wait it could not serve would go.
    fn retry_in(&self, next: &NextAttempt) -> Option<Duration> {
        let now = since_epoch(next.now);
        let until = self.until.load(Ordering::Acquire);
        let queued = self.next_release.load(Ordering::Acquire);
        Some(Duration::from_nanos(until.max(queued).saturating_sub(now)))
    }

    /// A `RateLimited` error with a non-zero hint closes it until then,
    /// unless it is closed until later already. An overload (the provider
    /// as a whole refusing work, [`Signals::is_overloaded`](crate::Signals::is_overloaded))
    /// does not: it is the throttle's and the breaker's to hear, and the
    /// call's own hint still holds that call. Bound to a store (feature
    /// `redis`), the hint closes the fleet's cooldown too.
    ///
    /// A call that waited for its turn and is not made (dropped while it
    /// waits, or stopped by a later guard) gives a turn back: the queue's
    /// last turn moves one `spacing` earlier, never before the cooldown
    /// reopens (the calls still waiting keep theirs).
    fn observe(&self, outcome: &Outcome) {
        if outcome.result == AttemptResult::NotMade {
            let floor = since_epoch(outcome.now).max(self.until.load(Ordering::Acquire));
            let spacing = self.release_nanos();
            let _ =
                self.next_release
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |release| {
                        (release > floor).then(|| release.saturating_sub(spacing).max(floor))
                    });
            return;
        }
        if let AttemptResult::Failure {
            class: ErrorClass::RateLimited,
            ..
        } = outcome.result
            && let (Some(limit), Some(remaining), Some(reset)) = (
                outcome.signals.get_limit(),
                outcome.signals.get_remaining(),
                outcome.signals.get_reset(),
            )
            && remaining < limit
            && !reset.is_zero()
            && reset <= crate::guard::LONGEST_HOLD
        {
            // The bucket refills `limit − remaining` requests over `reset`
            // at most: one start per refill.
            let per = saturating_nanos(reset) / (limit - remaining);
            self.learned.store(per, Ordering::Relaxed);
        }
        if let AttemptResult::Failure {
            class: ErrorClass::RateLimited,
            hint: Some(hint),
            ..
        } = outcome.result
            && !hint.is_zero()
            && !outcome.signals.is_overloaded()
        {
            let now = since_epoch(outcome.now);
            // Held to the longest any guard holds calls back: no hint
            // closes it for centuries.
            let until = now.saturating_add(saturating_nanos(hint.min(crate::guard::LONGEST_HOLD)));
            if self.until.fetch_max(until, Ordering::AcqRel) <= now {
                // It was open: this hint closed it.
                self.record.changed("closed");
            }
            if let Some(shared) = self.shared.get()
                && shared.is_up()
            {
                shared.close(hint);
            }
        }
    }
}

impl Cooldown {
    /// Moves what a store mirrors of the fleet's cooldown later, never
    /// earlier: when it reopens and its queue's last turn (0: no change).
    #[doc(hidden)]
    pub fn mirror_later(&self, until: u64, next_release: u64) {
        self.until.fetch_max(until, Ordering::AcqRel);
        self.next_release.fetch_max(next_release, Ordering::AcqRel);
    }

    /// [`Guard::admit`] on this process's state alone.
    #[doc(hidden)]
    pub fn admit_here(&self, next: &NextAttempt) -> Admit {
        let now = since_epoch(next.now);
        let ready = now.saturating_add(saturating_nanos(next.wait));
        let until = self.until.load(Ordering::Acquire);
        if until <= ready && (next.recheck || self.next_release.load(Ordering::Acquire) <= ready) {
            // Open: a waiter asked again after its turn came goes, and so
            // does a call that finds nobody queued.
            return Admit::Go;
        }
        // The next turn: one `spacing` after the one before, and none
        // before the cooldown reopens. A call that cannot wait that long
        // stops without taking it.
        let too_long = |wait: u64| {
            wait > saturating_nanos(next.max_retry_after)
                || next.deadline_left.is_some_and(|left| {
                    wait.saturating_add(MIN_ATTEMPT_NANOS) > saturating_nanos(left)
                })
        };
        let queued = self.next_release.load(Ordering::Acquire);
        if too_long(queued.max(until).max(ready) - ready) {
            self.record.stopped();
            return Admit::Stop(StopReason::Cooldown);
        }
        let spacing = self.release_nanos();
        let turn =
            match self
                .next_release
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |release| {
                    Some(release.max(until).max(ready).saturating_add(spacing))
                }) {
                Ok(release) | Err(release) => release.max(until).max(ready),
            };
        let wait = turn - ready;
        if wait == 0 {
            Admit::Go
        } else {
            let wait = Duration::from_nanos(wait);
            self.record.waited(wait);
            Admit::Wait(wait)
        }
    }
}

crate::store::store_hooks!(Cooldown, CooldownStore);
