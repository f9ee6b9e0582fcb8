//! The store's own timer: wakes a decision waiting on Redis when the
//! store's timeout has passed, on a thread of its own, so that the wait
//! ends whether or not any runtime runs. Neither the store's runtime (all
//! of whose workers may be busy, blocked in sync calls, or which nobody
//! drives) nor the caller's (a blocking call has none; a runtime's timer
//! runs only when one of its workers parks) can be relied on to.
//!
//! One thread per process, named `tenacious-store-timer`, started by the
//! first decision that waits; it sleeps on a condition variable between
//! deadlines and holds nothing but the wakers of decisions still waiting
//! (each one at most a store timeout).
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::task::Waker;
use std::time::Instant;

/// A waker due at `at`; `seq` keeps the heap's order total.
struct Due {
    at: Instant,
    seq: u64,
    waker: Waker,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Due {}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Due {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[derive(Default)]
struct Queue {
    due: BinaryHeap<Reverse<Due>>,
    seq: u64,
}

struct Timer {
    queue: Mutex<Queue>,
    changed: Condvar,
}

/// The process's timer, its thread started on first use; `None` if no
/// thread could be started.
fn timer() -> Option<&'static Timer> {
    static TIMER: OnceLock<Option<&'static Timer>> = OnceLock::new();
    *TIMER.get_or_init(|| {
        let timer: &'static Timer = Box::leak(Box::new(Timer {
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("tenacious-store-timer".to_owned())
            .spawn(move || timer.run())
            .ok()
            .map(|_| timer)
    })
}

impl Timer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // Nothing panics under the lock: a poisoned one holds a whole heap.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn run(&self) {
        let mut woken = Vec::new();
        let mut queue = self.lock();
        loop {
            let now = Instant::now();
            while queue.due.peek().is_some_and(|Reverse(due)| due.at <= now) {
                if let Some(Reverse(due)) = queue.due.pop() {
                    woken.push(due.waker);
                }
            }
            if !woken.is_empty() {
                // Woken outside the lock: a waker may run code of its own.
                drop(queue);
                woken.drain(..).for_each(Waker::wake);
                queue = self.lock();
                continue;
            }
            queue = match queue.due.peek().map(|Reverse(due)| due.at - now) {
                Some(wait) => {
                    self.changed
                        .wait_timeout(queue, wait)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => self
                    .changed
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }
}

/// Wakes `waker` at `at` (or soon after), whatever runtime runs or does
/// not. `false` when the timer cannot run (no thread could be started):
/// the caller must not wait then.
pub(crate) fn wake_at(at: Instant, waker: &Waker) -> bool {
    let Some(timer) = timer() else {
        return false;
    };
    let mut queue = timer.lock();
    let first = queue.due.peek().is_none_or(|Reverse(due)| at < due.at);
    queue.seq = queue.seq.wrapping_add(1);
    let seq = queue.seq;
    queue.due.push(Reverse(Due {
        at,
        seq,
        waker: waker.clone(),
    }));
    drop(queue);
    if first {
        timer.changed.notify_one();
    }
    true
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::task::Wake;
    use std::time::Duration;

    use super::*;

    /// Counts its wakes, and whether one came before its time.
    struct Woken {
        at: Instant,
        early: AtomicBool,
        count: Arc<AtomicUsize>,
        test: std::thread::Thread,
    }

    impl Wake for Woken {
        fn wake(self: Arc<Self>) {
            if Instant::now() < self.at {
                self.early.store(true, Ordering::SeqCst);
            }
            self.count.fetch_add(1, Ordering::SeqCst);
            self.test.unpark();
        }
    }

    #[test]
    fn each_waker_is_woken_once_and_never_before_its_time() {
        let count = Arc::new(AtomicUsize::new(0));
        let now = Instant::now();
        // The latest first: the earlier ones, pushed after, still come.
        let wakers: Vec<Arc<Woken>> = [40, 5, 0]
            .into_iter()
            .map(|ms| {
                Arc::new(Woken {
                    at: now + Duration::from_millis(ms),
                    early: AtomicBool::new(false),
                    count: Arc::clone(&count),
                    test: std::thread::current(),
                })
            })
            .collect();
        for woken in &wakers {
            assert!(wake_at(woken.at, &Waker::from(Arc::clone(woken))));
        }
        // Bounded, so a lost wake fails rather than hangs.
        for _ in 0..3_000 {
            if count.load(Ordering::SeqCst) == 3 {
                break;
            }
            std::thread::park_timeout(Duration::from_millis(10));
        }
        assert_eq!(count.load(Ordering::SeqCst), 3);
        assert!(wakers.iter().all(|w| !w.early.load(Ordering::SeqCst)));
    }
}
