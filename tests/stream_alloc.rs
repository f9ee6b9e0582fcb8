//! A retried stream allocates nothing per item: a counting global
//! allocator sees as many heap allocations for a stream of 10 items read
//! through `Policy::stream` as for one of 10,000, from sources that
//! allocate nothing themselves (`stream::iter(range).map(Ok)`, and one
//! that also returns `Pending` every 100 items, so the timers are polled
//! and the idle timer re-armed); with the timers set or not; and with
//! `resume(true)` and items that have ids, from a table of static strs of
//! equal length, which the wrapper copies into one buffer it reuses (so
//! the buffer grows once, whatever the number of items), a stream read to
//! its end as one cut after its items and resumed from its last id.
//!
//! The counts are taken around the whole stream (made, read, dropped) on a
//! current-thread runtime with a paused clock, as `tests/alloc.rs` counts
//! an async call; each case runs once first, to warm up what allocates on
//! first use (tokio's timer, the jitter RNG). A control checks the counter
//! sees, through the wrapper, a source that allocates per item.
//!
//! ```sh
//! cargo test --test stream_alloc
//! ```
use std::cell::Cell;
use std::hint::black_box;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::stream::{self, Stream, StreamExt};
use tenacious::stream::{ResumePoint, StreamItem};
use tenacious::{Classify, Elapsed, ErrorClass, Policy};
use tenacious_alloc_counter::{Counting, allocations_awaiting};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[derive(Debug)]
enum Cut {
    Reset,
    Stalled,
}

impl Classify for Cut {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<Elapsed> for Cut {
    fn from(_: Elapsed) -> Self {
        Cut::Stalled
    }
}

const DEFAULTS: Policy = Policy::new();

/// The three stream timers, long enough never to fire.
const TIMERS: Policy = Policy::new()
    .first_item(Duration::from_secs(30))
    .idle(Duration::from_secs(30))
    .deadline(Duration::from_secs(600));

const RESUME: Policy = Policy::new().resume(true);

const RESUME_TIMERS: Policy = TIMERS.resume(true);

/// The ids of [`Event`]s: static, so the source allocates none, and of
/// equal length, so the wrapper's buffer for the last id grows once.
const IDS: [&str; 16] = [
    "evt-00", "evt-01", "evt-02", "evt-03", "evt-04", "evt-05", "evt-06", "evt-07", "evt-08",
    "evt-09", "evt-10", "evt-11", "evt-12", "evt-13", "evt-14", "evt-15",
];

/// An item with an id, as an SSE event has.
#[derive(Debug)]
struct Event(u64);

fn id_of(n: u64) -> &'static str {
    IDS[usize::try_from(n % 16).unwrap_or_default()]
}

impl StreamItem for Event {
    fn id(&self) -> Option<&str> {
        Some(id_of(self.0))
    }
}

impl From<Event> for u64 {
    fn from(event: Event) -> Self {
        event.0
    }
}

/// The numbers `0..n`, always ready.
fn ready(n: u64) -> impl Stream<Item = Result<u64, Cut>> {
    stream::iter(0..n).map(Ok)
}

/// The numbers `0..n`, returning `Pending` (and waking itself) before
/// every hundredth.
fn yielding(n: u64) -> impl Stream<Item = Result<u64, Cut>> {
    struct Yielding {
        next: u64,
        end: u64,
        yielded: bool,
    }
    impl Stream for Yielding {
        type Item = Result<u64, Cut>;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            if self.next == self.end {
                return Poll::Ready(None);
            }
            if self.next.is_multiple_of(100) && !self.yielded {
                self.yielded = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.yielded = false;
            self.next += 1;
            Poll::Ready(Some(Ok(self.next - 1)))
        }
    }
    Yielding {
        next: 0,
        end: n,
        yielded: false,
    }
}

/// The numbers `0..n` as [`Event`]s, always ready.
fn events(n: u64) -> impl Stream<Item = Result<Event, Cut>> {
    stream::iter(0..n).map(|n| Ok(Event(n)))
}

/// Reads `stream` to its end: the sum of its items.
async fn sum<S, T, X>(stream: S) -> u64
where
    S: Stream<Item = Result<T, X>>,
    T: Into<u64>,
    X: std::fmt::Debug,
{
    let mut stream = pin!(stream);
    let mut sum = 0;
    while let Some(item) = stream.next().await {
        sum += item.expect("the source sends no error").into();
    }
    sum
}

/// The heap allocations of a stream of `n` items of `source` through
/// `policy` (made, read to its end, dropped); checks every item came.
async fn through<S, T>(policy: &Policy, n: u64, source: impl Fn(u64) -> S) -> u64
where
    S: Stream<Item = Result<T, Cut>>,
    T: StreamItem + Into<u64>,
{
    let (total, allocations) = allocations_awaiting(async {
        sum(policy.stream(|_| std::future::ready(Ok(source(n))))).await
    })
    .await;
    assert_eq!(total, n * (n - 1) / 2, "items lost");
    allocations
}

