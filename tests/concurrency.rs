//! A shared `Concurrency` limit: at most N attempts in flight among every
//! call naming it, on every path an attempt can end by (success, error,
//! timeout, a dropped future, a panic), a stream holding its permit to its
//! end; waiting in order, outside the attempt's timeout and inside the
//! deadline. On tokio's paused clock; blocking calls on threads.
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{StreamExt, stream};
use tenacious::{Breaker, Classify, Concurrency, Elapsed, Jitter, Policy, StopReason, retry};
use tokio::time::{Instant, sleep};

#[derive(Debug, Clone, PartialEq, Classify)]
enum CallError {
    #[classify(transient)]
    Reset,
    #[classify(transient)]
    TimedOut(tenacious::Limit),
    #[classify(refused)]
    Refused(tenacious::Refused),
}

impl From<Elapsed> for CallError {
    fn from(elapsed: Elapsed) -> Self {
        CallError::TimedOut(elapsed.which())
    }
}

/// Counts the attempts in flight and the most seen at once.
#[derive(Default)]
struct Gauge {
    now: AtomicU32,
    most: AtomicU32,
    started: AtomicU32,
}

impl Gauge {
    fn enter(&self) -> Entered<'_> {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        self.started.fetch_add(1, Ordering::SeqCst);
        Entered(self)
    }
    fn most(&self) -> u32 {
        self.most.load(Ordering::SeqCst)
    }
}

struct Entered<'a>(&'a Gauge);

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, Ordering::SeqCst);
    }
}

const fn policy(limit: &'static Concurrency) -> Policy {
    Policy::new()
        .max(3)
        .base(Duration::from_millis(100))
        .jitter(Jitter::None)
        .concurrency(limit)
}

static FOUR: Concurrency = Concurrency::new(4);

#[tokio::test(start_paused = true)]
async fn a_hundred_calls_hold_at_most_four_attempts_in_flight_and_all_finish() {
    const POLICY: Policy = policy(&FOUR);
    let gauge = Arc::new(Gauge::default());
    let start = Instant::now();
    let calls: Vec<_> = (0..100)
        .map(|_| {
            let gauge = Arc::clone(&gauge);
            tokio::spawn(async move {
                POLICY
                    .retry(|| async {
                        let _in = gauge.enter();
                        sleep(Duration::from_secs(1)).await;
                        Ok::<_, CallError>(())
                    })
                    .await
            })
        })
        .collect();
    for call in calls {
        call.await.unwrap().unwrap();
    }
    assert_eq!(gauge.most(), 4);
    // Four at a time, back to back: 25 rounds of one second.
    assert_eq!(start.elapsed(), Duration::from_secs(25));
    assert_eq!((FOUR.in_flight(), FOUR.waiting()), (0, 0));
    let stats = FOUR.stats();
    assert_eq!(stats.waits, 96);
    assert_eq!(stats.stopped, 0);
}

static ONE_RETRYING: Concurrency = Concurrency::new(1);

#[tokio::test(start_paused = true)]
async fn a_failed_attempt_gives_its_permit_back_during_its_backoff() {
    const POLICY: Policy = policy(&ONE_RETRYING).base(Duration::from_secs(10));
    let attempts = AtomicU32::new(0);
    let other_ran_at = Mutex::new(None);
    let start = Instant::now();
    let failing = POLICY.retry(|| async {
        attempts.fetch_add(1, Ordering::SeqCst);
        sleep(Duration::from_secs(1)).await;
        Err::<(), _>(CallError::Reset)
    });
    let other = async {
        sleep(Duration::from_millis(500)).await;
        POLICY
            .retry(|| async {
                *other_ran_at.lock().unwrap() = Some(start.elapsed());
                Ok::<_, CallError>(())
            })
            .await
    };
    let (failed, other) = tokio::join!(failing, other);
    assert_eq!(failed, Err(CallError::Reset));
    other.unwrap();
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    // The other call waited for the first attempt (1 s), not its backoff.
    assert_eq!(*other_ran_at.lock().unwrap(), Some(Duration::from_secs(1)));
    assert_eq!(ONE_RETRYING.in_flight(), 0);
}

static ONE_TIMED: Concurrency = Concurrency::new(1);

