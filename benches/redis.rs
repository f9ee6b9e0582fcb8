//! What a shared guard adds per attempt, local against Redis (feature
//! `redis`).
//!
//! ```sh
//! cargo bench --features redis --bench redis
//! ```
//!
//! The bench starts a `redis-server` of its own on a free loopback port
//! (`tests/support/redis_server.rs`) and stops it at the end. Every case
//! is a `Policy::retry` of a trivial async closure (or one round trip for
//! reference), run on a real-time multi-thread tokio runtime (2 workers),
//! inside a task spawned on it, as a server's request handler would run:
//!
//! 1. `no guards`: `Policy::new()`, the first attempt succeeds;
//! 2. `4 guards, in process`: the same with a `RetryBudget`, `Cooldown`,
//!    `Throttle` and `Breaker`, none bound;
//! 3. `4 guards, bound, hot path`: four other statics, bound to a store:
//!    the budget's first attempt, an open cooldown, a throttle that is
//!    off and a closed breaker all decide in process, no round trip;
//! 4. `1 retry, budget in process` / `1 retry, budget bound`: the first
//!    attempt fails (transient), the retry succeeds at once (`base` zero);
//!    the bound budget takes the retry's tokens in one `EVALSHA`;
//! 5. the round trip alone: one `EVALSHA` through redis-rs (the store's
//!    own connection: `Store::sync` of a store holding one bound budget,
//!    which reads it with one script call), and one `PING` written in RESP
//!    on a plain tokio `TcpStream`, the loopback floor. (A `PING` through
//!    redis-rs itself would need `redis` as a dev-dependency of the root
//!    crate; `Store::sync` goes through the same redis-rs connection the
//!    guards use.)
//!
//! Criterion's groups give the means. Then a **percentile table**: each
//! case timed call by call with `Instant` (20 000 calls per case by
//! default, in rounds of 1 000 that rotate over the cases, so the
//! machine's drift hits all of them alike), printed as p50 and p99 with
//! what each case adds to the one it is compared with. Last, each store's
//! `Store::stats` over the whole run: the hot path's store must have made
//! no round trip, the retry's store exactly one per retry.
//!
//! The stores refresh once an hour (`StoreConfig::refresh`), so their
//! background loop sends nothing while the bench runs and every round trip
//! counted is one a call made; so the bound budget's refunds are never
//! sent, and it is given a capacity no run can spend. Their timeout is 1 s
//! instead of 50 ms, so a stall of this machine cannot put a store down
//! (its guards would then decide in process, without Redis, until the
//! next refresh); the counts below show `failures` 0.
//!
//! Case 5b is this machine's loopback floor, the wakeups of a round trip
//! included: `redis-benchmark -t ping_mbulk -c 1` should read about the
//! same. Cases 1 to 3 differ by nanoseconds, below what one `Instant` pair
//! resolves well: for them, criterion's means are the figures to compare.
//!
//! `TENACIOUS_PERCENTILES=only` runs the table alone, `=skip` criterion's
//! groups alone; `TENACIOUS_SAMPLES=N` sets the calls timed per case,
//! `TENACIOUS_WORKERS=N` the runtime's worker threads (2).
use std::hint::black_box;
use std::io;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::Criterion;
use tenacious::redis::{Store, StoreConfig, StoreStats};
use tenacious::{Breaker, Classify, Cooldown, Policy, RetryBudget, Throttle};
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

#[path = "../tests/support/redis_server.rs"]
mod redis_server;

use redis_server::RedisServer;

#[derive(Debug, Classify)]
enum CallError {
    #[classify(transient)]
    Timeout,
}

/// A capacity no run spends: the bound budget's refunds wait for a
/// refresh that does not come while the bench runs (see the module docs).
const CAPACITY: u32 = 1_000_000_000;

// Case 2: in process.
static LOCAL_BUDGET: RetryBudget = RetryBudget::new();
static LOCAL_COOLDOWN: Cooldown = Cooldown::new();
static LOCAL_THROTTLE: Throttle = Throttle::new();
static LOCAL_BREAKER: Breaker = Breaker::new();

// Case 3: the same four, bound to the `hot` store.
static BOUND_BUDGET: RetryBudget = RetryBudget::new();
static BOUND_COOLDOWN: Cooldown = Cooldown::new();
static BOUND_THROTTLE: Throttle = Throttle::new();
static BOUND_BREAKER: Breaker = Breaker::new();

// Case 4: a budget in process, and one bound to the `retry` store.
static RETRY_LOCAL_BUDGET: RetryBudget = RetryBudget::with_capacity(CAPACITY);
static RETRY_BOUND_BUDGET: RetryBudget = RetryBudget::with_capacity(CAPACITY);