/// The allocations of a stream of 10 items and of one of 10,000, `source`
/// through `policy` (after one stream to warm up).
async fn ten_and_ten_thousand<S, T>(policy: &Policy, source: impl Fn(u64) -> S) -> (u64, u64)
where
    S: Stream<Item = Result<T, Cut>>,
    T: StreamItem + Into<u64>,
{
    through(policy, 10, &source).await;
    (
        through(policy, 10, &source).await,
        through(policy, 10_000, &source).await,
    )
}

/// Shown with `--nocapture`.
fn report(case: &str, ten: u64, many: u64) {
    println!("{case}: {ten} allocations for 10 items, {many} for 10,000");
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

#[test]
fn a_retried_stream_allocates_nothing_per_item() {
    runtime().block_on(async {
        // The premise: the sources allocate nothing.
        for n in [10, 10_000] {
            let (_, raw) = allocations_awaiting(sum(ready(n))).await;
            assert_eq!(raw, 0, "the ready source of {n} items allocated");
            let (_, raw) = allocations_awaiting(sum(yielding(n))).await;
            assert_eq!(raw, 0, "the yielding source of {n} items allocated");
        }
        for (name, policy) in [("defaults", &DEFAULTS), ("timers", &TIMERS)] {
            let (ten, many) = ten_and_ten_thousand(policy, ready).await;
            report(&format!("{name}, ready source"), ten, many);
            assert_eq!(
                ten, many,
                "{name}, ready source: {ten} allocations for 10 items, {many} for 10,000"
            );
            let (ten, many) = ten_and_ten_thousand(policy, yielding).await;
            report(&format!("{name}, yielding source"), ten, many);
            assert_eq!(
                ten, many,
                "{name}, yielding source: {ten} allocations for 10 items, {many} for 10,000"
            );
        }
    });
}

#[test]
fn resume_copies_ids_into_one_buffer() {
    runtime().block_on(async {
        for n in [10, 10_000] {
            let (_, raw) = allocations_awaiting(sum(events(n))).await;
            assert_eq!(raw, 0, "the source of {n} events allocated");
        }
        for (name, policy) in [("resume", &RESUME), ("resume with timers", &RESUME_TIMERS)] {
            let (ten, many) = ten_and_ten_thousand(policy, events).await;
            report(name, ten, many);
            assert_eq!(
                ten, many,
                "{name}: {ten} allocations for 10 items, {many} for 10,000"
            );
        }
    });
}

/// The allocations of a stream through `RESUME` whose first attempt sends
/// the events `0..n` then fails, and whose second, opened from the resume
/// point, sends the last one again (dropped by its id), then `n..2n`.
async fn cut_and_resumed(n: u64) -> u64 {
    // Where the second attempt's resume point said to start.
    let resumed_at = Cell::new(None);
    let attempt = |resume: &ResumePoint| {
        let first = resume.is_start();
        if !first {
            // Compared here, not kept: a copy would be the test's allocation.
            let at_last = resume.last_event_id() == Some(id_of(n - 1));
            resumed_at.set(Some((resume.delivered(), at_last)));
        }
        let (from, cut) = if first {
            (0, Some(Err(Cut::Reset)))
        } else {
            (n - 1, None)
        };
        let source = stream::iter(from..if first { n } else { 2 * n })
            .map(|i| Ok(Event(i)))
            .chain(stream::iter(cut));
        std::future::ready(Ok(source))
    };
    let (total, allocations) =
        allocations_awaiting(async { sum(RESUME.stream(attempt)).await }).await;
    assert_eq!(total, 2 * n * (2 * n - 1) / 2, "items lost or repeated");
    assert_eq!(
        resumed_at.get(),
        Some((n, true)),
        "not resumed after the {n} items, at the last id"
    );
    allocations
}

#[test]
fn a_resumed_stream_allocates_nothing_per_item() {
    runtime().block_on(async {
        cut_and_resumed(10).await;
        let ten = cut_and_resumed(10).await;
        let many = cut_and_resumed(10_000).await;
        report("cut and resumed (items per attempt)", ten, many);
        assert_eq!(
            ten, many,
            "cut and resumed: {ten} allocations for 2 x 10 items, {many} for 2 x 10,000"
        );
    });
}

/// The control: a source that allocates an item's worth per item is seen
/// through the wrapper, on this thread and across its awaits.
#[test]
fn the_counter_sees_a_source_that_allocates_per_item() {
    let boxed = |n: u64| stream::iter(0..n).map(|i| Ok(*black_box(Box::new(i))));
    runtime().block_on(async {
        let (ten, many) = ten_and_ten_thousand(&DEFAULTS, boxed).await;
        report("control, a box per item", ten, many);
        assert_eq!(
            many - ten,
            10_000 - 10,
            "{ten} for 10 items, {many} for 10,000"
        );
    });
}
