//! What a retried stream costs per item: 1,000,000 items read through
//! `Policy::stream` against the same source read raw, so the difference
//! of the two, over 1,000,000, is the wrapper's cost per item.
//!
//! ```sh
//! cargo bench --bench stream -- --warm-up-time 1 --measurement-time 5
//! ```
//!
//! The source is as cheap as a stream gets and the same in every arm:
//! `stream::iter(0..1_000_000).map(Ok)`, always ready. Each arm sums its
//! items in a loop of `next().await` (every item through `black_box`, so
//! the sum is not folded away), inside one `block_on` of a current-thread
//! runtime with the time driver on. The arms:
//!
//! - `raw`: the source itself;
//! - `defaults`: `Policy::new().stream(..)`, no timer;
//! - `timers`: with `first_item`, `idle` and `deadline` set. The items are
//!   always ready, so no timer is polled per item: the wrapper re-arms the
//!   idle timer, and polls its timers, only when the source returns
//!   `Pending`, which this one never does; what the timers cost here is
//!   per stream (arming them at the start and at commit);
//! - `raw (ids)` and `resume (ids)`: items that have an id (one of a
//!   table of static strs of equal length), read raw and through a policy
//!   with `resume(true)`, which copies each delivered item's id into the
//!   buffer it reuses (what a reconnect would send as `Last-Event-ID`).
//!
//! Criterion reports each arm per element (`Throughput::Elements`). After
//! its groups comes a paired comparison (as in the `overhead` bench): each
//! round reads the stream once through every arm, back to back, so the
//! wrapper's overhead per item, (wrapper − raw) / 1,000,000, is taken
//! within a round, not across criterion's measurement windows, between
//! which a shared machine's speed drifts by more than that difference.
//! `TENACIOUS_PAIRED=only` runs it alone, `TENACIOUS_PAIRED=skip`
//! criterion's groups alone.
//!
//! Instructions per item, which do not drift, are counted by
//! `scripts/instructions.sh stream-raw stream stream-timers stream-resume`.
use std::hint::black_box;
use std::pin::pin;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use futures_util::stream::{self, Stream, StreamExt};
use tenacious::stream::StreamItem;
use tenacious::{Classify, Elapsed, ErrorClass, Policy};
use tokio::runtime::Runtime;

/// Items per stream.
const ITEMS: u64 = 1_000_000;

/// The error of the source (never sent: every item is `Ok`).
#[derive(Debug)]
enum Cut {
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

/// The defaults: no timer, no resume.
const DEFAULTS: Policy = Policy::new();

/// The three stream timers, long enough never to fire.
const TIMERS: Policy = Policy::new()
    .first_item(Duration::from_secs(30))
    .idle(Duration::from_secs(30))
    .deadline(Duration::from_secs(600));

const RESUME: Policy = Policy::new().resume(true);

/// The ids of [`Event`]s: static, so the source allocates none, and of
/// equal length, so the wrapper's buffer for the last id grows once.
const IDS: [&str; 16] = [
    "evt-00", "evt-01", "evt-02", "evt-03", "evt-04", "evt-05", "evt-06", "evt-07", "evt-08",
    "evt-09", "evt-10", "evt-11", "evt-12", "evt-13", "evt-14", "evt-15",
];

/// An item with an id, as an SSE event has.
#[derive(Debug, Clone, Copy)]
struct Event(u64);

impl StreamItem for Event {
    #[allow(clippy::cast_possible_truncation)]
    fn id(&self) -> Option<&str> {
        Some(IDS[self.0 as usize % IDS.len()])
    }
}

/// What an arm's consumer adds up.
trait Value {
    fn value(&self) -> u64;
}

impl Value for u64 {
    fn value(&self) -> u64 {
        *self
    }
}

impl Value for Event {
    fn value(&self) -> u64 {
        self.0
    }
}

/// The source of every arm: `ITEMS` items, always ready, allocating
/// nothing.
fn numbers() -> impl Stream<Item = Result<u64, Cut>> + Unpin {
    stream::iter(0..black_box(ITEMS)).map(Ok)
}

/// [`numbers`], as items with ids.
fn events() -> impl Stream<Item = Result<Event, Cut>> + Unpin {
    stream::iter(0..black_box(ITEMS)).map(|n| Ok(Event(n)))
}

/// Reads `stream` to its end, summing its items.
async fn sum<S, T, X>(stream: S) -> u64
where
    S: Stream<Item = Result<T, X>>,
    T: Value,
    X: std::fmt::Debug,
{
    let mut stream = pin!(stream);
    let mut sum = 0_u64;
    while let Some(item) = stream.next().await {
        match item {
            Ok(item) => sum = sum.wrapping_add(black_box(item.value())),
            Err(error) => panic!("the source sends no error: {error:?}"),
        }
    }
    sum
}

/// The arms, each one read of the stream to its end.
async fn raw() -> u64 {
    sum(numbers()).await
}

async fn defaults() -> u64 {
    sum(DEFAULTS.stream(|_| std::future::ready(Ok(numbers())))).await
}

async fn timers() -> u64 {
    sum(TIMERS.stream(|_| std::future::ready(Ok(numbers())))).await
}

async fn raw_ids() -> u64 {
    sum(events()).await
}

async fn resume_ids() -> u64 {
    sum(RESUME.stream(|_| std::future::ready(Ok(events())))).await
}

/// The sum every arm must reach.
const SUM: u64 = ITEMS * (ITEMS - 1) / 2;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
}