#[tokio::test(start_paused = true)]
async fn the_wait_for_a_permit_is_outside_the_timeout_and_a_timed_out_attempt_gives_it_back() {
    const POLICY: Policy = policy(&ONE_TIMED).max(1).timeout(Duration::from_secs(2));
    let start = Instant::now();
    let stuck = POLICY.retry_timed(|| async {
        sleep(Duration::from_secs(3600)).await;
        Ok::<_, CallError>(())
    });
    let waiter = async {
        sleep(Duration::from_millis(10)).await;
        // Waits 1.99 s for the permit, then has its own 2 s: not cut.
        POLICY
            .retry_timed(|| async {
                sleep(Duration::from_millis(1900)).await;
                Ok::<_, CallError>(start.elapsed())
            })
            .await
    };
    let (stuck, waiter) = tokio::join!(stuck, waiter);
    assert!(matches!(stuck, Err(CallError::TimedOut(_))));
    assert_eq!(waiter.unwrap(), Duration::from_millis(3900));
    assert_eq!(ONE_TIMED.in_flight(), 0);
}

static ONE_DROPPED: Concurrency = Concurrency::new(1);

#[tokio::test(start_paused = true)]
async fn a_call_dropped_mid_attempt_or_mid_wait_gives_its_permit_or_place_back() {
    const POLICY: Policy = policy(&ONE_DROPPED);
    let holder = tokio::spawn(POLICY.retry(|| async {
        sleep(Duration::from_secs(3600)).await;
        Ok::<_, CallError>(())
    }));
    sleep(Duration::from_millis(1)).await;
    assert_eq!(ONE_DROPPED.in_flight(), 1);
    // A waiter cut by the caller's own timeout leaves the queue.
    let waited = tokio::time::timeout(
        Duration::from_secs(1),
        POLICY.retry(|| async { Ok::<_, CallError>(()) }),
    )
    .await;
    assert!(waited.is_err());
    assert_eq!(ONE_DROPPED.waiting(), 0);
    holder.abort();
    assert!(holder.await.unwrap_err().is_cancelled());
    assert_eq!(ONE_DROPPED.in_flight(), 0);
    // The permit is free for the next call at once.
    let start = Instant::now();
    POLICY
        .retry(|| async { Ok::<_, CallError>(()) })
        .await
        .unwrap();
    assert_eq!(start.elapsed(), Duration::ZERO);
}

static ONE_PANICS: Concurrency = Concurrency::new(1);

#[tokio::test(start_paused = true)]
async fn an_attempt_that_panics_gives_its_permit_back() {
    const POLICY: Policy = policy(&ONE_PANICS);
    let panicked = tokio::spawn(POLICY.retry(|| async {
        sleep(Duration::from_millis(5)).await;
        if true {
            panic!("the tool crashed");
        }
        Ok::<_, CallError>(())
    }))
    .await;
    assert!(panicked.unwrap_err().is_panic());
    assert_eq!(ONE_PANICS.in_flight(), 0);
    let blocking = std::thread::spawn(|| {
        std::panic::catch_unwind(|| {
            POLICY.retry_blocking(|| -> Result<(), CallError> { panic!("the tool crashed") })
        })
    })
    .join()
    .unwrap();
    assert!(blocking.is_err());
    assert_eq!(ONE_PANICS.in_flight(), 0);
}

static ONE_DEADLINE: Concurrency = Concurrency::new(1);

#[tokio::test(start_paused = true)]
async fn a_wait_past_the_deadline_is_refused_at_the_deadline_and_one_that_cannot_fit_at_once() {
    const POLICY: Policy = policy(&ONE_DEADLINE).deadline(Duration::from_secs(5));
    let holder = tokio::spawn(POLICY.retry(|| async {
        sleep(Duration::from_secs(60)).await;
        Ok::<_, CallError>(())
    }));
    sleep(Duration::from_millis(1)).await;
    let start = Instant::now();
    let attempts = AtomicU32::new(0);
    let refused = POLICY
        .retry_failure(|| async {
            attempts.fetch_add(1, Ordering::SeqCst);
            Ok::<_, CallError>(())
        })
        .await
        .unwrap_err();
    // Waited what the deadline allows (less the 1 ms an attempt needs).
    assert_eq!(start.elapsed(), Duration::from_millis(4999));
    assert_eq!(attempts.load(Ordering::SeqCst), 0);
    assert_eq!(refused.stop_reason(), StopReason::Concurrency);
    assert!(matches!(refused.last(), CallError::Refused(_)));
    assert_eq!(ONE_DEADLINE.waiting(), 0);

    // No room at all (a zero deadline): refused at once, not queued.
    const NO_ROOM: Policy = policy(&ONE_DEADLINE).deadline(Duration::ZERO);
    let start = Instant::now();
    let refused = NO_ROOM
        .retry(|| async { Ok::<_, CallError>(()) })
        .await
        .unwrap_err();
    assert!(matches!(refused, CallError::Refused(_)));
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(ONE_DEADLINE.stats().stopped, 2);
    holder.abort();
}

