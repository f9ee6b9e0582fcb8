//! `fleet --redis URL` (feature `redis`): the simulation's fleet as OS
//! processes, in real time, against a provider on loopback, their guards
//! shared through a real Redis.
//!
//! The parent starts the provider: an axum server on 127.0.0.1 keeping
//! the simulation's quota ([`sim::Bucket`], the same token bucket, the
//! same headers: a 429 with `Retry-After` in whole seconds and the
//! `x-ratelimit-{limit,remaining,reset}-requests` headers), answering a
//! served request after the simulation's model latency
//! ([`sim::SERVICE`]) and a 429 after its short round trip
//! ([`sim::REJECT`]). It then runs the example binary again as
//! `--processes` processes (a hidden `--fleet-child` flag), the
//! workers dealt out between them, and each worker runs the simulation's
//! agent tasks over HTTP with the strategy's policy ([`sim::policy`]).
//! The processes say when they are ready, start on the parent's word,
//! stop after `--seconds`, and each prints one line of what it counted;
//! the provider counts the requests, 429s and served ones per second.
//! What they add up to is the simulation's [`Outcome`], summed up by
//! [`Summary::of`] into the same columns as the in-process table.
//!
//! A row's guards are either each process's own (fresh guards, not
//! bound: what a fleet without Redis has) or bound to one name in Redis
//! (a fresh name per run): the cooldown, the throttle and the breaker of
//! [`Guards`].

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::rc::Rc;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use tenacious::redis::{Store, StoreConfig};
use tenacious::{Policy, Signals, Throttle, rate_limits, retry_after};
use tokio::time::Instant;

use crate::sim::{self, ApiError, Bin, Bucket, Config, Guards, Outcome, Strategy, Summary};

/// The hidden flag a process of the fleet is started with.
const CHILD_FLAG: &str = "--fleet-child";
/// The prefix of a process's line of counts.
const RESULT: &str = "RESULT";
/// The Redis keys' prefix: `fleet:{<run>}:<guard>`.
const PREFIX: &str = "fleet";
/// How long past its run the parent waits for a process before it gives
/// up on it (and kills it).
const GRACE: Duration = Duration::from_secs(30);

/// Where a row's guards live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Each process's own, not bound.
    Own,
    /// Bound to one name in Redis, shared by every process.
    Redis,
}

impl Sharing {
    const fn flag(self) -> &'static str {
        match self {
            Self::Own => "own",
            Self::Redis => "redis",
        }
    }
}

/// One row of the table: a strategy, and where its guards live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Row {
    strategy: Strategy,
    sharing: Sharing,
}

impl Row {
    /// Its label: the strategy's name, and where its guards live when it
    /// has any.
    fn label(self) -> String {
        let name = self.strategy.name();
        match (has_guards(self.strategy), self.sharing) {
            (false, _) => name.to_owned(),
            (true, Sharing::Own) => format!("{name}, each process's own"),
            (true, Sharing::Redis) => format!("{name}, shared through Redis"),
        }
    }
}

/// Whether a strategy's policy names a guard that could be shared.
const fn has_guards(strategy: Strategy) -> bool {
    !matches!(strategy, Strategy::Naive | Strategy::Backoff)
}

/// What `--redis` runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The Redis URL.
    pub redis: String,
    /// OS processes the workers are dealt out between.
    pub processes: u32,
    /// Each row's run, in real seconds.
    pub seconds: u32,
    /// The fleet and the quota (its `duration` is set from `seconds`).
    pub config: Config,
    /// The workers' and the jitter's seeds come from it.
    pub seed: u64,
    /// The strategies asked for (all of them: the default rows).
    pub strategies: Vec<Strategy>,
}

/// The rows for `strategies`: by default backoff + jitter (nothing to
/// share), then all guards each process's own and shared through Redis;
/// for one strategy, it with its own guards and, if it has any, shared.
fn rows(strategies: &[Strategy]) -> Vec<Row> {
    let row = |strategy, sharing| Row { strategy, sharing };
    if strategies == Strategy::ALL {
        return vec![
            row(Strategy::Backoff, Sharing::Own),
            row(Strategy::AllGuards, Sharing::Own),
            row(Strategy::AllGuards, Sharing::Redis),
        ];
    }
    strategies
        .iter()
        .flat_map(|&strategy| {
            let shared = has_guards(strategy).then_some(row(strategy, Sharing::Redis));
            std::iter::once(row(strategy, Sharing::Own)).chain(shared)
        })
        .collect()
}

