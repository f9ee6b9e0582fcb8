//! The permits of a [`Concurrency`](super::Concurrency) and the calls
//! waiting for one: a count under a lock, and first-in first-out queues of
//! waiters, one per lane (see `task.rs`), each waiter handed a permit
//! directly by the call that releases it (so a newcomer cannot take it
//! first).
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::thread::Thread;
use std::time::Instant;

use crate::task::Lane;

/// The permits: how many may be out, how many are, and who waits.
#[derive(Debug)]
pub(super) struct Permits {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    limit: u32,
    in_flight: u32,
    /// Waiters still waiting (the queues also hold the ones that left,
    /// skipped when met).
    waiting: u32,
    /// The waiters by lane, served in order (see [`next_lane`]).
    queue: [VecDeque<Arc<Waiter>>; Lane::COUNT],
    /// Interactive grants since the last batch one, while batch waits.
    since_batch: u32,
}

/// One call waiting for a permit.
#[derive(Debug)]
struct Waiter {
    /// `WAITING`, then `GRANTED` (by the releasing call, under the lock)
    /// or `GONE` (by the waiter, giving up).
    state: AtomicU8,
    wake: Mutex<Wake>,
}

const WAITING: u8 = 0;
const GRANTED: u8 = 1;
const GONE: u8 = 2;

#[derive(Debug)]
enum Wake {
    None,
    Task(Waker),
    Thread(Thread),
}

