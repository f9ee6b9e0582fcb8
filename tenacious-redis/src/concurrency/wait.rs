//! How a call of the process waits for a lease: one waiter at a time
//! asks the fleet (the poller), the others wait for a permit let go in
//! their process or for the poller's role.
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::{FIRST_POLL, LONGEST_POLL, LONGEST_WAKE, SharedConcurrency};
use tenacious_runtime::{Admit, PendingAdmit};

impl SharedConcurrency {
    /// A permit for the next attempt, waiting at most `bound`. One waiting
    /// call of the process at a time asks the fleet (the poller); the
    /// others wait for a permit the process lets go, or for the poller's
    /// role, which the poller hands on when it leaves.
    pub(super) fn take(&'static self, bound: Duration) -> PendingAdmit<'static> {
        Box::pin(async move {
            let start = Instant::now();
            let until = start.checked_add(bound);
            let mut poll = FIRST_POLL;
            let mut waiting = None;
            let mut role = None;
            loop {
                if self.at_hand() {
                    break;
                }
                if role.is_none() {
                    role = Poller::claim(self);
                }
                if self.link.is_up() && role.is_some() {
                    match self.lease().await {
                        Some(true) => break,
                        Some(false) => {}
                        // No answer: the store is down now (or the key
                        // holds what the script cannot use): the share.
                        None => {
                            if self.take_share() {
                                break;
                            }
                        }
                    }
                }
                let now = Instant::now();
                if until.is_some_and(|until| now >= until) {
                    return self.concurrency.refused();
                }
                waiting.get_or_insert_with(|| Waiting::new(&self.waiters));
                // The poller asks again after `poll`; the others wait for
                // a permit let go or the role, at most `LONGEST_WAKE`.
                let nap = if role.is_some() { poll } else { LONGEST_WAKE };
                let wake = until.map_or(now + nap, |until| until.min(now + nap));
                let mut notified = std::pin::pin!(self.freed.notified());
                let mut nap = Nap::new(wake);
                std::future::poll_fn(|cx| {
                    if notified.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(());
                    }
                    Pin::new(&mut nap).poll(cx)
                })
                .await;
                if role.is_some() {
                    poll = (poll * 2).min(LONGEST_POLL);
                }
            }
            if waiting.is_some() {
                self.concurrency.guard_record().waited(start.elapsed());
            }
            Admit::Go
        })
    }
}

/// The role of the process's waiting call that asks the fleet: handed to
/// another waiter (woken) when its holder leaves, whichever way.
struct Poller(&'static SharedConcurrency);

impl Poller {
    fn claim(shared: &'static SharedConcurrency) -> Option<Self> {
        (!shared.polling.swap(true, Ordering::AcqRel)).then_some(Self(shared))
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        self.0.polling.store(false, Ordering::Release);
        if self.0.waiters.load(Ordering::Acquire) > 0 {
            self.0.freed.notify_one();
        }
    }
}

/// Counts a waiting call for as long as it waits, whichever way it ends.
struct Waiting<'a>(&'a AtomicU32);

impl<'a> Waiting<'a> {
    fn new(waiters: &'a AtomicU32) -> Self {
        waiters.fetch_add(1, Ordering::AcqRel);
        Self(waiters)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A wait until `at` on the store's own timer thread, which runs with or
/// without a runtime (a blocking call waits on it too).
struct Nap {
    at: Instant,
    armed: bool,
}

impl Nap {
    const fn new(at: Instant) -> Self {
        Self { at, armed: false }
    }
}

impl Future for Nap {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.at {
            return Poll::Ready(());
        }
        if !self.armed {
            if !crate::timer::wake_at(self.at, cx.waker()) {
                // No timer thread: no wait either.
                return Poll::Ready(());
            }
            self.armed = true;
        }
        Poll::Pending
    }
}