/// Runs every row and prints the table.
pub fn run(options: &Options) -> ExitCode {
    match run_rows(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn run_rows(options: &Options) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    let config = Config {
        duration: Duration::from_secs(u64::from(options.seconds)),
        ..options.config
    };
    runtime.block_on(async {
        let store = Store::connect(&options.redis)
            .await
            .map_err(|e| format!("--redis {}: {e}", options.redis))?;
        if !store.is_up() {
            return Err(format!(
                "--redis {}: no Redis answers there (start one: \
                 redis-server --port 6379 --save '' --appendonly no)",
                options.redis
            ));
        }
        drop(store);
        let rows = rows(&options.strategies);
        println!(
            "{} workers in {} processes × {} s real time, quota {} req/min (burst {}){}, \
             provider on loopback, Redis at {}; demand ≈ {:.0} req/s = {:.1}× quota; \
             1 run per row, seed {}\n",
            config.workers,
            options.processes,
            options.seconds,
            config.rpm,
            config.burst,
            if config.penalty { ", penalty mode" } else { "" },
            options.redis,
            config.demand(),
            config.demand() / (f64::from(config.rpm) / 60.0),
            options.seed,
        );
        let mut results = Vec::new();
        for (i, &row) in rows.iter().enumerate() {
            let started = std::time::Instant::now();
            let seed = options.seed.wrapping_add(i as u64);
            let outcome = run_row(row, options, config, seed).await?;
            results.push((row, Summary::of(&outcome, config), started.elapsed()));
        }
        print_table(&results);
        Ok(())
    })
}

/// The in-process table's columns (`examples/fleet.rs`, without an outage).
fn print_table(results: &[(Row, Summary, Duration)]) {
    println!(
        "| strategy | goodput (% quota) | 429s (% req) | p50 call (s) | p99 call (s) | tasks | calls given up | Jain | req/s | wall (s) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (row, summary, wall) in results {
        println!(
            "| {} | {:.1} | {:.1} | {:.2} | {:.2} | {:.0} | {:.0} | {:.3} | {:.1} | {:.2} |",
            row.label(),
            summary.goodput,
            summary.rejected,
            summary.p50,
            summary.p99,
            summary.tasks,
            summary.gave_up,
            summary.jain,
            summary.rps,
            wall.as_secs_f64(),
        );
    }
    println!(
        "\nwall: the row's run, its processes' start-up included. A process's \
         latency counts its HTTP round trips on loopback too."
    );
}

// ------------------------------------------------------------ provider

/// The provider: the simulation's bucket, on the real clock, and what it
/// received over the run.
struct Provider {
    bucket: Mutex<Bucket>,
    /// Latencies are drawn from it.
    rng: Mutex<SmallRng>,
    /// The run, once it started: `[start, end)`.
    window: Mutex<Option<(Instant, Instant)>>,
    counts: Mutex<Counted>,
}

/// What the provider counted over the run.
#[derive(Default)]
struct Counted {
    requests: u64,
    rejected: u64,
    over_time: Vec<Bin>,
}

impl Provider {
    /// Counts a request that reached it at `now`, if within the run.
    fn count(&self, now: Instant, served: bool) {
        let window = *self.window.lock().expect("not poisoned");
        let Some((start, end)) = window else { return };
        if now < start || now >= end {
            return;
        }
        let mut counts = self.counts.lock().expect("not poisoned");
        counts.requests += 1;
        counts.rejected += u64::from(!served);
        let at = usize::try_from((now - start).as_secs() / sim::BIN.as_secs()).unwrap_or(0);
        if let Some(bin) = counts.over_time.get_mut(at) {
            bin.requests += 1;
            if served {
                bin.served += 1;
            } else {
                bin.rejected += 1;
            }
        }
    }
}

/// One model call: the bucket's answer at arrival, given after the
/// simulation's latency with its headers.
async fn complete(State(provider): State<Arc<Provider>>) -> Response {
    let now = Instant::now();
    let answer = provider.bucket.lock().expect("not poisoned").arrive(now);
    let latency = {
        let mut rng = provider.rng.lock().expect("not poisoned");
        uniform(
            &mut rng,
            if answer.served {
                sim::SERVICE
            } else {
                sim::REJECT
            },
        )
    };
    provider.count(now, answer.served);
    tokio::time::sleep(latency).await;
    let headers = [
        ("x-ratelimit-limit-requests", answer.limit.to_string()),
        (
            "x-ratelimit-remaining-requests",
            answer.remaining.to_string(),
        ),
        (
            "x-ratelimit-reset-requests",
            format!("{:.3}ms", answer.reset.as_secs_f64() * 1000.0),
        ),
    ];
    if answer.served {
        (StatusCode::OK, headers, "{\"choices\":[]}").into_response()
    } else {
        let retry_after = [("retry-after", answer.retry_after.as_secs().to_string())];
        (
            StatusCode::TOO_MANY_REQUESTS,
            headers,
            retry_after,
            "rate limited",
        )
            .into_response()
    }
}

// -------------------------------------------------------------- parent

/// A process of the fleet, killed if it still runs when dropped (the run
/// failed), and the lines it printed.
struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    result: Option<Report>,
}