// Case 5: the budget the `raw` store's `sync` reads.
static SYNC_BUDGET: RetryBudget = RetryBudget::with_capacity(CAPACITY);

const NO_GUARDS: Policy = Policy::new();
const LOCAL: Policy = Policy::new()
    .budget(&LOCAL_BUDGET)
    .cooldown(&LOCAL_COOLDOWN)
    .throttle(&LOCAL_THROTTLE)
    .breaker(&LOCAL_BREAKER);
const BOUND: Policy = Policy::new()
    .budget(&BOUND_BUDGET)
    .cooldown(&BOUND_COOLDOWN)
    .throttle(&BOUND_THROTTLE)
    .breaker(&BOUND_BREAKER);
const RETRY_LOCAL: Policy = Policy::new()
    .max(2)
    .base(Duration::ZERO)
    .budget(&RETRY_LOCAL_BUDGET);
const RETRY_BOUND: Policy = Policy::new()
    .max(2)
    .base(Duration::ZERO)
    .budget(&RETRY_BOUND_BUDGET);

/// Retries made under each budget of case 4 (one per call).
static RETRIES_LOCAL: AtomicU64 = AtomicU64::new(0);
static RETRIES_BOUND: AtomicU64 = AtomicU64::new(0);
/// `Store::sync` calls of case 5.
static SYNCS: AtomicU64 = AtomicU64::new(0);

/// The stores and the raw connection, for the calls' `'static` futures.
struct Fleet {
    hot: Store,
    retry: Store,
    raw: Store,
    ping: TcpStream,
}

static FLEET: OnceLock<Fleet> = OnceLock::new();

fn fleet() -> &'static Fleet {
    FLEET.get().expect("the fleet is set up first")
}

/// The trivial attempt: succeeds at once.
async fn ok() -> Result<u64, CallError> {
    Ok(black_box(1))
}

/// An operation whose first attempt fails and whose retry succeeds,
/// counting the retries in `retries`.
fn fail_once(
    retries: &'static AtomicU64,
) -> impl FnMut() -> std::future::Ready<Result<u64, CallError>> {
    let mut failed = false;
    move || {
        if failed {
            std::future::ready(Ok(black_box(2)))
        } else {
            failed = true;
            retries.fetch_add(1, Ordering::Relaxed);
            std::future::ready(Err(CallError::Timeout))
        }
    }
}

async fn no_guards() -> Result<u64, CallError> {
    NO_GUARDS.retry(ok).await
}

async fn local() -> Result<u64, CallError> {
    LOCAL.retry(ok).await
}

async fn bound() -> Result<u64, CallError> {
    BOUND.retry(ok).await
}

async fn retry_local() -> Result<u64, CallError> {
    RETRY_LOCAL.retry(fail_once(&RETRIES_LOCAL)).await
}

async fn retry_bound() -> Result<u64, CallError> {
    RETRY_BOUND.retry(fail_once(&RETRIES_BOUND)).await
}

/// One `EVALSHA` through redis-rs: the raw store holds one bound budget,
/// which its `sync` reads with one script call.
async fn evalsha() {
    SYNCS.fetch_add(1, Ordering::Relaxed);
    fleet().raw.sync().await;
}

/// One `PING` in RESP on a plain socket, `+PONG` read back. (Without
/// tokio's `io-util`, which the dev-dependencies leave off: its
/// `try_write`, `try_read` and readiness.)
async fn ping() {
    let stream = &fleet().ping;
    let request = b"*1\r\n$4\r\nPING\r\n";
    let mut sent = 0;
    while sent < request.len() {
        match stream.try_write(&request[sent..]) {
            Ok(n) => sent += n,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                stream.writable().await.expect("the socket is writable");
            }
            Err(error) => panic!("PING not sent: {error}"),
        }
    }
    let mut reply = [0; 7];
    let mut read = 0;
    while read < reply.len() {
        stream.readable().await.expect("the socket is readable");
        match stream.try_read(&mut reply[read..]) {
            Ok(0) => panic!("redis-server closed the connection"),
            Ok(n) => read += n,
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {}
            Err(error) => panic!("PONG not read: {error}"),
        }
    }
    assert_eq!(&reply, b"+PONG\r\n");
}

/// A case: its name, the call it times, and the case its added latency
/// is measured against (an index into the list), if any.
struct Case {
    name: &'static str,
    against: Option<usize>,
    total: fn(&Runtime, u64) -> Duration,
    each: fn(&Runtime, usize) -> Vec<u64>,
}

/// Times `iters` calls of `call` back to back, in a task on a worker.
fn total<F: Future + Send + 'static>(rt: &Runtime, iters: u64, call: fn() -> F) -> Duration {
    rt.block_on(rt.spawn(async move {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(call().await);
        }
        start.elapsed()
    }))
    .expect("the timed task runs")
}

