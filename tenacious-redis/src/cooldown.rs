//! A [`Cooldown`] shared through Redis: closed on the server's clock by
//! any process's hint; each process mirrors the reopening time, so an open
//! cooldown costs no round trip; a waiter's turn is the fleet's.
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::scripts::COOLDOWN_SCRIPT;
use crate::{
    Agreed, BindError, BoxedSync, COOLDOWN_IDLE, Link, Member, Settings, Shareable, Unit,
    from_micros, micros,
};
use tenacious_runtime::store::hooks::{MIN_ATTEMPT_NANOS, since_epoch};
use tenacious_runtime::{Admit, Cooldown, NextAttempt, PendingAdmit, StopReason};

pub(crate) struct SharedCooldown {
    pub(crate) link: Arc<Link>,
    key: Arc<str>,
    cooldown: &'static Cooldown,
    /// When this process last closed it (guard epoch nanoseconds): until
    /// its closing has surely reached Redis, a read does not reopen the
    /// mirror.
    closed_here: std::sync::atomic::AtomicU64,
    /// The spacing, the fleet's.
    agreed: Arc<Agreed>,
}

fn idle() -> i64 {
    micros(COOLDOWN_IDLE) / 1000
}

impl SharedCooldown {
    /// Mirrors the fleet's reopening time and queue, `closed` and `queued`
    /// from `now`.
    fn mirror(&self, now: Instant, closed: i64, queued: i64) {
        let now = since_epoch(now);
        let nanos = |us: i64| tenacious_runtime::store::hooks::saturating_nanos(from_micros(us));
        let later = |us: i64| {
            if us > 0 {
                now.saturating_add(nanos(us))
            } else {
                0
            }
        };
        self.cooldown.mirror_later(later(closed), later(queued));
    }

    /// Mirrors a read of the fleet's cooldown, which the fleet's word
    /// governs: one reopened (by hand, [`Cooldown::reopen`], in any
    /// process) reopens the mirror, unless this process closed it since
    /// the read may have left (a few store timeouts).
    fn follow(&self, now: Instant, closed: i64, queued: i64) {
        let at = since_epoch(now);
        let settled = tenacious_runtime::store::hooks::saturating_nanos(
            self.link.timeout().saturating_mul(4),
        );
        if self
            .closed_here
            .load(Ordering::Acquire)
            .saturating_add(settled)
            < at
        {
            let nanos =
                |us: i64| tenacious_runtime::store::hooks::saturating_nanos(from_micros(us));
            let until = if closed > 0 {
                at.saturating_add(nanos(closed))
            } else {
                0
            };
            let release = if queued > 0 {
                at.saturating_add(nanos(queued))
            } else {
                0
            };
            self.cooldown.mirror(until, release);
            return;
        }
        self.mirror(now, closed, queued);
    }

    /// A waiter's turn in the fleet's queue.
    pub(crate) fn turn(&'static self, next: NextAttempt) -> PendingAdmit<'static> {
        let longest = next.deadline_left.map_or(next.max_retry_after, |left| {
            next.max_retry_after
                .min(left.saturating_sub(Duration::from_nanos(MIN_ATTEMPT_NANOS)))
        });
        let answer = self.link.decide::<(i64, i64, i64)>(
            &COOLDOWN_SCRIPT,
            &self.key,
            vec![
                2,
                micros(next.wait),
                self.agreed
                    .get(0)
                    .max(micros(self.cooldown.learned_spacing())),
                micros(longest),
                idle(),
                i64::from(next.recheck),
            ],
        );
        Box::pin(async move {
            let Some((code, wait, closed)) = answer.await else {
                self.link.local_decision();
                return self.cooldown.admit_here(&next);
            };
            self.mirror(next.now, closed, 0);
            match code {
                2 => Admit::Go,
                1 if wait <= 0 => Admit::Go,
                1 => {
                    let wait = from_micros(wait);
                    self.cooldown.guard_record().waited(wait);
                    Admit::Wait(wait)
                }
                _ => {
                    self.cooldown.guard_record().stopped();
                    Admit::Stop(StopReason::Cooldown)
                }
            }
        })
    }

    /// Reopens the fleet's cooldown (see [`Cooldown::reopen`]).
    pub(crate) fn reset(&'static self) {
        crate::forget(&self.link, &self.key);
    }

    /// Closes the fleet's cooldown for `hint` from the server's now.
    pub(crate) fn close(&'static self, hint: Duration) {
        let sent = Instant::now();
        self.closed_here
            .fetch_max(since_epoch(sent), Ordering::AcqRel);
        self.link.push::<(i64, i64), _>(
            &COOLDOWN_SCRIPT,
            &self.key,
            vec![1, micros(hint), 0, 0, idle()],
            move |(closed, queued)| self.mirror(sent, closed, queued),
        );
    }
}

impl Member for SharedCooldown {
    fn sync(&'static self) -> BoxedSync {
        Box::pin(async move {
            let now = Instant::now();
            if let Some((closed, queued)) = self
                .link
                .run::<(i64, i64)>(&COOLDOWN_SCRIPT, &self.key, &[0, 0, 0, 0, idle()])
                .await
            {
                self.follow(now, closed, queued);
            }
        })
    }

    /// What this process learned while Redis was down: its own closing.
    fn rebuild(&'static self) -> BoxedSync {
        Box::pin(async move {
            let now = Instant::now();
            let left = self.cooldown.reopens_in_at(now);
            let op = if left.is_zero() { 0 } else { 1 };
            if let Some((closed, queued)) = self
                .link
                .run::<(i64, i64)>(
                    &COOLDOWN_SCRIPT,
                    &self.key,
                    &[op, micros(left), 0, 0, idle()],
                )
                .await
            {
                self.mirror(now, closed, queued);
            }
        })
    }
}

impl Shareable for Cooldown {
    fn bind_to(
        &'static self,
        link: &Arc<Link>,
        key: String,
        agreed: Arc<Agreed>,
    ) -> Result<(), BindError> {
        let shared = crate::bind(
            self.store_slot(),
            || SharedCooldown {
                link: Arc::clone(link),
                key: key.into(),
                cooldown: self,
                closed_here: std::sync::atomic::AtomicU64::new(0),
                agreed,
            },
            |shared| shared,
        )?;
        link.join(shared);
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "cooldown"
    }

    fn settings(&self) -> Settings {
        Settings::new(
            &[("spacing", Unit::Micros)],
            vec![micros(self.get_spacing())],
        )
    }
}

crate::forward_store!(SharedCooldown);

impl tenacious_runtime::store::CooldownStore for SharedCooldown {
    fn turn(&'static self, next: NextAttempt) -> PendingAdmit<'static> {
        Self::turn(self, next)
    }

    fn close(&'static self, hint: Duration) {
        Self::close(self, hint);
    }

    fn reset(&'static self) {
        Self::reset(self);
    }
}
