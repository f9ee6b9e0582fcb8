//! The retried stream's state machine: the attempt started, each item
//! read, held, committed or delivered, and the failures that end an
//! attempt or the stream.
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use tokio::time::Instant;

use super::item::{ItemKind, StreamItem};
use super::open::Open;
use super::resume::{Last, ResumePoint, keep_id, repeated};
use super::timers::{SPINS, arm, expired, rearm_idle, stalled};
use super::{Entry, Phase, Projected, RetriedStream, Skip};
use crate::{Classify, Elapsed, Failure, Limit, StopReason, observe};

impl<O, S, T, E> RetriedStream<'_, O, S, T, E>
where
    O: Open<E, Source = S>,
    S: Stream<Item = Result<T, E>>,
    T: StreamItem,
    E: Classify + From<Elapsed>,
{
    /// `poll_next` past its steady state: every phase, timer and kind of
    /// item.
    #[inline(never)]
    pub(super) fn poll_slow(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut entry: Entry<Poll<Option<Result<T, E>>>>,
    ) -> Poll<Option<Result<T, Failure<E>>>> {
        let mut this = self.project();
        // Items kept back in this poll.
        let mut spins = 0;
        loop {
            if *this.flushing {
                if let Some(item) = this.held.pop_front() {
                    return Poll::Ready(Some(Ok(deliver(&mut this, item))));
                }
                *this.flushing = false;
            }
            match *this.phase {
                Phase::Done => return Poll::Ready(None),
                Phase::Start => {
                    match this.polled.as_mut().poll_start(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Err(last)) => {
                            // Stopped after the wait (the deadline, a guard).
                            let stop = this
                                .polled
                                .engine()
                                .stop_reason()
                                .unwrap_or(StopReason::Deadline);
                            *this.phase = Phase::Done;
                            let Some(last) = last else {
                                let refusal = this.polled.engine().refused_error(stop);
                                return Poll::Ready(refused::<E>(refusal).map(Err));
                            };
                            return Poll::Ready(Some(Err(end(&mut this, stop, last))));
                        }
                        Poll::Ready(Ok(())) => {}
                    }
                    start_attempt(&mut this);
                }
                Phase::Opening => {
                    let (polled, open, resume) =
                        (this.polled.as_mut(), this.open.as_mut(), &*this.resume);
                    let opened = polled.in_attempt(|| resume.scoped(|| open.poll_open(resume, cx)));
                    match opened {
                        Poll::Ready(Ok(source)) => {
                            this.source.set(Some(source));
                            *this.phase = Phase::Reading;
                        }
                        Poll::Ready(Err(error)) => {
                            if let Some(end) = failed(&mut this, error) {
                                return Poll::Ready(Some(Err(end)));
                            }
                        }
                        Poll::Pending => match expired(&mut this, cx) {
                            Some(limit) => {
                                this.open.as_mut().cancel(cx);
                                if let Some(end) = stalled(&mut this, limit) {
                                    return Poll::Ready(Some(Err(end)));
                                }
                            }
                            None => return Poll::Pending,
                        },
                    }
                }
                Phase::Reading => {
                    let polled = match std::mem::replace(&mut entry, Entry::Fresh) {
                        Entry::Polled(polled) => polled,
                        fresh_or_tick => {
                            if this.deadline.is_some() {
                                // A source always ready never returns
                                // `Pending`, where the deadline is looked
                                // at: every 256th poll looks at it too.
                                if matches!(fresh_or_tick, Entry::Fresh) {
                                    *this.ticks = this.ticks.wrapping_add(1);
                                }
                                if *this.ticks == 0
                                    && this.deadline_at.is_some_and(|at| Instant::now() >= at)
                                    && let Some(end) = stalled(&mut this, Limit::Deadline)
                                {
                                    return Poll::Ready(Some(Err(end)));
                                }
                            }
                            let Some(source) = this.source.as_mut().as_pin_mut() else {
                                unreachable!("a source is read once opened")
                            };
                            source.poll_next(cx)
                        }
                    };
                    match polled {
                        Poll::Ready(Some(Ok(item))) => {
                            match arrived(&mut this, item) {
                                Ok(Some(item)) => return Poll::Ready(Some(Ok(item))),
                                Ok(None) => {}
                                Err(end) => return Poll::Ready(Some(Err(end))),
                            }
                            // Kept back (a keepalive, a repeat, a
                            // preamble): a source always ready with such
                            // items must not outlive the timers, nor hold
                            // the thread.
                            spins += 1;
                            if spins == SPINS {
                                spins = 0;
                                rearm_idle(&mut this);
                                if let Some(limit) = expired(&mut this, cx) {
                                    if let Some(end) = stalled(&mut this, limit) {
                                        return Poll::Ready(Some(Err(end)));
                                    }
                                    continue;
                                }
                                cx.waker().wake_by_ref();
                                return Poll::Pending;
                            }
                        }
                        Poll::Ready(Some(Err(error))) => {
                            if let Some(end) = failed(&mut this, error) {
                                return Poll::Ready(Some(Err(end)));
                            }
                        }
                        Poll::Ready(None) if *this.skip != Skip::Off => {
                            // A resumed attempt that ended before it
                            // caught up: the answer is cut, not complete.
                            let cut = E::from(Elapsed::of(Limit::CatchUp, Duration::ZERO));
                            if let Some(end) = failed(&mut this, cut) {
                                return Poll::Ready(Some(Err(end)));
                            }
                        }
                        Poll::Ready(None) => {
                            // The source ended: the call succeeded, and
                            // what it held back is delivered.
                            this.source.set(None);
                            this.deadline.set(None);
                            if !this.polled.is_done() {
                                let _ = this
                                    .polled
                                    .as_mut()
                                    .finish_recorded(this.provenance, Ok::<(), E>(()));
                            }
                            *this.phase = Phase::Done;
                            // A source that ended before content: its
                            // preamble is all there is.
                            *this.flushing = !this.held.is_empty();
                        }
                        Poll::Pending => {
                            rearm_idle(&mut this);
                            match expired(&mut this, cx) {
                                Some(limit) => {
                                    if let Some(end) = stalled(&mut this, limit) {
                                        return Poll::Ready(Some(Err(end)));
                                    }
                                }
                                None => return Poll::Pending,
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The attempt may start: arm its timers and open it.
fn start_attempt<O, S, T, E: Classify>(this: &mut Projected<'_, '_, O, S, T, E>) {
    *this.phase = Phase::Opening;
    *this.committed = false;
    *this.progressed = false;
    let policy = *this.policy;
    if this.deadline.is_none()
        && let Some(deadline) = policy.get_deadline()
    {
        let (start, _) = this.polled.as_mut().engine_mut().clock_start();
        // A deadline past what the clock can hold is no deadline.
        if let Some(at) = Instant::from_std(start).checked_add(deadline) {
            this.deadline.set(Some(tokio::time::sleep_until(at)));
            *this.deadline_at = Some(at);
        }
    }
    // Until its first content item: `first_item`; a resumed attempt
    // without one is already past the stream's first item, so `idle`.
    let wait = match (policy.get_first_item(), *this.delivered > 0) {
        (Some(first_item), _) => Some((Limit::FirstItem, first_item)),
        (None, true) => policy.get_idle().map(|idle| (Limit::Idle, idle)),
        (None, false) => None,
    };
    arm(this, wait);
    *this.attempt_start = policy.get_stats().map(|_| Instant::now());
    if *this.delivered > 0 {
        // A resumed attempt: from where the consumer is.
        *this.resume = ResumePoint {
            delivered: *this.delivered,
            last_event_id: this.has_last.then(|| this.last_id.clone()),
        };
        *this.skip = if *this.has_last {
            Skip::Unplaced
        } else {
            Skip::Off
        };
        if let Some(stats) = policy.get_stats() {
            observe::stream_resume(stats, *this.delivered);
        }
    }
}

/// An item came from the source: `Some` to deliver it now, `Err` when the
/// stream ends with it (it held as much as it may).
#[inline]
fn arrived<O, S, T: StreamItem, E: Classify + From<Elapsed>>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    item: T,
) -> Result<Option<T>, Failure<E>> {
    let kind = item.kind();
    if kind == ItemKind::Keepalive {
        return Ok(None);
    }
    if *this.skip != Skip::Off && repeated(this, &item) {
        return Ok(None);
    }
    if !*this.committed {
        match kind {
            ItemKind::Preamble => {
                // A resumed attempt's consumer had the preamble already.
                if *this.delivered == 0 {
                    hold(this, item)?;
                }
                return Ok(None);
            }
            _ => return Ok(Some(commit(this, item))),
        }
    }
    Ok(Some(deliver(this, item)))
}

/// Holds a preamble `item` until the first content item, within the
/// policy's bounds; past them the stream ends, with the failure returned.
fn hold<O, S, T: StreamItem, E: Classify + From<Elapsed>>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    item: T,
) -> Result<(), Failure<E>> {
    let bytes = this.held_bytes.saturating_add(item.size());
    let max_items = usize::try_from(this.policy.get_max_held()).unwrap_or(usize::MAX);
    let max_bytes = usize::try_from(this.policy.get_max_held_bytes()).unwrap_or(usize::MAX);
    if this.held.len() >= max_items || bytes > max_bytes {
        return Err(held_too_much(this));
    }
    this.held.push_back(item);
    *this.held_bytes = bytes;
    Ok(())
}

/// The source sent more preamble than the stream may hold: it stops, a
/// retry would hold as much again, whatever `E`'s class says.
#[cold]
fn held_too_much<O, S, T, E: Classify + From<Elapsed>>(
    this: &mut Projected<'_, '_, O, S, T, E>,
) -> Failure<E> {
    let held = u32::try_from(this.held.len()).unwrap_or(u32::MAX);
    this.source.set(None);
    drop_held(this);
    give_up(
        this,
        StopReason::NotRetryable,
        E::from(Elapsed::held_back(held)),
    )
}

/// Drops what the attempt held back.
pub(super) fn drop_held<O, S, T, E: Classify>(this: &mut Projected<'_, '_, O, S, T, E>) {
    this.held.clear();
    *this.held_bytes = 0;
}

/// The attempt's first content item: the stream commits.
#[cold]
pub(super) fn commit<O, S, T: StreamItem, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    item: T,
) -> T {
    *this.committed = true;
    let policy = *this.policy;
    arm(this, policy.get_idle().map(|idle| (Limit::Idle, idle)));
    // The stream's first commit: a resumed attempt's is no first item.
    if *this.delivered == 0
        && let (Some(stats), Some(start)) = (policy.get_stats(), *this.attempt_start)
    {
        observe::stream_first_item(stats, start.elapsed());
    }
    if this.held.is_empty() {
        return deliver(this, item);
    }
    // Delivered from here: no longer counted against the bound.
    *this.held_bytes = 0;
    this.held.push_back(item);
    *this.flushing = true;
    let first = this
        .held
        .pop_front()
        .unwrap_or_else(|| unreachable!("pushed above"));
    deliver(this, first)
}

/// Hands `item` to the consumer: counts it and, with resume, keeps its id.
/// Always inlined: a call would take the whole projection's address, which
/// makes the caller build every field's (see `poll_next`).
#[inline(always)]
pub(super) fn deliver<O, S, T: StreamItem, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    item: T,
) -> T {
    *this.delivered += 1;
    *this.progressed = true;
    if this.policy.get_resume()
        && let Some(id) = item.id()
    {
        let last = Last {
            id: this.last_id,
            has: this.has_last,
            ordered: this.ordered,
            at: this.last_at,
        };
        keep_id(last, id, *this.delivered);
    }
    item
}

/// The attempt failed with `error`: `None` to try again, or the failure
/// the stream ends with.
#[cold]
pub(super) fn failed<O, S, T, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    error: E,
) -> Option<Failure<E>> {
    this.source.set(None);
    // What this attempt held back goes with it.
    drop_held(this);
    if *this.delivered > 0 && !this.policy.get_resume() {
        // A retry would repeat what the consumer has.
        return Some(give_up(this, StopReason::PartialOutput, error));
    }
    match this
        .polled
        .as_mut()
        .finish_recorded(this.provenance, Err::<(), E>(error))
    {
        ControlFlow::Continue(()) => {
            *this.phase = Phase::Start;
            None
        }
        ControlFlow::Break(result) => {
            let error = match result {
                Err(error) => error,
                Ok(()) => unreachable!("a failed attempt decides no success"),
            };
            let stop = this
                .polled
                .engine()
                .stop_reason()
                .unwrap_or(StopReason::Exhausted);
            Some(end(this, stop, error))
        }
    }
}

/// The failure of a stream whose first attempt a guard refused
/// (`refused`); `None` when `E` cannot say so (the refusal is then taken as a
/// go, see `PollDriver::refusable`).
#[cold]
pub(super) fn refused<E: Classify>(refused: crate::Refused) -> Option<Failure<E>> {
    let make = <Failure<E> as Classify>::refused()?;
    Some(make(refused))
}

/// The stream stops for `reason` with `error`, whatever the policy would
/// decide (its give-up is counted and recorded here).
#[cold]
pub(super) fn give_up<O, S, T, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    reason: StopReason,
    error: E,
) -> Failure<E> {
    if !this.polled.is_done() {
        this.polled
            .as_mut()
            .stop_after(this.provenance, &error, reason);
    }
    end(this, reason, error)
}

/// The failure the stream ends with.
pub(super) fn end<O, S, T, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    reason: StopReason,
    error: E,
) -> Failure<E> {
    *this.phase = Phase::Done;
    this.deadline.set(None);
    let delivered = *this.delivered;
    if delivered > 0
        && let Some(stats) = this.policy.get_stats()
    {
        observe::stream_partial(stats, delivered, reason);
    }
    let retry_in = this.polled.engine().retry_in();
    let failure = std::mem::take(this.provenance)
        .into_stream_failure(reason, delivered, error)
        .with_retry_in(retry_in);
    if *this.has_last {
        failure.with_last_event_id(Some(this.last_id))
    } else {
        failure
    }
}
