//! What the retry loop costs on top of the call it wraps, against the crates
//! users would pick instead: backon 1.x and tokio-retry2.
//!
//! ```sh
//! cargo bench --bench overhead -- --measurement-time 3 --warm-up-time 1
//! ```
//!
//! Every variant runs the same body: the local work of a tool call (check
//! the arguments, hash them into a cache key), small enough that any cost of
//! the loop shows, with its input and output behind `black_box`. The groups:
//!
//! - `happy_async`, `happy_sync`: the first attempt succeeds (also under
//!   `#[retry(stats = false)]`, to show what the statistics record costs);
//! - `two_retries_async`, `two_retries_sync`: two transient failures, then a
//!   success. `#[retry]` cannot be told to wait zero (`base` must be
//!   positive), so it and one variant of each peer wait 1 ns then 2 ns;
//!   `Policy` and the other peer variants wait zero. A nonzero wait is a
//!   real timer (tokio's, on a paused clock so nothing waits in wall time;
//!   a `nanosleep` for the sync loops), which dominates those rows.
//!
//! Async variants run on one current-thread runtime with a paused clock,
//! all inside criterion's single `block_on` per sample, so the harness is
//! the same for each. The sizes of the futures are printed first.
//!
//! tenacious has its default features here, as a user's build has them
//! (the `tracing` and `metrics` hooks are measured by the `stats` bench of
//! `feature-tests/`).
//!
//! After criterion's groups comes a paired comparison of the same
//! variants (see [`paired`]): on a shared machine the speed drifts between
//! criterion's measurement windows by more than the differences measured
//! here, so the ratios to quote are the paired ones. Set
//! `TENACIOUS_PAIRED=only` to run it alone, `TENACIOUS_PAIRED=skip` to run
//! criterion's groups alone.
use std::cell::Cell;
use std::hint::black_box;
use std::mem::size_of_val;
use std::time::{Duration, Instant};

use backon::{BlockingRetryable, Retryable};
use criterion::{BenchmarkId, Criterion};
use tenacious::retry;
use tokio::runtime::Runtime;
use tokio_retry2::Retry;
use tokio_retry2::strategy::{ExponentialFactorBackoff, FixedInterval, LinearBackoff};

mod common;
use common::{
    ARGS, POLICY, POLICY_ZERO, ToolError, backon_default, backon_two, cache_key, flaky, flaky_key,
    for_tokio_retry2, plain, plain_sync, retryable,
};

// The async fns under test. `#[retry]` keeps its defaults on the happy path
// (3 attempts, 200 ms base, full jitter).

#[retry]
async fn retried(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

/// `retried` without its statistics record.
#[retry(stats = false)]
async fn retried_unrecorded(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

/// `plain`, kept out of line: a future whose `poll` the compiler may not
/// inline into its caller, as it does `plain`'s (whose whole body is the
/// hash) but not `retried`'s (see `tenacious::docs::performance`: the retry loop makes the
/// poll too big for the inliner's threshold). What a call costs when
/// neither side is inlined, as with a tool call's real body.
struct PlainOutOfLine<'a>(&'a str);

impl Future for PlainOutOfLine<'_> {
    type Output = Result<u64, ToolError>;

    #[inline(never)]
    fn poll(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::task::Poll::Ready(cache_key(self.0))
    }
}

#[retry(max = 3, base = "1ns", jitter = "none")]
async fn flaky_retried(args: &str, failures: &Cell<u32>) -> Result<u64, ToolError> {
    flaky_key(args, failures)
}

