//! The retried stream's timers: the deadline and the attempt's own
//! (first item, then idle), armed and re-armed, and a stall they catch.
use std::future::Future;
use std::task::Context;
use std::time::Duration;

use super::Projected;
use super::read::{drop_held, failed, give_up};
use crate::{Classify, Elapsed, Failure, Limit, StopReason, observe};

/// The limit that ran out, if one did: the deadline, or the attempt's own
/// timer (its first item before commit, its idle time after).
pub(super) fn expired<O, S, T, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    cx: &mut Context<'_>,
) -> Option<Limit> {
    if let Some(deadline) = this.deadline.as_mut().as_pin_mut()
        && deadline.poll(cx).is_ready()
    {
        return Some(Limit::Deadline);
    }
    if this.armed.is_some() && this.polled.as_mut().poll_timer(cx).is_ready() {
        return this.armed.map(|(limit, _)| limit);
    }
    None
}

/// How many items kept back (keepalives, repeats, a preamble) one poll
/// reads before it looks at the timers and yields.
pub(super) const SPINS: u32 = 128;

/// Arms the attempt's own timer as `wait` says, or disarms it.
pub(super) fn arm<O, S, T, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    wait: Option<(Limit, Duration)>,
) {
    *this.armed = wait;
    match wait {
        Some((_, after)) => this.polled.as_mut().arm(after),
        None => this.polled.as_mut().disarm(),
    }
}

/// After progress, the idle limit counts again from now.
pub(super) fn rearm_idle<O, S, T, E: Classify>(this: &mut Projected<'_, '_, O, S, T, E>) {
    if std::mem::take(this.progressed)
        && let Some(idle) = this.policy.get_idle()
    {
        arm(this, Some((Limit::Idle, idle)));
    }
}

/// The attempt ran out of `limit`: it fails with `E::from(Elapsed)`.
#[cold]
pub(super) fn stalled<O, S, T, E: Classify + From<Elapsed>>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    limit: Limit,
) -> Option<Failure<E>> {
    let policy = *this.policy;
    let length = match (limit, *this.armed) {
        (Limit::Deadline, _) => policy.get_deadline().unwrap_or_default(),
        (_, Some((_, armed))) => armed,
        (_, None) => Duration::ZERO,
    };
    if let Some(stats) = policy.get_stats() {
        observe::stream_stall(stats, limit);
    }
    let error = E::from(Elapsed::of(limit, length));
    if limit == Limit::Deadline {
        this.source.set(None);
        drop_held(this);
        return Some(give_up(this, StopReason::Deadline, error));
    }
    this.polled.as_mut().note_timeout();
    failed(this, error)
}
