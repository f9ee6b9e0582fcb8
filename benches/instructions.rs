//! The happy path counted in instructions rather than timed: a figure that
//! does not drift with the machine's speed, as the timings of `overhead`
//! do on a shared virtual machine.
//!
//! This binary makes `TENACIOUS_CALLS` calls (default 10 000) of one
//! variant, named by `TENACIOUS_VARIANT`, and nothing else worth counting.
//! `scripts/instructions.sh` runs it under valgrind's callgrind with two
//! call counts and divides the difference of the totals by the difference
//! of the calls, which cancels the start-up: what is left is the
//! instructions of one call and of the loop around it. Run without a
//! variant it lists them.
//!
//! The body and the fns under test are the `overhead` bench's (in
//! `benches/common`): check the arguments, FNV-1a hash them, about 150
//! instructions. The `-two` variants fail twice with a
//! transient error, then succeed, waiting zero between attempts (`Policy`,
//! backon, tokio-retry2, or a loop written by hand): the retry path
//! without a timer, whose cost a timer would bury. Each variant is called from one place,
//! so the compiler may inline a `#[retry]` fn's poll into it (LLVM's
//! threshold is lifted for a function with a single caller), unlike in
//! `overhead`, where the same fns are called from criterion's groups and
//! from the paired comparison.
//!
//! The `-named` variants are `retry` and `retry-sync` bound by name to a
//! policy of the defaults loaded from config (`policy = "bench"`):
//! `retry-named-missing` calls the same fn with nothing loaded, so every
//! call looks for the name and runs the fallback.
//!
//! The `-const` variants are `retry` and `retry-sync` from a `const`
//! policy of the defaults (`policy = DEFAULTS`), which the macro cannot
//! read: their loop serves whatever the policy holds (guards, timeout,
//! deadline), the checks folded for a `const`.
//!
//! The `stream` variants read one stream of `TENACIOUS_CALLS` items, so
//! the script's figure for them is instructions per item: the `stream`
//! bench's source (`stream::iter(0..n).map(Ok)`, always ready) read raw
//! (`stream-raw`), through `Policy::stream` with the defaults (`stream`),
//! with `first_item`, `idle` and `deadline` set (`stream-timers`), and, for
//! items with ids, raw (`stream-raw-ids`) and with `resume(true)`
//! (`stream-resume`), each summed in a loop of `next().await`.
//!
//! The `tower` variants call the plain fn as a `tower::Service`
//! (`service_fn`), through `oneshot`: as it is (`tower-plain`), and under
//! `RetryLayer` with the default policy, no response check and no key
//! (`tower`), the adapter's own cost on the happy path.
use std::cell::Cell;
use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::time::Duration;

use backon::{BlockingRetryable, Retryable};
use futures_util::stream::{self, Stream, StreamExt};
use tenacious::stream::StreamItem;
use tenacious::tower::{NoCheck, RetryLayer};
use tenacious::{Elapsed, Policy, retry};
use tokio_retry2::Retry;
use tokio_retry2::strategy::{ExponentialFactorBackoff, FixedInterval};
use tower::{Layer, ServiceExt, service_fn};

mod common;
use common::{
    ARGS, POLICY, POLICY_ZERO, ToolError, backon_default, backon_two, cache_key, flaky, flaky_key,
    for_tokio_retry2, plain, plain_sync, retryable,
};

// The fns under test, here beside their callers (see `common`).