impl Proc {
    fn spawn(spec: &str) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| format!("no path to this binary: {e}"))?;
        let mut child = Command::new(exe)
            .args([CHILD_FLAG, spec])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start a process of the fleet: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        Ok(Self {
            child,
            stdin,
            lines,
            result: None,
        })
    }

    /// Whether it said `READY` (reading what came so far).
    fn ready(&mut self) -> bool {
        let mut ready = false;
        while let Ok(line) = self.lines.try_recv() {
            ready |= line == "READY";
            self.read(&line);
        }
        ready
    }

    fn read(&mut self, line: &str) {
        if let Some(report) = Report::parse(line) {
            self.result = Some(report);
        }
    }

    fn go(&mut self) -> Result<(), String> {
        let mut stdin = self.stdin.take().expect("go once");
        stdin
            .write_all(b"go\n")
            .map_err(|e| format!("a process of the fleet is gone: {e}"))
    }

    /// Its report, once it exited; `None` while it runs.
    fn finished(&mut self) -> Result<Option<Report>, String> {
        let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        if !status.success() {
            return Err(format!("a process of the fleet failed: {status}"));
        }
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.read(&line);
        }
        self.result
            .take()
            .map(Some)
            .ok_or_else(|| "a process of the fleet exited without its counts".to_owned())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// One row: a fresh provider, the processes started at once, run for the