/// `plain_sync`, never inlined (see [`PlainOutOfLine`]).
#[inline(never)]
fn plain_sync_out_of_line(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

#[retry]
fn retried_sync(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

/// `retried_sync` without its statistics record.
#[retry(stats = false)]
fn retried_unrecorded_sync(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

#[retry(max = 3, base = "1ns", jitter = "none")]
fn flaky_retried_sync(args: &str, failures: &Cell<u32>) -> Result<u64, ToolError> {
    flaky_key(args, failures)
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime")
}

fn happy_async(c: &mut Criterion, rt: &Runtime) {
    let mut group = c.benchmark_group("happy_async");
    group.bench_function("plain", |b| {
        b.to_async(rt)
            .iter(|| async { black_box(plain(black_box(ARGS)).await) });
    });
    group.bench_function("#[retry]", |b| {
        b.to_async(rt)
            .iter(|| async { black_box(retried(black_box(ARGS)).await) });
    });
    group.bench_function("#[retry(stats = false)]", |b| {
        b.to_async(rt)
            .iter(|| async { black_box(retried_unrecorded(black_box(ARGS)).await) });
    });
    group.bench_function("Policy::retry", |b| {
        b.to_async(rt).iter(|| async {
            let args = black_box(ARGS);
            black_box(POLICY.retry(|| plain(args)).await)
        });
    });
    group.bench_function("backon", |b| {
        b.to_async(rt).iter(|| async {
            let args = black_box(ARGS);
            black_box(
                (|| plain(args))
                    .retry(backon_default())
                    .when(retryable)
                    .await,
            )
        });
    });
    group.bench_function("tokio-retry2", |b| {
        b.to_async(rt).iter(|| async {
            let args = black_box(ARGS);
            let strategy = ExponentialFactorBackoff::from_millis(200, 2.0).take(2);
            black_box(
                Retry::spawn(strategy, || async { for_tokio_retry2(plain(args).await) }).await,
            )
        });
    });
    group.finish();
}

fn two_retries_async(c: &mut Criterion, rt: &Runtime) {
    let mut group = c.benchmark_group("two_retries_async");
    let failures = Cell::new(0);
    group.bench_function("hand-written loop", |b| {
        b.to_async(rt).iter(|| async {
            failures.set(2);
            let args = black_box(ARGS);
            let mut result = flaky(args, &failures).await;
            for _ in 1..3 {
                match &result {
                    Err(error) if retryable(error) => result = flaky(args, &failures).await,
                    _ => break,
                }
            }
            black_box(result)
        });
    });
    group.bench_function(BenchmarkId::new("#[retry]", "1ns"), |b| {
        b.to_async(rt).iter(|| async {
            failures.set(2);
            black_box(flaky_retried(black_box(ARGS), &failures).await)
        });
    });
    for (name, delay) in [("1ns", Duration::from_nanos(1)), ("zero", Duration::ZERO)] {
        group.bench_function(BenchmarkId::new("backon", name), |b| {
            b.to_async(rt).iter(|| async {
                failures.set(2);
                let args = black_box(ARGS);
                black_box(
                    (|| flaky(args, &failures))
                        .retry(backon_two(delay))
                        .when(retryable)
                        .await,
                )
            });
        });
    }
    group.bench_function(BenchmarkId::new("tokio-retry2", "1ns"), |b| {
        b.to_async(rt).iter(|| async {
            failures.set(2);
            let args = black_box(ARGS);
            let strategy = LinearBackoff::new(Duration::from_nanos(1)).take(2);
            black_box(
                Retry::spawn(strategy, || async {
                    for_tokio_retry2(flaky(args, &failures).await)
                })
                .await,
            )
        });
    });
    group.bench_function(BenchmarkId::new("tokio-retry2", "zero"), |b| {
        b.to_async(rt).iter(|| async {
            failures.set(2);
            let args = black_box(ARGS);
            let strategy = FixedInterval::new(Duration::ZERO).take(2);
            black_box(
                Retry::spawn(strategy, || async {
                    for_tokio_retry2(flaky(args, &failures).await)
                })
                .await,
            )
        });
    });
    group.bench_function(BenchmarkId::new("Policy::retry", "zero"), |b| {
        b.to_async(rt).iter(|| async {
            failures.set(2);
            let args = black_box(ARGS);
            black_box(POLICY_ZERO.retry(|| flaky(args, &failures)).await)
        });
    });
    group.finish();
}

fn happy_sync(c: &mut Criterion) {
    let mut group = c.benchmark_group("happy_sync");
    group.bench_function("plain", |b| {
        b.iter(|| plain_sync(black_box(ARGS)));
    });
    group.bench_function("#[retry]", |b| {
        b.iter(|| retried_sync(black_box(ARGS)));
    });
    group.bench_function("#[retry(stats = false)]", |b| {
        b.iter(|| retried_unrecorded_sync(black_box(ARGS)));
    });
    group.bench_function("Policy::retry_blocking", |b| {
        b.iter(|| {
            let args = black_box(ARGS);
            POLICY.retry_blocking(|| plain_sync(args))
        });
    });
    group.bench_function("backon", |b| {
        b.iter(|| {
            let args = black_box(ARGS);
            (|| plain_sync(args))
                .retry(backon_default())
                .when(retryable)
                .call()
        });
    });
    group.finish();
}

fn two_retries_sync(c: &mut Criterion) {
    let mut group = c.benchmark_group("two_retries_sync");
    let failures = Cell::new(0);
    group.bench_function("hand-written loop", |b| {
        b.iter(|| {
            failures.set(2);
            let args = black_box(ARGS);
            let mut result = flaky_key(args, &failures);
            for _ in 1..3 {
                match &result {
                    Err(error) if retryable(error) => result = flaky_key(args, &failures),
                    _ => break,
                }
            }
            result
        });
    });
    group.bench_function(BenchmarkId::new("#[retry]", "1ns"), |b| {
        b.iter(|| {
            failures.set(2);
            flaky_retried_sync(black_box(ARGS), &failures)
        });
    });
    for (name, delay) in [("1ns", Duration::from_nanos(1)), ("zero", Duration::ZERO)] {
        group.bench_function(BenchmarkId::new("backon", name), |b| {
            b.iter(|| {
                failures.set(2);
                let args = black_box(ARGS);
                (|| flaky_key(args, &failures))
                    .retry(backon_two(delay))
                    .when(retryable)
                    .call()
            });
        });
    }
    group.bench_function(BenchmarkId::new("Policy::retry_blocking", "zero"), |b| {
        b.iter(|| {
            failures.set(2);
            let args = black_box(ARGS);
            POLICY_ZERO.retry_blocking(|| flaky_key(args, &failures))
        });
    });
    group.finish();
}

/// The size of each variant's future, unpolled: what a caller stores
/// inline wherever it awaits, spawns or boxes the call.
fn print_future_sizes() {
    let args = ARGS;
    let failures = Cell::new(0);
    let sizes = [
        ("plain async fn", size_of_val(&plain(args))),
        ("#[retry]", size_of_val(&retried(args))),
        ("Policy::retry", size_of_val(&POLICY.retry(|| plain(args)))),
        (
            "backon",
            size_of_val(&(|| plain(args)).retry(backon_default()).when(retryable)),
        ),
        (
            "tokio-retry2",
            size_of_val(&Retry::spawn(
                ExponentialFactorBackoff::from_millis(200, 2.0).take(2),
                || async { for_tokio_retry2(plain(args).await) },
            )),
        ),
        (
            "#[retry] (two-retry fn)",
            size_of_val(&flaky_retried(args, &failures)),
        ),
        ("tokio::time::Sleep", size_of::<tokio::time::Sleep>()),
    ];
    println!("future sizes (bytes, unpolled):");
    for (name, size) in sizes {
        println!("  {name:<26} {size:>5}");
    }
}

/// Runs `iters` calls of one variant and returns how long they took.
type Timed<'a> = Box<dyn FnMut(u64) -> Duration + 'a>;

/// Times `iters` awaited calls of `call` inside one `block_on`.
fn timed_async<'a, F: Future>(rt: &'a Runtime, mut call: impl FnMut() -> F + 'a) -> Timed<'a> {
    Box::new(move |iters| {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..iters {
                black_box(call().await);
            }
            start.elapsed()
        })
    })
}

/// Times `iters` calls of `call`.
fn timed_sync<'a, T>(mut call: impl FnMut() -> T + 'a) -> Timed<'a> {
    Box::new(move |iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(call());
        }
        start.elapsed()
    })
}