impl Waiter {
    fn wake(&self) {
        match std::mem::replace(&mut *lock(&self.wake), Wake::None) {
            Wake::None => {}
            Wake::Task(waker) => waker.wake(),
            Wake::Thread(thread) => thread.unpark(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing here panics while holding a lock; a poisoned lock's state
    // is still whole.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Permits {
    pub(super) const fn new(limit: u32) -> Self {
        Self {
            state: Mutex::new(State {
                limit,
                in_flight: 0,
                waiting: 0,
                queue: [
                    VecDeque::new(),
                    VecDeque::new(),
                    VecDeque::new(),
                    VecDeque::new(),
                ],
                since_batch: 0,
            }),
        }
    }

    /// Takes a permit if one is free and no call waits for one: then the
    /// permits out and the limit.
    pub(super) fn try_acquire(&self) -> Option<(u32, u32)> {
        let mut state = lock(&self.state);
        if state.waiting == 0 && state.in_flight < state.limit {
            state.in_flight += 1;
            Some((state.in_flight, state.limit))
        } else {
            None
        }
    }

    /// Takes a permit if one is free, or queues for one in `lane`: the
    /// waiter to poll (or block on) until it is handed one.
    pub(super) fn acquire(&self, lane: Lane) -> Result<(), Waiting<'_>> {
        let mut state = lock(&self.state);
        if state.waiting == 0 && state.in_flight < state.limit {
            state.in_flight += 1;
            return Ok(());
        }
        let waiter = Arc::new(Waiter {
            state: AtomicU8::new(WAITING),
            wake: Mutex::new(Wake::None),
        });
        state.queue[usize::from(lane.0)].push_back(Arc::clone(&waiter));
        state.waiting += 1;
        Err(Waiting {
            permits: self,
            waiter,
            done: false,
        })
    }

    /// Gives a permit back: to the first waiter if the limit allows. The
    /// permits out and the limit after.
    pub(super) fn release(&self) -> (u32, u32) {
        let mut state = lock(&self.state);
        state.in_flight = state.in_flight.saturating_sub(1);
        grant(&mut state);
        (state.in_flight, state.limit)
    }

    /// Sets the limit (at least 1); a higher one hands permits to waiters
    /// at once, a lower one takes effect as permits come back.
    pub(super) fn set_limit(&self, limit: u32) {
        let mut state = lock(&self.state);
        state.limit = limit.max(1);
        grant(&mut state);
    }

    /// The limit, the permits out, and the calls waiting.
    pub(super) fn counts(&self) -> (u32, u32, u32) {
        let state = lock(&self.state);
        (state.limit, state.in_flight, state.waiting)
    }
}

/// Hands free permits to the waiters at the front of the queues.
#[inline]
fn grant(state: &mut State) {
    if state.waiting == 0 {
        // Only waiters that left, if any: forget them.
        if state.queue.iter().any(|lane| !lane.is_empty()) {
            state.queue.iter_mut().for_each(VecDeque::clear);
        }
        return;
    }
    while state.in_flight < state.limit {
        let Some(lane) = next_lane(state) else {
            return;
        };
        let Some(waiter) = state.queue[lane].pop_front() else {
            return;
        };
        if waiter
            .state
            .compare_exchange(WAITING, GRANTED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            state.in_flight += 1;
            state.waiting -= 1;
            waiter.wake();
        }
    }
}

/// The lane the next permit goes to: the first with a waiter, interactive
/// before batch and tasks in progress before new ones, but for one grant
/// in [`BATCH_FLOOR`](super::Concurrency::BATCH_FLOOR) that goes to batch
/// while both classes wait. Drops the waiters that left from the fronts.
fn next_lane(state: &mut State) -> Option<usize> {
    for lane in &mut state.queue {
        while lane
            .front()
            .is_some_and(|waiter| waiter.state.load(Ordering::Acquire) == GONE)
        {
            lane.pop_front();
        }
    }
    let first = |lanes: std::ops::Range<usize>, queue: &[VecDeque<Arc<Waiter>>]| {
        lanes.into_iter().find(|&lane| !queue[lane].is_empty())
    };
    let interactive = first(0..Lane::FIRST_BATCH, &state.queue);
    let batch = first(Lane::FIRST_BATCH..Lane::COUNT, &state.queue);
    match (interactive, batch) {
        (Some(interactive), Some(batch)) => {
            if state.since_batch + 1 >= super::Concurrency::BATCH_FLOOR {
                state.since_batch = 0;
                Some(batch)
            } else {
                state.since_batch += 1;
                Some(interactive)
            }
        }
        (Some(lane), None) | (None, Some(lane)) => {
            state.since_batch = 0;
            Some(lane)
        }
        (None, None) => None,
    }
}

/// A call's place in the queue for a permit. Dropped before it was handed
/// one, it leaves the queue; dropped after, it hands the permit on (the
/// call never knew it had it).
#[derive(Debug)]
pub(super) struct Waiting<'a> {
    permits: &'a Permits,
    waiter: Arc<Waiter>,
    /// The permit was taken out of it (see [`Waiting::poll_granted`]).
    done: bool,
}

impl Waiting<'_> {
    /// Ready once the call holds a permit, which is then its own.
    pub(super) fn poll_granted(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.granted() {
            return Poll::Ready(());
        }
        *lock(&self.waiter.wake) = Wake::Task(cx.waker().clone());
        // Granted between the test and the waker's registration.
        if self.granted() {
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// Parks the thread until the call holds a permit (`true`), or until
    /// `until` passes without one (`false`; the waiter has then left).
    pub(super) fn wait_until(mut self, until: Option<Instant>) -> bool {
        *lock(&self.waiter.wake) = Wake::Thread(std::thread::current());
        loop {
            if self.granted() {
                return true;
            }
            match until {
                None => std::thread::park(),
                Some(until) => {
                    let now = Instant::now();
                    if now >= until {
                        return self.granted();
                    }
                    std::thread::park_timeout(until - now);
                }
            }
        }
    }

    fn granted(&mut self) -> bool {
        if self.waiter.state.load(Ordering::Acquire) == GRANTED {
            self.done = true;
        }
        self.done
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        match self
            .waiter
            .state
            .compare_exchange(WAITING, GONE, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                let mut state = lock(&self.permits.state);
                state.waiting -= 1;
                // Its place may have been the one holding others back.
                grant(&mut state);
            }
            // Handed a permit it will not use: to the next in line.
            Err(_) => {
                let _ = self.permits.release();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Flag(std::sync::atomic::AtomicBool);
    impl std::task::Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Flag>, Waker) {
        let flag = Arc::new(Flag(std::sync::atomic::AtomicBool::new(false)));
        (Arc::clone(&flag), Waker::from(flag))
    }

    #[test]
    fn permits_go_to_waiters_in_the_order_they_came() {
        let permits = Permits::new(1);
        assert!(permits.acquire(Lane(1)).is_ok());
        let mut first = permits.acquire(Lane(1)).unwrap_err();
        let mut second = permits.acquire(Lane(1)).unwrap_err();
        let (flag, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        assert!(first.poll_granted(&mut cx).is_pending());
        assert!(second.poll_granted(&mut cx).is_pending());
        // A newcomer does not jump the queue when a permit comes back.
        let _ = permits.release();
        assert!(permits.try_acquire().is_none());
        assert!(flag.0.load(Ordering::SeqCst));
        assert!(first.poll_granted(&mut cx).is_ready());
        assert!(second.poll_granted(&mut cx).is_pending());
        assert_eq!(permits.counts(), (1, 1, 1));
        drop(first);
        // Dropped with its permit: the permit stays out until released.
        assert_eq!(permits.counts(), (1, 1, 1));
        let _ = permits.release();
        assert!(second.poll_granted(&mut cx).is_ready());
        drop(second);
        let _ = permits.release();
        assert_eq!(permits.counts(), (1, 0, 0));
    }

    /// Releases `n` permits one at a time: the lane of each waiter served.
    fn serve(
        permits: &Permits,
        waiters: &mut Vec<(u8, Waiting<'_>)>,
        n: usize,
        cx: &mut Context<'_>,
    ) -> Vec<u8> {
        (0..n)
            .map(|_| {
                let _ = permits.release();
                let at = waiters
                    .iter_mut()
                    .position(|(_, waiter)| waiter.poll_granted(cx).is_ready())
                    .unwrap();
                waiters.remove(at).0
            })
            .collect()
    }

    #[test]
    fn tasks_in_progress_go_first_interactive_before_batch_with_a_floor() {
        let permits = Permits::new(1);
        assert!(permits.acquire(Lane(1)).is_ok());
        let (_flag, waker) = waker();
        let mut cx = Context::from_waker(&waker);
        // Arrived in this order: a new batch task, a new interactive one,
        // an interactive one in progress, a batch one in progress.
        let mut waiters: Vec<_> = [3, 1, 0, 2]
            .map(|lane| (lane, permits.acquire(Lane(lane)).unwrap_err()))
            .into_iter()
            .collect();
        assert_eq!(serve(&permits, &mut waiters, 4, &mut cx), [0, 1, 2, 3]);

        // 30 interactive waiters and 5 batch: one grant in ten is batch.
        let mut waiters: Vec<_> = (0..35)
            .map(|n| {
                let lane = if n < 5 { 2 } else { 0 };
                (lane, permits.acquire(Lane(lane)).unwrap_err())
            })
            .collect();
        let served = serve(&permits, &mut waiters, 30, &mut cx);
        let batch: Vec<usize> = served
            .iter()
            .enumerate()
            .filter(|&(_, &lane)| lane == 2)
            .map(|(at, _)| at)
            .collect();
        assert_eq!(batch, [9, 19, 29]);
    }

    #[test]
    fn a_waiter_dropped_after_its_grant_hands_the_permit_on() {
        let permits = Permits::new(1);
        assert!(permits.acquire(Lane(1)).is_ok());
        let first = permits.acquire(Lane(1)).unwrap_err();
        let mut second = permits.acquire(Lane(1)).unwrap_err();
        let _ = permits.release();
        // Granted to `first`, which gives up before it sees it.
        drop(first);
        let (_flag, waker) = waker();
        assert!(
            second
                .poll_granted(&mut Context::from_waker(&waker))
                .is_ready()
        );
        assert_eq!(permits.counts(), (1, 1, 0));
    }

    #[test]
    fn waiters_that_leave_free_their_place() {
        let permits = Permits::new(1);
        assert!(permits.acquire(Lane(1)).is_ok());
        let waiters: Vec<_> = (0..1000)
            .map(|_| permits.acquire(Lane(1)).unwrap_err())
            .collect();
        assert_eq!(permits.counts(), (1, 1, 1000));
        drop(waiters);
        assert_eq!(permits.counts(), (1, 1, 0));
        let _ = permits.release();
        assert_eq!(permits.counts(), (1, 0, 0));
        assert!(lock(&permits.state).queue.iter().all(VecDeque::is_empty));
        assert!(permits.try_acquire().is_some());
    }

    #[test]
    fn a_raised_limit_hands_permits_to_waiters_and_a_lowered_one_waits_for_releases() {
        let permits = Permits::new(1);
        assert!(permits.acquire(Lane(1)).is_ok());
        let mut waiter = permits.acquire(Lane(1)).unwrap_err();
        permits.set_limit(2);
        let (_flag, waker) = waker();
        assert!(
            waiter
                .poll_granted(&mut Context::from_waker(&waker))
                .is_ready()
        );
        permits.set_limit(0);
        assert_eq!(permits.counts(), (1, 2, 0));
        let _ = permits.release();
        assert!(permits.try_acquire().is_none());
        let _ = permits.release();
        assert!(permits.try_acquire().is_some());
    }

    #[test]
    fn a_blocked_thread_is_handed_a_permit_or_leaves_at_its_time() {
        let permits: &'static Permits = Box::leak(Box::new(Permits::new(1)));
        assert!(permits.acquire(Lane(1)).is_ok());
        let waiter = permits.acquire(Lane(1)).unwrap_err();
        assert!(!waiter.wait_until(Some(Instant::now())));
        assert_eq!(permits.counts(), (1, 1, 0));
        let handle = std::thread::spawn(move || {
            permits
                .acquire(Lane(1))
                .map_or_else(|waiting| waiting.wait_until(None), |()| true)
        });
        while permits.counts().2 == 0 {
            std::thread::yield_now();
        }
        let _ = permits.release();
        assert!(handle.join().unwrap());
        assert_eq!(permits.counts(), (1, 1, 0));
    }
}