#[retry]
async fn retried(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

/// `retried` without its statistics record.
#[retry(stats = false)]
async fn retried_unrecorded(args: &str) -> Result<u64, ToolError> {
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

/// `retried` bound by name to the policy `bench` of the loaded set
/// (`policy = "name"`): the defaults, as `retried`'s.
#[retry(policy = "bench")]
async fn retried_named(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

#[retry(policy = "bench")]
fn retried_named_sync(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

/// The defaults as a `const`, for the `-const` variants: `#[retry]` from a
/// named policy, whose fields the macro cannot read.
const DEFAULTS: Policy = Policy::new();

#[retry(policy = DEFAULTS)]
async fn retried_const(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

#[retry(policy = DEFAULTS)]
fn retried_const_sync(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

/// Loads the set the `-named` variants bind to: `bench`, the defaults.
fn load_bench_policy() {
    let set = tenacious::config::Policies::from_toml_str("[policies.bench]\n")
        .expect("the bench's policy");
    tenacious::config::load(set).expect("loaded once");
}

/// Makes `calls` calls on a current-thread runtime with a paused clock, as
/// the `overhead` bench does.
fn run_async<F: Future>(calls: u64, mut call: impl FnMut() -> F) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    rt.block_on(async {
        for _ in 0..calls {
            black_box(call().await);
        }
    });
}

fn run_sync<T>(calls: u64, mut call: impl FnMut() -> T) {
    for _ in 0..calls {
        black_box(call());
    }
}

// The `stream` variants (see the `stream` bench, whose arms these are).

impl From<Elapsed> for ToolError {
    fn from(_: Elapsed) -> Self {
        ToolError::Timeout
    }
}

const STREAM_TIMERS: Policy = Policy::new()
    .first_item(Duration::from_secs(30))
    .idle(Duration::from_secs(30))
    .deadline(Duration::from_secs(600));

const STREAM_RESUME: Policy = Policy::new().resume(true);

/// Static ids of equal length: the source allocates none.
const IDS: [&str; 16] = [
    "evt-00", "evt-01", "evt-02", "evt-03", "evt-04", "evt-05", "evt-06", "evt-07", "evt-08",
    "evt-09", "evt-10", "evt-11", "evt-12", "evt-13", "evt-14", "evt-15",
];

/// An item with an id, as an SSE event has.
struct Event(u64);

impl StreamItem for Event {
    #[allow(clippy::cast_possible_truncation)]
    fn id(&self) -> Option<&str> {
        Some(IDS[self.0 as usize % IDS.len()])
    }
}

impl From<Event> for u64 {
    fn from(event: Event) -> Self {
        event.0
    }
}

/// `items` numbers, always ready.
fn numbers(items: u64) -> impl Stream<Item = Result<u64, ToolError>> + Unpin {
    stream::iter(0..items).map(Ok)
}

/// [`numbers`], as items with ids.
fn events(items: u64) -> impl Stream<Item = Result<Event, ToolError>> + Unpin {
    stream::iter(0..items).map(|n| Ok(Event(n)))
}

/// Reads one stream, `open`ed on a current-thread runtime, to its end,
/// summing its items.
fn run_stream<S, T, X>(open: impl FnOnce() -> S)
where
    S: Stream<Item = Result<T, X>>,
    T: Into<u64>,
    X: std::fmt::Debug,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    rt.block_on(async {
        let mut stream = pin!(open());
        let mut sum = 0_u64;
        while let Some(item) = stream.next().await {
            match item {
                Ok(item) => sum = sum.wrapping_add(black_box(item.into())),
                Err(error) => panic!("the source sends no error: {error:?}"),
            }
        }
        black_box(sum);
    });
}

const VARIANTS: [&str; 33] = [
    "plain",
    "retry",
    "retry-unrecorded",
    "retry-named",
    "retry-named-missing",
    "retry-const",
    "policy",
    "backon",
    "tokio-retry2",
    "plain-sync",
    "retry-sync",
    "retry-unrecorded-sync",
    "retry-named-sync",
    "retry-const-sync",
    "policy-sync",
    "backon-sync",
    "loop-two",
    "policy-two",
    "backon-two",
    "tokio-retry2-two",
    "loop-two-sync",
    "policy-two-sync",
    "backon-two-sync",
    "stream-raw",
    "stream",
    "stream-timers",
    "stream-raw-ids",
    "stream-resume",
    "tower-plain",
    "tower",
    "route",
    "policy-failure",
    "policy-concurrency",
];

fn main() {
    let calls = std::env::var("TENACIOUS_CALLS")
        .ok()
        .map_or(10_000, |calls| {
            calls.parse().expect("TENACIOUS_CALLS: a count")
        });
    let Ok(variant) = std::env::var("TENACIOUS_VARIANT") else {
        // `cargo bench` runs every bench target: list the variants and go.
        println!(
            "instructions: set TENACIOUS_VARIANT to one of {VARIANTS:?} (see scripts/instructions.sh)"
        );
        return;
    };
    // The failures left before a `-two` variant's call succeeds.
    let failures = &Cell::new(0);
    match variant.as_str() {
        "plain" => run_async(calls, || plain(black_box(ARGS))),
        "retry" => run_async(calls, || retried(black_box(ARGS))),
        "retry-unrecorded" => run_async(calls, || retried_unrecorded(black_box(ARGS))),
        "retry-named" => {
            load_bench_policy();
            run_async(calls, || retried_named(black_box(ARGS)));
        }
        // Nothing loaded: every call looks for the name and runs the fallback.
        "retry-named-missing" => run_async(calls, || retried_named(black_box(ARGS))),
        "retry-const" => run_async(calls, || retried_const(black_box(ARGS))),
        "policy" => run_async(calls, || {
            let args = black_box(ARGS);
            POLICY.retry(move || plain(args))
        }),
        "policy-concurrency" => {
            // The `policy` call holding a permit of a concurrency limit
            // that always has one free: what the guard adds to an attempt.
            static LIMIT: tenacious::Concurrency = tenacious::Concurrency::new(64);
            const LIMITED: tenacious::Policy = POLICY.concurrency(&LIMIT);
            run_async(calls, || {
                let args = black_box(ARGS);
                LIMITED.retry(move || plain(args))
            });
        }
        "policy-failure" => {
            // What a route's target runs: `retry_failure`, with a record.
            static RECORD: tenacious::stats::CallStats =
                tenacious::stats::CallStats::new("bench-failure");
            const COUNTED: tenacious::Policy = POLICY.stats(&RECORD);
            run_async(calls, || {
                let args = black_box(ARGS);
                COUNTED.retry_failure(move || plain(args))
            });
        }
        "route" => {
            // One target, the same policy: what the route adds to a call.
            let route = tenacious::route::Route::builder("bench")
                .target(tenacious::route::Target::new("bench-target", ()).policy(POLICY))
                .build()
                .expect("a route of one target");
            let route = &route;
            run_async(calls, move || {
                let args = black_box(ARGS);
                route.call(move |_| plain(args))
            });
        }
        "backon" => run_async(calls, || {
            let args = black_box(ARGS);
            (move || plain(args))
                .retry(backon_default())
                .when(retryable)
        }),
        "tokio-retry2" => run_async(calls, || {
            let args = black_box(ARGS);
            let strategy = ExponentialFactorBackoff::from_millis(200, 2.0).take(2);
            Retry::spawn(strategy, move || async move {
                for_tokio_retry2(plain(args).await)
            })
        }),
        "plain-sync" => run_sync(calls, || plain_sync(black_box(ARGS))),
        "retry-sync" => run_sync(calls, || retried_sync(black_box(ARGS))),
        "retry-unrecorded-sync" => run_sync(calls, || retried_unrecorded_sync(black_box(ARGS))),
        "retry-named-sync" => {
            load_bench_policy();
            run_sync(calls, || retried_named_sync(black_box(ARGS)));
        }
        "retry-const-sync" => run_sync(calls, || retried_const_sync(black_box(ARGS))),
        "policy-sync" => run_sync(calls, || {
            let args = black_box(ARGS);
            POLICY.retry_blocking(|| plain_sync(args))
        }),
        "backon-sync" => run_sync(calls, || {
            let args = black_box(ARGS);
            (|| plain_sync(args))
                .retry(backon_default())
                .when(retryable)
                .call()
        }),
        "loop-two" => run_async(calls, || async move {
            failures.set(2);
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
        "policy-two" => run_async(calls, || {
            failures.set(2);
            let args = black_box(ARGS);
            POLICY_ZERO.retry(move || flaky(args, failures))
        }),
        "backon-two" => run_async(calls, || {
            failures.set(2);
            let args = black_box(ARGS);
            (move || flaky(args, failures))
                .retry(backon_two(Duration::ZERO))
                .when(retryable)
        }),
        "tokio-retry2-two" => run_async(calls, || {
            failures.set(2);
            let args = black_box(ARGS);
            let strategy = FixedInterval::new(Duration::ZERO).take(2);
            Retry::spawn(strategy, move || async move {
                for_tokio_retry2(flaky(args, failures).await)
            })
        }),
        "loop-two-sync" => run_sync(calls, || {
            failures.set(2);
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
        "policy-two-sync" => run_sync(calls, || {
            failures.set(2);
            let args = black_box(ARGS);
            POLICY_ZERO.retry_blocking(|| flaky_key(args, failures))
        }),
        "backon-two-sync" => run_sync(calls, || {
            failures.set(2);
            let args = black_box(ARGS);
            (move || flaky_key(args, failures))
                .retry(backon_two(Duration::ZERO))
                .when(retryable)
                .call()
        }),
        "stream-raw" => run_stream(|| numbers(black_box(calls))),
        "stream" => {
            run_stream(|| POLICY.stream(move |_| std::future::ready(Ok(numbers(black_box(calls))))))
        }
        "stream-timers" => run_stream(|| {
            STREAM_TIMERS.stream(move |_| std::future::ready(Ok(numbers(black_box(calls)))))
        }),
        "stream-raw-ids" => run_stream(|| events(black_box(calls))),
        "stream-resume" => run_stream(|| {
            STREAM_RESUME.stream(move |_| std::future::ready(Ok(events(black_box(calls)))))
        }),
        "tower-plain" => {
            let service = service_fn(plain);
            run_async(calls, || service.oneshot(black_box(ARGS)));
        }
        "tower" => {
            let service = RetryLayer::new(&POLICY)
                .check(NoCheck)
                .without_key()
                .layer(service_fn(plain));
            run_async(calls, || service.clone().oneshot(black_box(ARGS)));
        }
        other => panic!("TENACIOUS_VARIANT: no variant {other:?}; one of {VARIANTS:?}"),
    }
}