static NOW_OR_NEVER: Concurrency = Concurrency::new(1).max_wait(Duration::ZERO);

#[tokio::test(start_paused = true)]
async fn max_wait_zero_refuses_at_once_as_a_bulkhead_does() {
    const POLICY: Policy = policy(&NOW_OR_NEVER);
    let holder = tokio::spawn(POLICY.retry(|| async {
        sleep(Duration::from_secs(60)).await;
        Ok::<_, CallError>(())
    }));
    sleep(Duration::from_millis(1)).await;
    let refused = POLICY
        .retry(|| async { Ok::<_, CallError>(()) })
        .await
        .unwrap_err();
    let CallError::Refused(refused) = refused else {
        panic!("{refused:?}")
    };
    assert_eq!(refused.reason(), StopReason::Concurrency);
    holder.abort();
}

static ORDERED: Concurrency = Concurrency::new(1);

#[tokio::test(start_paused = true)]
async fn waiters_get_permits_in_the_order_they_came() {
    const POLICY: Policy = policy(&ORDERED);
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut calls = Vec::new();
    for n in 0..10 {
        let order = Arc::clone(&order);
        calls.push(tokio::spawn(async move {
            POLICY
                .retry(|| async {
                    order.lock().unwrap().push(n);
                    sleep(Duration::from_millis(100)).await;
                    Ok::<_, CallError>(())
                })
                .await
        }));
        // Each asks a millisecond after the one before.
        sleep(Duration::from_millis(1)).await;
    }
    for call in calls {
        call.await.unwrap().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), (0..10).collect::<Vec<_>>());
}

static STREAMS: Concurrency = Concurrency::new(2);

#[tokio::test(start_paused = true)]
async fn a_stream_holds_its_permit_until_it_ends() {
    const POLICY: Policy = policy(&STREAMS);
    let opened = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now();
    let mut consumers = Vec::new();
    for _ in 0..4 {
        let opened = Arc::clone(&opened);
        consumers.push(tokio::spawn(async move {
            let items = POLICY.stream(|_| {
                opened.lock().unwrap().push(start.elapsed());
                async {
                    Ok::<_, CallError>(
                        stream::iter(0..5)
                            .then(|n| async move {
                                sleep(Duration::from_secs(1)).await;
                                Ok::<_, CallError>(n.to_string())
                            })
                            .boxed(),
                    )
                }
            });
            items.count().await
        }));
    }
    for consumer in consumers {
        assert_eq!(consumer.await.unwrap(), 5);
    }
    // Two streams at a time, each 5 s long.
    assert_eq!(
        *opened.lock().unwrap(),
        [0, 0, 5, 5].map(Duration::from_secs)
    );
    assert_eq!(STREAMS.in_flight(), 0);
}

static STREAM_DROPPED: Concurrency = Concurrency::new(1);

#[tokio::test(start_paused = true)]
async fn a_stream_dropped_mid_answer_gives_its_permit_back() {
    const POLICY: Policy = policy(&STREAM_DROPPED);
    let mut items = Box::pin(POLICY.stream(|_| async {
        Ok::<_, CallError>(stream::iter(0..).map(|n| Ok::<_, CallError>(n.to_string())))
    }));
    assert_eq!(items.next().await.unwrap().unwrap(), "0");
    assert_eq!(STREAM_DROPPED.in_flight(), 1);
    drop(items);
    assert_eq!(STREAM_DROPPED.in_flight(), 0);
}

static THREADS: Concurrency = Concurrency::new(3);