/// Times `n` calls of `call` one by one (nanoseconds), in a task on a
/// worker.
fn each<F: Future + Send + 'static>(rt: &Runtime, n: usize, call: fn() -> F) -> Vec<u64> {
    rt.block_on(rt.spawn(async move {
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let start = Instant::now();
            black_box(call().await);
            let elapsed = start.elapsed();
            samples.push(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX));
        }
        samples
    }))
    .expect("the timed task runs")
}

macro_rules! case {
    ($name:expr, $against:expr, $call:expr) => {
        Case {
            name: $name,
            against: $against,
            total: |rt, iters| total(rt, iters, $call),
            each: |rt, n| each(rt, n, $call),
        }
    };
}

fn cases() -> Vec<Case> {
    vec![
        case!("1. no guards", None, no_guards),
        case!("2. 4 guards, in process", Some(0), local),
        case!("3. 4 guards, bound, hot path", Some(1), bound),
        case!("4a. 1 retry, budget in process", None, retry_local),
        case!("4b. 1 retry, budget bound", Some(3), retry_bound),
        case!("5a. EVALSHA via redis-rs (Store::sync)", Some(6), evalsha),
        case!("5b. PING, raw RESP on a TcpStream", None, ping),
    ]
}

fn criterion_groups(c: &mut Criterion, rt: &Runtime, cases: &[Case]) {
    let groups: [(&str, std::ops::Range<usize>); 3] = [
        ("redis_hot_path", 0..3),
        ("redis_one_retry", 3..5),
        ("redis_round_trip", 5..7),
    ];
    for (group, range) in groups {
        let mut group = c.benchmark_group(group);
        for case in &cases[range] {
            group.bench_function(case.name, |b| {
                b.iter_custom(|iters| (case.total)(rt, iters))
            });
        }
        group.finish();
    }
}

/// The nearest-rank `p`-th percentile of sorted `xs`.
fn percentile(xs: &[u64], p: usize) -> u64 {
    let rank = (xs.len() * p).div_ceil(100).max(1);
    xs[rank - 1]
}

fn format_ns(ns: f64) -> String {
    if ns.abs() >= 1000.0 {
        format!("{:.2} µs", ns / 1000.0)
    } else {
        format!("{ns:.0} ns")
    }
}

#[allow(clippy::cast_precision_loss)]
fn signed(ns: i128) -> String {
    let sign = match ns.signum() {
        -1 => "−",
        0 => "",
        _ => "+",
    };
    format!("{sign}{}", format_ns(ns.unsigned_abs() as f64))
}

/// The percentile table: `samples` calls per case, in rounds of `round`
/// rotating over the cases.
fn percentiles(rt: &Runtime, cases: &[Case], samples: usize, round: usize) {
    let round = round.min(samples).max(1);
    let rounds = samples.div_ceil(round);
    for case in cases {
        drop((case.each)(rt, round));
    }
    let started = Instant::now();
    let mut all: Vec<Vec<u64>> = cases.iter().map(|_| Vec::with_capacity(samples)).collect();
    for r in 0..rounds {
        for k in 0..cases.len() {
            let i = (k + r) % cases.len();
            all[i].extend((cases[i].each)(rt, round));
        }
    }
    let stats: Vec<(u64, u64, f64)> = all
        .iter_mut()
        .map(|xs| {
            xs.sort_unstable();
            #[allow(clippy::cast_precision_loss)]
            let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / xs.len() as f64;
            (percentile(xs, 50), percentile(xs, 99), mean)
        })
        .collect();
    println!(
        "\nLatency per call, {} calls per case in rounds of {round} ({:.1} s)\n",
        rounds * round,
        started.elapsed().as_secs_f64()
    );
    println!("| case | p50 | p99 | mean | added p50 | added p99 | against |");
    println!("|---|---:|---:|---:|---:|---:|---|");
    for (i, case) in cases.iter().enumerate() {
        let (p50, p99, mean) = stats[i];
        #[allow(clippy::cast_precision_loss)]
        let (added50, added99, against) = match case.against {
            Some(j) => {
                let (b50, b99, _) = stats[j];
                (
                    signed(i128::from(p50) - i128::from(b50)),
                    signed(i128::from(p99) - i128::from(b99)),
                    cases[j].name,
                )
            }
            None => (String::new(), String::new(), ""),
        };
        #[allow(clippy::cast_precision_loss)]
        let (p50, p99) = (p50 as f64, p99 as f64);
        println!(
            "| {} | {} | {} | {} | {added50} | {added99} | {against} |",
            case.name,
            format_ns(p50),
            format_ns(p99),
            format_ns(mean)
        );
    }
    println!(
        "\n(added: this case's percentile less that of the case it is against; \
         the timer's own cost, in every row, cancels out)"
    );
}

