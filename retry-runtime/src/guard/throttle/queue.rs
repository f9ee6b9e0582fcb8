//! The queue of the async calls a throttle short of tokens makes wait,
//! each with its ticket: the bucket's credit at which its token is there.
use std::time::Duration;

use super::Throttle;
use super::admit::no_room;
use super::bucket::nanos_ceil;
use crate::clock::{saturating_nanos, since_epoch};
use crate::{Admit, NextAttempt, StopReason};

impl Throttle {
    /// The answer to an async call [`admit_here`](Throttle::admit_here)
    /// asked to wait for a token, just before its attempt: it takes one
    /// now, on credit, with a ticket (the bucket's credit at which the
    /// token is there), and goes when the bucket's credit reaches it, or
    /// at the latest when the token would be there at the rate it asked
    /// at (as a reservation would), and no sooner than the starts keep to
    /// the rate. It looks again at most every quarter of the wait left
    /// (half a second at least), and at once when the rate rises by a
    /// tenth: while the provider's headers pace the throttle, a rate they
    /// raise brings the queued calls forward. A call dropped while queued
    /// gives its token back; [`StopReason::Deadline`] when what is left of
    /// the wait no longer fits the deadline.
    pub(super) async fn queue(&self, next: NextAttempt) -> Admit {
        /// Gives the token back if the call leaves the queue without it.
        struct Queued<'t>(&'t Throttle, bool);
        impl Drop for Queued<'_> {
            fn drop(&mut self) {
                if self.1 {
                    let mut state = self.0.lock();
                    if state.enabled {
                        state.credit(1.0);
                    }
                }
            }
        }
        const RETIME_NANOS: u64 = 500_000_000;
        let deadline = next
            .deadline_left
            .map(|left| since_epoch(next.now).saturating_add(saturating_nanos(left)));
        let ticket = {
            let now = since_epoch(next.now);
            let mut state = self.lock();
            if !state.enabled {
                return Admit::Go;
            }
            let at = state.at(now);
            state.fill(at);
            let ticket = state.paid + (1.0 - state.tokens).max(0.0);
            state.tokens -= 1.0;
            ticket
        };
        let mut queued = Queued(self, true);
        let mut first = true;
        // When the token would be there at the rate of now: the call goes
        // then at the latest, as a reservation would. A rate that falls
        // meanwhile does not put it back (queued calls held back by every
        // cut of an outage would hold the recovery back: the rate grows
        // from what is sent).
        let mut latest = u64::MAX;
        loop {
            // Listening before the state is read: a rise told meanwhile is
            // not missed.
            let mut rose = std::pin::pin!(self.rose.notified());
            rose.as_mut().enable();
            let now_at = crate::clock::now_on(false);
            let now = since_epoch(now_at);
            let wait = {
                let mut state = self.lock();
                if !state.enabled {
                    queued.1 = false;
                    return Admit::Go;
                }
                let at = state.at(now);
                state.fill(at);
                let missing = ticket - state.paid;
                let wait = if missing > 0.0 {
                    nanos_ceil(missing / state.fill_rate).max(1)
                } else {
                    0
                };
                if first {
                    latest = now.saturating_add(wait);
                }
                // Brought forward only while the provider's headers say
                // what it allows: a rate the throttle guesses from its 429s
                // alone moves no call up into a quota it has not measured
                // (queued calls brought forward so held a recovery back:
                // `cargo run --release --example fleet -- --outage 3-5`,
                // throttle alone, 42 % of the quota the minute after, not 90).
                let wait = if state.mirrored {
                    wait.min(latest.saturating_sub(now))
                } else {
                    latest.saturating_sub(now)
                };
                // And no sooner than the starts keep to the rate.
                let wait = wait.max(state.earliest_start().saturating_sub(now));
                if wait == 0 {
                    state.start(now);
                    queued.1 = false;
                    return Admit::Go;
                }
                wait
            };
            if deadline.is_some_and(|deadline| {
                no_room(wait, Duration::from_nanos(deadline.saturating_sub(now)))
            }) {
                drop(queued);
                self.record.stopped();
                return Admit::Stop(StopReason::Deadline);
            }
            if first {
                first = false;
                self.record.waited(Duration::from_nanos(wait));
            }
            let look = wait.min((wait / 4).max(RETIME_NANOS));
            let mut timer = std::pin::pin!(tokio::time::sleep(Duration::from_nanos(look)));
            std::future::poll_fn(|cx| {
                if rose.as_mut().poll(cx).is_ready() || timer.as_mut().poll(cx).is_ready() {
                    std::task::Poll::Ready(())
                } else {
                    std::task::Poll::Pending
                }
            })
            .await;
        }
    }
}