#[test]
fn blocking_calls_on_threads_hold_at_most_the_limit() {
    const POLICY: Policy = policy(&THREADS);
    let gauge = Arc::new(Gauge::default());
    let threads: Vec<_> = (0..12)
        .map(|_| {
            let gauge = Arc::clone(&gauge);
            std::thread::spawn(move || {
                POLICY.retry_blocking(|| {
                    let _in = gauge.enter();
                    std::thread::sleep(Duration::from_millis(20));
                    Ok::<_, CallError>(())
                })
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap().unwrap();
    }
    assert_eq!(gauge.most(), 3);
    assert_eq!(gauge.started.load(Ordering::SeqCst), 12);
    assert_eq!(THREADS.in_flight(), 0);
}

static BREAKER: Breaker = Breaker::new()
    .min_throughput(1)
    .open_for(Duration::from_secs(30));
static ONE_BEHIND_BREAKER: Concurrency = Concurrency::new(1);

#[tokio::test(start_paused = true)]
async fn a_call_that_waited_for_its_permit_asks_the_breaker_again() {
    const POLICY: Policy = policy(&ONE_BEHIND_BREAKER).max(1).breaker(&BREAKER);
    let failing = POLICY.retry(|| async {
        sleep(Duration::from_secs(1)).await;
        Err::<(), _>(CallError::Reset)
    });
    let attempts = AtomicU32::new(0);
    let waiter = async {
        sleep(Duration::from_millis(1)).await;
        POLICY
            .retry(|| async {
                attempts.fetch_add(1, Ordering::SeqCst);
                Ok::<_, CallError>(())
            })
            .await
    };
    let (failed, waited) = tokio::join!(failing, waiter);
    assert_eq!(failed, Err(CallError::Reset));
    // The failure opened the breaker while the second call waited.
    let Err(CallError::Refused(refused)) = waited else {
        panic!("{waited:?}")
    };
    assert_eq!(refused.reason(), StopReason::CircuitOpen);
    assert_eq!(attempts.load(Ordering::SeqCst), 0);
    assert_eq!(ONE_BEHIND_BREAKER.in_flight(), 0);
}

static HUGE: Concurrency = Concurrency::new(u32::MAX).max_wait(Duration::MAX);

#[tokio::test(start_paused = true)]
async fn hostile_limits_neither_hang_nor_overflow() {
    const POLICY: Policy = policy(&HUGE).max_retry_after(Duration::MAX);
    POLICY
        .retry(|| async { Ok::<_, CallError>(()) })
        .await
        .unwrap();
    assert_eq!(
        HUGE.get_max_wait(),
        Some(Duration::from_nanos(u64::MAX - 1))
    );
    HUGE.set_limit(0);
    assert_eq!(HUGE.limit(), 1);
    let held = tokio::spawn(POLICY.retry(|| async {
        sleep(Duration::from_secs(10)).await;
        Ok::<_, CallError>(())
    }));
    sleep(Duration::from_millis(1)).await;
    // A wait of "forever" ends when the permit comes back.
    let start = Instant::now();
    POLICY
        .retry(|| async { Ok::<_, CallError>(()) })
        .await
        .unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(9999));
    held.await.unwrap().unwrap();
}

static MACRO_LIMIT: Concurrency = Concurrency::new(2);

#[retry(max = 2, base = "10ms", concurrency = MACRO_LIMIT)]
async fn tool(gauge: &Gauge) -> Result<(), CallError> {
    let _in = gauge.enter();
    sleep(Duration::from_millis(100)).await;
    Ok(())
}

#[retry(max = 2, base = "10ms", concurrency = MACRO_LIMIT)]
fn tool_blocking(gauge: &Gauge) -> Result<(), CallError> {
    let _in = gauge.enter();
    std::thread::sleep(Duration::from_millis(5));
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_retry_attribute_names_a_concurrency_limit() {
    let gauge = Gauge::default();
    let calls: Vec<_> = (0..10).map(|_| tool(&gauge)).collect();
    for result in futures_util::future::join_all(calls).await {
        result.unwrap();
    }
    assert_eq!(gauge.most(), 2);
    let gauge = Arc::new(Gauge::default());
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let gauge = Arc::clone(&gauge);
            std::thread::spawn(move || tool_blocking(&gauge))
        })
        .collect();
    for thread in threads {
        thread.join().unwrap().unwrap();
    }
    assert!(gauge.most() <= 2);
    assert_eq!(MACRO_LIMIT.in_flight(), 0);
}

static TASKS_LIMIT: Concurrency = Concurrency::new(2);

/// Six agent tasks of three calls each (100 ms a call) started at once
/// under a limit of two: when each task's time to finish.
async fn six_tasks(in_tasks: bool) -> Vec<Duration> {
    const POLICY: Policy = policy(&TASKS_LIMIT);
    let start = Instant::now();
    let tasks: Vec<_> = (0..6)
        .map(|n| {
            let work = async move {
                for _ in 0..3 {
                    POLICY
                        .retry(|| async {
                            sleep(Duration::from_millis(100)).await;
                            Ok::<_, CallError>(())
                        })
                        .await
                        .unwrap();
                }
                start.elapsed()
            };
            tokio::spawn(async move {
                // Each asks a moment after the one before.
                sleep(Duration::from_millis(n)).await;
                if in_tasks {
                    tenacious::Task::new().run(work).await
                } else {
                    work.await
                }
            })
        })
        .collect();
    let mut done = Vec::new();
    for task in tasks {
        done.push(task.await.unwrap());
    }
    done.sort();
    done
}

#[tokio::test(start_paused = true)]
async fn under_a_full_limit_the_tasks_in_progress_finish_before_new_ones_start() {
    let ms = |done: Vec<Duration>| done.iter().map(|d| d.as_millis()).collect::<Vec<_>>();
    // Outside tasks, first come first served: every task's later calls
    // queue behind the others' first ones, and all finish near the end.
    assert_eq!(ms(six_tasks(false).await), [700, 701, 800, 801, 900, 901]);
    // As tasks, the started ones go first: two finish every 300 ms.
    assert_eq!(ms(six_tasks(true).await), [300, 301, 600, 601, 900, 901]);
    assert_eq!(TASKS_LIMIT.in_flight(), 0);
}

static KEPT: Concurrency = Concurrency::new(1);

#[tokio::test(start_paused = true)]
async fn a_tasks_permit_is_kept_for_its_next_call_in_the_same_poll_and_no_longer() {
    const POLICY: Policy = policy(&KEPT);
    let quick = || POLICY.retry(|| async { Ok::<_, CallError>(()) });
    let waiter = tokio::spawn(async move {
        sleep(Duration::from_millis(1)).await;
        POLICY
            .retry(|| async { Ok::<_, CallError>(Instant::now()) })
            .await
            .unwrap()
    });
    let start = Instant::now();
    tenacious::Task::new()
        .run(async {
            // A call waits for the one permit (from 1 ms); this task's
            // chain holds it.
            POLICY
                .retry(|| async {
                    sleep(Duration::from_millis(10)).await;
                    Ok::<_, CallError>(())
                })
                .await
                .unwrap();
            quick().await.unwrap();
            quick().await.unwrap();
            // Kept after the last call, until the poll ends.
            assert_eq!(KEPT.in_flight(), 1);
            sleep(Duration::from_millis(5)).await;
        })
        .await;
    let waited = waiter.await.unwrap();
    // The waiter went when the task's poll ended, at 10 ms, after the
    // task's three calls, not between them.
    assert_eq!(waited - start, Duration::from_millis(10));
    assert_eq!(KEPT.in_flight(), 0);
}

static REENTERED: Concurrency = Concurrency::new(1);

#[retry(max = 2, concurrency = REENTERED)]
async fn inner_call() -> Result<u32, CallError> {
    Ok(1)
}

#[retry(max = 2, concurrency = REENTERED)]
async fn outer_call() -> Result<u32, CallError> {
    // Nested under the same limit of one: it goes on this attempt's
    // permit, rather than wait for it (for `max_retry_after`, 120 s).
    Ok(inner_call().await? + 1)
}

#[retry(max = 2, concurrency = REENTERED)]
fn inner_blocking() -> Result<u32, CallError> {
    Ok(1)
}

#[retry(max = 2, concurrency = REENTERED)]
fn outer_blocking() -> Result<u32, CallError> {
    Ok(inner_blocking()? + 1)
}

#[tokio::test(start_paused = true)]
async fn a_call_nested_under_the_same_limit_goes_on_its_callers_permit() {
    let start = Instant::now();
    assert_eq!(outer_call().await, Ok(2));
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(REENTERED.in_flight(), 0);
    let blocking = std::thread::spawn(outer_blocking).join().unwrap();
    assert_eq!(blocking, Ok(2));
    assert_eq!(REENTERED.in_flight(), 0);
    assert_eq!(REENTERED.stats().stopped, 0);
}