/// configured time, and what they and the provider counted.
async fn run_row(
    row: Row,
    options: &Options,
    config: Config,
    seed: u64,
) -> Result<Outcome, String> {
    let bins = usize::try_from(config.duration.as_secs().div_ceil(sim::BIN.as_secs())).unwrap_or(0);
    let provider = Arc::new(Provider {
        bucket: Mutex::new(Bucket::new(&config, Instant::now())),
        rng: Mutex::new(SmallRng::seed_from_u64(seed)),
        window: Mutex::new(None),
        counts: Mutex::new(Counted {
            over_time: vec![Bin::default(); bins],
            ..Counted::default()
        }),
    });
    let app = Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(Arc::clone(&provider));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot listen on loopback: {e}"))?;
    let url = format!(
        "http://{}/v1/chat/completions",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    // A fresh name per run: the guards start afresh.
    let run = format!(
        "{}-{}-{}",
        row.strategy.flag(),
        std::process::id(),
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    let mut procs = (0..options.processes)
        .map(|index| {
            Proc::spawn(&format!(
                "strategy={} sharing={} server={url} redis={} run={run} index={index} \
                 processes={} workers={} seed={seed} seconds={}",
                row.strategy.flag(),
                row.sharing.flag(),
                options.redis,
                options.processes,
                config.workers,
                options.seconds,
            ))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let tick = Duration::from_millis(10);
    let patience = std::time::Instant::now() + GRACE;
    let mut ready = vec![false; procs.len()];
    while ready.contains(&false) {
        for (proc, ready) in procs.iter_mut().zip(&mut ready) {
            *ready |= proc.ready();
            if !*ready && proc.child.try_wait().map_err(|e| e.to_string())?.is_some() {
                return Err("a process of the fleet exited before it was ready".to_owned());
            }
        }
        if std::time::Instant::now() > patience {
            return Err("the fleet's processes are not ready after 30 s".to_owned());
        }
        tokio::time::sleep(tick).await;
    }
    let start = Instant::now();
    *provider.window.lock().expect("not poisoned") = Some((start, start + config.duration));
    for proc in &mut procs {
        proc.go()?;
    }
    let patience = std::time::Instant::now() + config.duration + GRACE;
    let mut reports = vec![None; procs.len()];
    while reports.contains(&None) {
        for (proc, report) in procs.iter_mut().zip(&mut reports) {
            if report.is_none() {
                *report = proc.finished()?;
            }
        }
        if std::time::Instant::now() > patience {
            return Err("the fleet's processes did not finish in time".to_owned());
        }
        tokio::time::sleep(tick).await;
    }
    server.abort();
    let mut outcome = Outcome {
        requests: 0,
        rejected: 0,
        overloaded: 0,
        served: 0,
        capacity: config.capacity(),
        latencies: Vec::new(),
        gave_up: 0,
        refused: 0,
        tasks: Vec::new(),
        over_time: Vec::new(),
    };
    for report in reports.into_iter().flatten() {
        outcome.latencies.extend(report.latencies);
        outcome.gave_up += report.gave_up;
        outcome.refused += report.refused;
        outcome.tasks.extend(report.tasks);
    }
    outcome.latencies.sort_unstable();
    let counts = std::mem::take(&mut *provider.counts.lock().expect("not poisoned"));
    outcome.requests = counts.requests;
    outcome.rejected = counts.rejected;
    outcome.served = counts.over_time.iter().map(|b| u64::from(b.served)).sum();
    outcome.over_time = counts.over_time;
    Ok(outcome)
}

// --------------------------------------------------------------- child

/// What a process counted: the line it prints.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Report {
    gave_up: u64,
    refused: u64,
    /// Tasks each of its workers completed.
    tasks: Vec<u32>,
    /// Its successful calls' latencies.
    latencies: Vec<Duration>,
}

impl Report {
    fn line(&self) -> String {
        let list = |items: &mut dyn Iterator<Item = u128>| {
            let mut out = String::new();
            for (i, item) in items.enumerate() {
                let _ = write!(out, "{}{item}", if i == 0 { "" } else { "," });
            }
            out
        };
        format!(
            "{RESULT} gave_up={} refused={} tasks={} latencies_us={}",
            self.gave_up,
            self.refused,
            list(&mut self.tasks.iter().map(|&n| u128::from(n))),
            list(&mut self.latencies.iter().map(Duration::as_micros)),
        )
    }

    fn parse(line: &str) -> Option<Self> {
        let fields = line.strip_prefix(RESULT)?;
        let field = |key: &str| {
            fields
                .split_whitespace()
                .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
        };
        let list = |value: &str| -> Option<Vec<u64>> {
            value
                .split(',')
                .filter(|v| !v.is_empty())
                .map(|v| v.parse().ok())
                .collect()
        };
        Some(Self {
            gave_up: field("gave_up")?.parse().ok()?,
            refused: field("refused")?.parse().ok()?,
            tasks: list(field("tasks")?)?
                .into_iter()
                .map(|n| u32::try_from(n).ok())
                .collect::<Option<_>>()?,
            latencies: list(field("latencies_us")?)?
                .into_iter()
                .map(Duration::from_micros)
                .collect(),
        })
    }
}

/// What `--fleet-child` says a process does.
struct Spec {
    strategy: Strategy,
    sharing: Sharing,
    server: String,
    redis: String,
    run: String,
    index: u32,
    processes: u32,
    workers: u32,
    seed: u64,
    seconds: u32,
}

impl Spec {
    fn parse(spec: &str) -> Result<Self, String> {
        let field = |key: &str| {
            spec.split_whitespace()
                .find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
                .ok_or_else(|| format!("{CHILD_FLAG}: no {key}= in {spec:?}"))
        };
        let number = |key: &str| -> Result<u64, String> {
            field(key)?
                .parse()
                .map_err(|e| format!("{CHILD_FLAG}: {key}: {e}"))
        };
        let small = |key: &str| -> Result<u32, String> {
            u32::try_from(number(key)?).map_err(|e| format!("{CHILD_FLAG}: {key}: {e}"))
        };
        let strategy = field("strategy")?;
        Ok(Self {
            strategy: Strategy::from_flag(strategy)
                .ok_or_else(|| format!("{CHILD_FLAG}: unknown strategy {strategy:?}"))?,
            sharing: match field("sharing")? {
                "own" => Sharing::Own,
                "redis" => Sharing::Redis,
                other => return Err(format!("{CHILD_FLAG}: unknown sharing {other:?}")),
            },
            server: field("server")?.to_owned(),
            redis: field("redis")?.to_owned(),
            run: field("run")?.to_owned(),
            index: small("index")?,
            processes: small("processes")?.max(1),
            workers: small("workers")?,
            seed: number("seed")?,
            seconds: small("seconds")?,
        })
    }
}

/// A process of the fleet, if this one was started as one: its exit code.
pub fn child_if_asked() -> Option<ExitCode> {
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() != Some(CHILD_FLAG) {
        return None;
    }
    let spec = args.next().unwrap_or_default();
    Some(match child(&spec) {
        Ok(report) => {
            println!("{}", report.line());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    })
}

fn child(spec: &str) -> Result<Report, String> {
    let spec = Spec::parse(spec)?;
    // One thread, as a run of the simulation: the jitter's seed holds for
    // every call (the engine draws from this thread's RNG).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    runtime.block_on(child_run(spec))
}

/// What a process's workers share: the client and the counters.
struct Fleet {
    client: reqwest::Client,
    url: String,
    end: Instant,
    gave_up: std::cell::Cell<u64>,
    refused: std::cell::Cell<u64>,
    latencies: std::cell::RefCell<Vec<Duration>>,
}

async fn child_run(spec: Spec) -> Result<Report, String> {
    tenacious::seed_jitter(spec.seed ^ u64::from(spec.index));
    let guards = Guards::fresh();
    // Kept for the run: it keeps the bound guards' mirrors fresh.
    let _store = match spec.sharing {
        Sharing::Own => None,
        Sharing::Redis => {
            let store = Store::connect_with(&spec.redis, StoreConfig::new().prefix(PREFIX))
                .await
                .map_err(|e| e.to_string())?;
            if !store.is_up() {
                return Err(format!("no Redis answers at {}", spec.redis));
            }
            let bind = |e: tenacious::redis::BindError| e.to_string();
            store.bind(guards.cooldown, &spec.run).map_err(bind)?;
            store.bind(guards.throttle, &spec.run).map_err(bind)?;
            store.bind(guards.breaker, &spec.run).map_err(bind)?;
            Some(store)
        }
    };
    let policy = sim::policy(spec.strategy, guards);
    println!("READY");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let go = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    if go.trim() != "go" {
        return Err(format!("{CHILD_FLAG}: expected go, read {go:?}"));
    }
    let end = Instant::now() + Duration::from_secs(u64::from(spec.seconds));
    let fleet = Rc::new(Fleet {
        client: reqwest::Client::new(),
        url: spec.server.clone(),
        end,
        gave_up: std::cell::Cell::new(0),
        refused: std::cell::Cell::new(0),
        latencies: std::cell::RefCell::new(Vec::new()),
    });
    // This process's workers: every `processes`-th from its index.
    let ids: Vec<u32> = (spec.index..spec.workers)
        .step_by(spec.processes as usize)
        .collect();
    let tasks: Rc<Vec<std::cell::Cell<u32>>> =
        Rc::new(ids.iter().map(|_| std::cell::Cell::new(0)).collect());
    let local = tokio::task::LocalSet::new();
    for (slot, &id) in ids.iter().enumerate() {
        local.spawn_local(worker(
            Rc::clone(&fleet),
            Rc::clone(&tasks),
            (slot, u64::from(id)),
            spec.strategy,
            (policy, guards.throttle),
            spec.seed,
        ));
    }
    local.run_until(tokio::time::sleep_until(end)).await;
    drop(local);
    let fleet = Rc::try_unwrap(fleet).map_err(|_| "the workers outlived their run")?;
    Ok(Report {
        gave_up: fleet.gave_up.get(),
        refused: fleet.refused.get(),
        tasks: tasks.iter().map(std::cell::Cell::get).collect(),
        latencies: fleet.latencies.into_inner(),
    })
}

fn uniform(rng: &mut SmallRng, (lo, hi): (Duration, Duration)) -> Duration {
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rng.random_range(nanos(lo)..=nanos(hi)))
}

/// One worker, as the simulation's (`sim::worker`): agent tasks of a few
/// calls with tool time after each, until the run ends; its calls over
/// HTTP.
async fn worker(
    fleet: Rc<Fleet>,
    tasks: Rc<Vec<std::cell::Cell<u32>>>,
    (slot, id): (usize, u64),
    strategy: Strategy,
    (policy, throttle): (Policy, &'static Throttle),
    seed: u64,
) {
    let mut rng = SmallRng::seed_from_u64(seed ^ id.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    tokio::time::sleep(uniform(&mut rng, (Duration::ZERO, sim::RAMP))).await;
    loop {
        let calls = rng.random_range(sim::CALLS_PER_TASK.0..=sim::CALLS_PER_TASK.1);
        let mut done = true;
        for _ in 0..calls {
            let started = Instant::now();
            let result = policy
                .retry(|| request(&fleet.client, &fleet.url, strategy, throttle))
                .await;
            let now = Instant::now();
            if now >= fleet.end {
                return;
            }
            match result {
                Ok(()) => fleet.latencies.borrow_mut().push(now - started),
                Err(ApiError::Refused(_)) => {
                    // The breaker is open: another route for this task.
                    fleet.refused.set(fleet.refused.get() + 1);
                    tokio::time::sleep(uniform(&mut rng, sim::THINK)).await;
                    done = false;
                    break;
                }
                Err(_) => {
                    fleet.gave_up.set(fleet.gave_up.get() + 1);
                    done = false;
                    break;
                }
            }
            tokio::time::sleep(uniform(&mut rng, sim::THINK)).await;
        }
        if done && Instant::now() < fleet.end {
            tasks[slot].set(tasks[slot].get() + 1);
        }
    }
}

/// One request, read the way the strategy's client reads it (as
/// `sim::Fleet::request` answers it): `Retry-After` unless naive, the
/// rate-limit headers only where a header-paced throttle reads them (a
/// success's handed to the throttle). A transport error, which loopback
/// should not see, counts as an overload.
async fn request(
    client: &reqwest::Client,
    url: &str,
    strategy: Strategy,
    throttle: &Throttle,
) -> Result<(), ApiError> {
    let response = client
        .post(url)
        .send()
        .await
        .map_err(|_| ApiError::Overloaded)?;
    let status = response.status();
    let headers = response.headers().clone();
    // The body read to its end, so the connection is kept.
    let _ = response.bytes().await;
    let signals = if strategy.reads_rate_headers() {
        rate_limits::from_headers(&headers)
    } else {
        Signals::NONE
    };
    if status.is_success() {
        if !signals.is_none() {
            throttle.report(signals);
        }
        return Ok(());
    }
    if status != StatusCode::TOO_MANY_REQUESTS {
        return Err(ApiError::Overloaded);
    }
    let retry_after = if strategy.reads_retry_after() {
        retry_after::from_headers(&headers, SystemTime::now())
    } else {
        None
    };
    Err(ApiError::TooManyRequests {
        retry_after,
        signals,
    })
}
