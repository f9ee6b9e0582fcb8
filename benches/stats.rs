//! What per-fn statistics cost on the happy path: the same `#[retry]` fn
//! with its record (the default) and with `stats = false`, against the
//! plain fn it wraps, async and sync.
//!
//! ```sh
//! cargo bench --bench stats
//! ```
//!
//! The body is the local work of a tool call (check the arguments, hash
//! them into a cache key), with its input and output behind `black_box`.
//! Each async call is polled once with a no-op waker: its first attempt
//! succeeds, so it completes at once, and no executor is measured.
//!
//! Here tenacious has its default features. The same file is also the
//! `stats` bench of `feature-tests/`, built with `tracing` and `metrics` on
//! (no subscriber, no recorder), whose `stats on` rows add the cost of
//! those hooks finding nobody listening:
//!
//! ```sh
//! cargo bench -p tenacious-feature-tests --bench stats
//! ```
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use criterion::Criterion;
use tenacious::{Classify, retry};

/// A tool call's arguments, as a model would send them.
const ARGS: &str = r#"{"query":"rust retry","limit":10}"#;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(invalid)]
    BadArguments,
}

/// The call's own work: reject empty arguments, FNV-1a hash the rest.
#[inline]
fn cache_key(args: &str) -> Result<u64, ToolError> {
    match args.len() {
        0 => Err(ToolError::BadArguments),
        1 => Err(ToolError::Timeout),
        _ => Ok(args.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })),
    }
}

async fn plain_async(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

#[retry(stats = false)]
async fn off_async(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

#[retry]
async fn on_async(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

fn plain_sync(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

#[retry(stats = false)]
fn off_sync(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

#[retry]
fn on_sync(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

/// Polls `future` once; it must be ready.
fn ready<F: Future>(future: F) -> F::Output {
    let mut context = Context::from_waker(Waker::noop());
    match pin!(future).poll(&mut context) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a happy-path call must complete at its first poll"),
    }
}

fn happy_path(c: &mut Criterion) {
    let mut group = c.benchmark_group("happy_async");
    group.bench_function("plain fn", |b| {
        b.iter(|| ready(plain_async(black_box(ARGS))));
    });
    group.bench_function("retry, stats off", |b| {
        b.iter(|| ready(off_async(black_box(ARGS))));
    });
    group.bench_function("retry, stats on", |b| {
        b.iter(|| ready(on_async(black_box(ARGS))));
    });
    group.finish();

    let mut group = c.benchmark_group("happy_sync");
    group.bench_function("plain fn", |b| {
        b.iter(|| plain_sync(black_box(ARGS)));
    });
    group.bench_function("retry, stats off", |b| {
        b.iter(|| off_sync(black_box(ARGS)));
    });
    group.bench_function("retry, stats on", |b| {
        b.iter(|| on_sync(black_box(ARGS)));
    });
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    happy_path(&mut criterion);
    criterion.final_summary();
}