/// What each store counted since `before`.
fn round_trips(before: &[StoreStats; 3]) {
    let f = fleet();
    let after = [f.hot.stats(), f.retry.stats(), f.raw.stats()];
    let delta = |i: usize| {
        let (a, b) = (&after[i], &before[i]);
        (
            a.round_trips - b.round_trips,
            a.failures - b.failures,
            a.local_decisions - b.local_decisions,
            a.up,
        )
    };
    let expected = [
        ("hot (case 3)", "no round trip", 0),
        (
            "retry (case 4b)",
            "one per retry",
            RETRIES_BOUND.load(Ordering::Relaxed),
        ),
        (
            "raw (case 5a)",
            "one per sync",
            SYNCS.load(Ordering::Relaxed),
        ),
    ];
    println!("\nRound trips each store made while the bench ran (Store::stats)\n");
    println!("| store | expected | round trips | failures | local decisions | up | |");
    println!("|---|---|---:|---:|---:|---|---|");
    let mut ok = true;
    for (i, (store, what, want)) in expected.iter().enumerate() {
        let (trips, failures, local, up) = delta(i);
        let right = trips == *want && failures == 0 && local == 0 && up;
        ok &= right;
        println!(
            "| {store} | {what}: {want} | {trips} | {failures} | {local} | {up} | {} |",
            if right { "ok" } else { "MISMATCH" }
        );
    }
    println!(
        "\nretries: {} with the budget in process, {} with it bound",
        RETRIES_LOCAL.load(Ordering::Relaxed),
        RETRIES_BOUND.load(Ordering::Relaxed)
    );
    assert!(ok, "a store's round trips are not what the cases imply");
}

fn setup(rt: &Runtime, url: &str) -> [StoreStats; 3] {
    rt.block_on(async {
        let config = StoreConfig::new()
            .refresh(Duration::from_secs(3600))
            .timeout(Duration::from_secs(1));
        let connect = || async {
            let store = Store::connect_with(url, config.clone())
                .await
                .expect("a redis URL");
            assert!(store.is_up(), "the bench's redis-server answers");
            store
        };
        let hot = connect().await;
        hot.bind(&BOUND_BUDGET, "hot").expect("bound");
        hot.bind(&BOUND_COOLDOWN, "hot").expect("bound");
        hot.bind(&BOUND_THROTTLE, "hot").expect("bound");
        hot.bind(&BOUND_BREAKER, "hot").expect("bound");
        let retry = connect().await;
        retry.bind(&RETRY_BOUND_BUDGET, "retry").expect("bound");
        let raw = connect().await;
        raw.bind(&SYNC_BUDGET, "sync").expect("bound");
        // Each store's background loop makes its first pass at once, then
        // waits an hour; let it end, and load the scripts (a first
        // `EVALSHA` meets `NOSCRIPT`).
        tokio::time::sleep(Duration::from_millis(200)).await;
        for store in [&hot, &retry, &raw] {
            store.sync().await;
        }
        let url = url.strip_prefix("redis://").unwrap_or(url);
        let stream = TcpStream::connect(url).await.expect("redis on loopback");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        let before = [hot.stats(), retry.stats(), raw.stats()];
        assert!(
            FLEET
                .set(Fleet {
                    hot,
                    retry,
                    raw,
                    ping: stream,
                })
                .is_ok(),
            "set up once"
        );
        before
    })
}

fn main() {
    let started = Instant::now();
    let mode = std::env::var("TENACIOUS_PERCENTILES").unwrap_or_default();
    // `cargo bench -- --test` (or `cargo test --benches`): each case once.
    let test_mode = std::env::args().any(|arg| arg == "--test");
    let samples = std::env::var("TENACIOUS_SAMPLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(if test_mode { 100 } else { 20_000 });

    let redis = RedisServer::start();
    let workers = std::env::var("TENACIOUS_WORKERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("a multi-thread runtime");
    let before = setup(&rt, &redis.url());
    let cases = cases();

    if mode != "only" {
        let mut criterion = Criterion::default()
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(2))
            .configure_from_args();
        criterion_groups(&mut criterion, &rt, &cases);
        criterion.final_summary();
    }
    if mode != "skip" {
        percentiles(&rt, &cases, samples, 1_000);
    }
    round_trips(&before);
    drop(rt);
    drop(redis);
    println!(
        "\nthe bench ran {:.1} s (redis-server started and stopped)",
        started.elapsed().as_secs_f64()
    );
}
