//! The last stage of pacing: the permit of the policy's concurrency
//! limit, taken after the chain's guards and the budget (see
//! [`Concurrency`](crate::Concurrency)), held by the engine until the
//! attempt ends.
use std::task::{Context, Poll, ready};

use sync_wrapper::SyncWrapper;

use super::settle;
use crate::engine::{BUDGET_AT, Engine};
use crate::{Admit, PendingAdmit};

/// When a concurrency limit is the policy's only guard and has a permit
/// free: takes it, and the call is paced (`true`) with no pacer, chain or
/// clock read.
#[inline]
pub(super) fn permit_at_once(engine: &mut Engine<'_>) -> bool {
    let policy = engine.policy();
    if !policy.only_concurrency() || engine.holds_permit() || engine.stop_reason().is_some() {
        return false;
    }
    match policy.get_concurrency() {
        // Nested in an attempt that holds a permit of the same limit.
        Some(concurrency) if crate::call::context::attempt_holds(concurrency) => {
            engine.paced();
            true
        }
        Some(concurrency) if crate::task::take_kept(concurrency) || concurrency.try_acquire() => {
            engine.take_permit();
            crate::task::admitted();
            engine.paced();
            true
        }
        _ => false,
    }
}

/// Where a concurrency limit's refusal is told from, after the chain and
/// the budget.
const PERMIT_AT: usize = BUDGET_AT + 1;

/// Takes the permit of the policy's concurrency limit for the next
/// attempt, if it has one and the call holds none (and has not stopped):
/// at once when one is free, else by waiting in `pending` at most as long
/// as [`Concurrency::wait_bound`](crate::Concurrency) allows. `true` when
/// the call waited for it (the guards before it are asked again); a wait
/// that runs out stops the call as a guard's refusal does ([`settle`]).
pub(super) fn poll_permit(
    engine: &mut Engine<'_>,
    pending: &mut Option<SyncWrapper<PendingAdmit<'static>>>,
    held: u8,
    cx: &mut Context<'_>,
) -> Poll<bool> {
    let Some(concurrency) = engine.policy().get_concurrency() else {
        return Poll::Ready(false);
    };
    if engine.holds_permit()
        || engine.stop_reason().is_some()
        || crate::call::context::attempt_holds(concurrency)
    {
        return Poll::Ready(false);
    }
    let (admit, waited) = if let Some(waiting) = pending {
        let admit = ready!(waiting.get_mut().as_mut().poll(cx));
        *pending = None;
        (admit, true)
    } else if crate::task::take_kept(concurrency) || concurrency.try_acquire() {
        (Admit::Go, false)
    } else {
        let bound = concurrency.wait_bound(&engine.next_attempt(false));
        let mut waiting = concurrency.wait_async(bound, crate::task::lane());
        match waiting.as_mut().poll(cx) {
            Poll::Ready(admit) => (admit, false),
            Poll::Pending => {
                *pending = Some(SyncWrapper::new(waiting));
                return Poll::Pending;
            }
        }
    };
    Poll::Ready(took_permit(engine, admit, held) && waited)
}

/// [`poll_permit`] for a blocking call: it parks the thread.
pub(super) fn permit_blocking(engine: &mut Engine<'_>, held: u8) -> bool {
    let Some(concurrency) = engine.policy().get_concurrency() else {
        return false;
    };
    if engine.holds_permit()
        || engine.stop_reason().is_some()
        || crate::call::context::attempt_holds(concurrency)
    {
        return false;
    }
    if crate::task::take_kept(concurrency) || concurrency.try_acquire() {
        engine.take_permit();
        crate::task::admitted();
        return false;
    }
    let bound = concurrency.wait_bound(&engine.next_attempt(false));
    let admit = concurrency.wait_blocking(bound, crate::task::lane());
    took_permit(engine, admit, held)
}

/// The call holds the permit `admit` granted (`true`), or stops for the
/// refusal (see [`settle`]).
fn took_permit(engine: &mut Engine<'_>, admit: Admit, held: u8) -> bool {
    if admit == Admit::Go {
        engine.take_permit();
        crate::task::admitted();
        return true;
    }
    let _ = settle(engine, admit, PERMIT_AT, held);
    false
}