fn groups(c: &mut Criterion, rt: &Runtime) {
    let mut group = c.benchmark_group("stream_1M_items");
    group.throughput(Throughput::Elements(ITEMS));
    // Each iteration reads 1,000,000 items (milliseconds): few samples do.
    group.sample_size(20);
    group.bench_function("raw", |b| b.to_async(rt).iter(raw));
    group.bench_function("defaults", |b| b.to_async(rt).iter(defaults));
    group.bench_function("timers", |b| b.to_async(rt).iter(timers));
    group.bench_function("raw (ids)", |b| b.to_async(rt).iter(raw_ids));
    group.bench_function("resume (ids)", |b| b.to_async(rt).iter(resume_ids));
    group.finish();
}

/// One arm: its name, what it is compared with, and one timed read of its
/// stream, in ns per item.
struct Arm {
    name: &'static str,
    against: usize,
    read: Box<dyn Fn(&Runtime) -> f64>,
}

fn arm<F: Future<Output = u64>>(
    name: &'static str,
    against: usize,
    read: impl Fn() -> F + 'static,
) -> Arm {
    Arm {
        name,
        against,
        read: Box::new(move |rt| {
            rt.block_on(async {
                let start = Instant::now();
                let total = read().await;
                let elapsed = start.elapsed();
                assert_eq!(black_box(total), SUM, "{name}: items lost");
                #[allow(clippy::cast_precision_loss)]
                let per_item = elapsed.as_secs_f64() * 1e9 / ITEMS as f64;
                per_item
            })
        }),
    }
}

/// The paired comparison: `rounds` rounds, each reading the stream once
/// through every arm (in a rotating order); per arm, the median time per
/// item and the median and quartiles, over the rounds, of its overhead
/// per item over its raw arm of the same round.
fn paired(rt: &Runtime, rounds: usize) {
    let arms = [
        arm("raw", 0, raw),
        arm("defaults", 0, defaults),
        arm("timers", 0, timers),
        arm("raw (ids)", 3, raw_ids),
        arm("resume (ids)", 3, resume_ids),
    ];
    let n = arms.len();
    let mut per_item = vec![Vec::with_capacity(rounds); n];
    for round in 0..rounds {
        for k in 0..n {
            let a = (k + round) % n;
            per_item[a].push((arms[a].read)(rt));
        }
    }
    let quartiles = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        let at = |q: usize| xs[(xs.len() - 1) * q / 4];
        (at(1), at(2), at(3))
    };
    println!("\npaired: {rounds} rounds of {ITEMS} items per arm\n");
    println!("| arm | median per item | overhead per item | quartiles of the overhead |");
    println!("|---|---:|---:|---|");
    for (a, arm) in arms.iter().enumerate() {
        let (_, median, _) = quartiles(per_item[a].clone());
        if a == arm.against {
            println!("| {} | {median:.2} ns | (raw) | |", arm.name);
            continue;
        }
        let overheads = per_item[a]
            .iter()
            .zip(&per_item[arm.against])
            .map(|(wrapped, raw)| wrapped - raw)
            .collect();
        let (q1, overhead, q3) = quartiles(overheads);
        println!(
            "| {} | {median:.2} ns | {overhead:+.2} ns over {} | {q1:+.2} – {q3:+.2} ns |",
            arm.name, arms[arm.against].name
        );
    }
}

fn main() {
    println!(
        "item sizes (bytes): raw Option<Result<u64, Cut>> {}, wrapped Option<Result<u64, Failure<Cut>>> {}",
        size_of::<Option<Result<u64, Cut>>>(),
        size_of::<Option<Result<u64, tenacious::Failure<Cut>>>>(),
    );
    let rt = runtime();
    let paired_mode = std::env::var("TENACIOUS_PAIRED").unwrap_or_default();
    if paired_mode != "only" {
        let mut c = Criterion::default().configure_from_args();
        groups(&mut c, &rt);
        c.final_summary();
    }
    if paired_mode != "skip" {
        paired(&rt, 30);
    }
}