/// The paired comparison: `blocks` rounds, each timing `iters` calls of
/// every variant back to back (in a rotating order), so each variant's
/// time is compared with the first variant's from the same round. The
/// machine's speed drifts between criterion's measurement windows (the
/// same code can read 30 % apart from one window to the next on a shared
/// virtual machine); a round lasts milliseconds, so a ratio within one is
/// not moved by that drift. Prints, per variant, the median time per call
/// and the median and quartiles of its ratio to the first variant.
fn paired(title: &str, blocks: usize, iters: u64, variants: &mut [(&str, Timed<'_>)]) {
    let n = variants.len();
    let mut per_call = vec![Vec::with_capacity(blocks); n];
    for round in 0..blocks {
        for k in 0..n {
            let v = (k + round) % n;
            let elapsed = (variants[v].1)(iters);
            #[allow(clippy::cast_precision_loss)]
            per_call[v].push(elapsed.as_secs_f64() * 1e9 / iters as f64);
        }
    }
    let quartiles = |mut xs: Vec<f64>| {
        xs.sort_by(f64::total_cmp);
        let at = |q: usize| xs[(xs.len() - 1) * q / 4];
        (at(1), at(2), at(3))
    };
    println!("\n{title} ({blocks} rounds of {iters} calls each)\n");
    println!(
        "| variant | median per call | ratio to {} | quartiles of the ratio |",
        variants[0].0
    );
    println!("|---|---:|---:|---|");
    for v in 0..n {
        let ratios = per_call[v]
            .iter()
            .zip(&per_call[0])
            .map(|(time, first)| time / first)
            .collect();
        let (_, median, _) = quartiles(per_call[v].clone());
        let (q1, ratio, q3) = quartiles(ratios);
        println!(
            "| {} | {} | {ratio:.3} | {q1:.3} – {q3:.3} |",
            variants[v].0,
            format_ns(median)
        );
    }
}

fn format_ns(ns: f64) -> String {
    if ns >= 1000.0 {
        format!("{:.2} µs", ns / 1000.0)
    } else {
        format!("{ns:.1} ns")
    }
}

/// Every variant of the criterion groups, compared in pairs (see
/// [`paired`]).
fn paired_summary(rt: &Runtime) {
    let failures = Cell::new(0);
    // Each two-retry call starts with two failures to come.
    let fail_twice = |failures: &Cell<u32>| failures.set(2);
    paired(
        "happy path, async",
        200,
        10_000,
        &mut [
            ("plain", timed_async(rt, || plain(black_box(ARGS)))),
            (
                "plain, out of line",
                timed_async(rt, || PlainOutOfLine(black_box(ARGS))),
            ),
            ("#[retry]", timed_async(rt, || retried(black_box(ARGS)))),
            (
                "#[retry(stats = false)]",
                timed_async(rt, || retried_unrecorded(black_box(ARGS))),
            ),
            (
                "Policy::retry",
                timed_async(rt, || POLICY.retry(|| plain(black_box(ARGS)))),
            ),
            (
                "backon",
                timed_async(rt, || {
                    (|| plain(black_box(ARGS)))
                        .retry(backon_default())
                        .when(retryable)
                }),
            ),
            (
                "tokio-retry2",
                timed_async(rt, || {
                    let strategy = ExponentialFactorBackoff::from_millis(200, 2.0).take(2);
                    Retry::spawn(strategy, || async {
                        for_tokio_retry2(plain(black_box(ARGS)).await)
                    })
                }),
            ),
        ],
    );
    paired(
        "happy path, sync",
        200,
        10_000,
        &mut [
            ("plain", timed_sync(|| plain_sync(black_box(ARGS)))),
            (
                "plain, out of line",
                timed_sync(|| plain_sync_out_of_line(black_box(ARGS))),
            ),
            ("#[retry]", timed_sync(|| retried_sync(black_box(ARGS)))),
            (
                "#[retry(stats = false)]",
                timed_sync(|| retried_unrecorded_sync(black_box(ARGS))),
            ),
            (
                "Policy::retry_blocking",
                timed_sync(|| POLICY.retry_blocking(|| plain_sync(black_box(ARGS)))),
            ),
            (
                "backon",
                timed_sync(|| {
                    (|| plain_sync(black_box(ARGS)))
                        .retry(backon_default())
                        .when(retryable)
                        .call()
                }),
            ),
        ],
    );
    let failures = &failures;
    paired(
        "two retries, async",
        100,
        1_000,
        &mut [
            (
                "hand-written loop, no wait",
                timed_async(rt, || async {
                    fail_twice(failures);
                    let args = black_box(ARGS);
                    let mut result = flaky(args, failures).await;
                    for _ in 1..3 {
                        match &result {
                            Err(error) if retryable(error) => result = flaky(args, failures).await,
                            _ => break,
                        }
                    }
                    result
                }),
            ),
            (
                "#[retry], 1 ns",
                timed_async(rt, || {
                    fail_twice(failures);
                    flaky_retried(black_box(ARGS), failures)
                }),
            ),
            (
                "backon, 1 ns",
                timed_async(rt, || {
                    fail_twice(failures);
                    (|| flaky(black_box(ARGS), failures))
                        .retry(backon_two(Duration::from_nanos(1)))
                        .when(retryable)
                }),
            ),
            (
                "tokio-retry2, 1 ns",
                timed_async(rt, || {
                    fail_twice(failures);
                    let strategy = LinearBackoff::new(Duration::from_nanos(1)).take(2);
                    Retry::spawn(strategy, || async {
                        for_tokio_retry2(flaky(black_box(ARGS), failures).await)
                    })
                }),
            ),
            (
                "Policy::retry, zero",
                timed_async(rt, || {
                    fail_twice(failures);
                    POLICY_ZERO.retry(|| flaky(black_box(ARGS), failures))
                }),
            ),
            (
                "backon, zero",
                timed_async(rt, || {
                    fail_twice(failures);
                    (|| flaky(black_box(ARGS), failures))
                        .retry(backon_two(Duration::ZERO))
                        .when(retryable)
                }),
            ),
            (
                "tokio-retry2, zero",
                timed_async(rt, || {
                    fail_twice(failures);
                    let strategy = FixedInterval::new(Duration::ZERO).take(2);
                    Retry::spawn(strategy, || async {
                        for_tokio_retry2(flaky(black_box(ARGS), failures).await)
                    })
                }),
            ),
        ],
    );
    paired(
        "two retries, sync",
        50,
        100,
        &mut [
            (
                "hand-written loop, no wait",
                timed_sync(|| {
                    fail_twice(failures);
                    let args = black_box(ARGS);
                    let mut result = flaky_key(args, failures);
                    for _ in 1..3 {
                        match &result {
                            Err(error) if retryable(error) => result = flaky_key(args, failures),
                            _ => break,
                        }
                    }
                    result
                }),
            ),
            (
                "#[retry], 1 ns",
                timed_sync(|| {
                    fail_twice(failures);
                    flaky_retried_sync(black_box(ARGS), failures)
                }),
            ),
            (
                "backon, 1 ns",
                timed_sync(|| {
                    fail_twice(failures);
                    (|| flaky_key(black_box(ARGS), failures))
                        .retry(backon_two(Duration::from_nanos(1)))
                        .when(retryable)
                        .call()
                }),
            ),
            (
                "Policy::retry_blocking, zero",
                timed_sync(|| {
                    fail_twice(failures);
                    POLICY_ZERO.retry_blocking(|| flaky_key(black_box(ARGS), failures))
                }),
            ),
            (
                "backon, zero",
                timed_sync(|| {
                    fail_twice(failures);
                    (|| flaky_key(black_box(ARGS), failures))
                        .retry(backon_two(Duration::ZERO))
                        .when(retryable)
                        .call()
                }),
            ),
        ],
    );
}

fn main() {
    print_future_sizes();
    let rt = runtime();
    // `TENACIOUS_PAIRED=only` runs the paired comparison alone, `=skip`
    // criterion's groups alone.
    let paired_mode = std::env::var("TENACIOUS_PAIRED").unwrap_or_default();
    if paired_mode != "only" {
        let mut c = Criterion::default().configure_from_args();
        happy_async(&mut c, &rt);
        two_retries_async(&mut c, &rt);
        happy_sync(&mut c);
        two_retries_sync(&mut c);
        c.final_summary();
    }
    if paired_mode != "skip" {
        paired_summary(&rt);
    }
}
