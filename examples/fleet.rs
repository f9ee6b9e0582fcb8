//! A fleet of agent workers against one provider's quota: what each retry
//! strategy gets out of it, and what it costs the provider.
//!
//! K workers run agent tasks of a few model calls each against a provider
//! with a token-bucket quota (600 requests/min, burst 20, by default) that
//! answers over-quota requests 429 with `Retry-After` and the rate-limit
//! headers; demand is several times the quota. Every call goes through
//! `tenacious::Policy::retry`, on tokio's paused clock: the model is in
//! `examples/fleet/sim.rs`.
//!
//! ```sh
//! cargo run --release --example fleet                      # 64 workers, 10 min
//! cargo run --release --example fleet -- --penalty --minutes 40
//! cargo run --release --example fleet -- --workers 10000 --runs 1
//! cargo run --release --example fleet -- --outage 3-5          # what the breaker saves
//! cargo run --release --example fleet --features redis -- --redis redis://127.0.0.1:6379
//! ```
//!
//! With `--outage 3-5` (measured, 3 runs from seed 1): the naive loop
//! sends the dead provider 7 400 requests, backoff + jitter 460 (its
//! waits grow to the 60 s cap: it never burns its 20 attempts in two
//! minutes); the throttle, which hears overloads too, sheds to its least
//! rate (0.5 a second, 67 requests), header pacing 75, and all guards
//! half as many, 35: the breaker opens once the window's 30 s of
//! successes are outvoted, and a call that waited in the throttle's queue
//! or a cooldown's asks it again before it is sent. It also stops calls at
//! once (p99 9 s instead of 132 s), and the agents switch route; its
//! open period (15 s) is what the recovery pays: back to 90 % of quota
//! 9.3 s after the outage (mean), 84 % of the quota the minute after
//! (with `open_for` 5 s: 2–4 s and 94 %). Alone on the anchor
//! (`backoff + breaker`) it cuts the anchor's retries once open (to the
//! calls already in their backoff, and a probe every 15 s), after a storm
//! in the outage's first 20 s (259 requests in all). A longer outage
//! (`--minutes 12 --outage 3-9`): all guards send 51 requests into it,
//! header pacing 195, and both are back to 90 % about 10 s after it.
//!
//! With `--noise 10` (a tenth of requests answered 529 or 503 at random,
//! measured, 3 runs from seed 1; seeds 4, 7, 10: 93.4, 91.8, 94.2 %): all
//! guards serve 94.3 % of the quota with 0.0 % of requests answered 429,
//! and the breaker refuses nothing. The provider's headers govern the
//! rate: an overload gives back its start under the window and cuts the
//! adaptive rate only in a run of three (an outage), a success puts the
//! rate back to what the headers allow, and the cooldown releases its
//! waiters no faster than a 429's headers say the bucket refills. (Before,
//! each overload cut the rate by 0.7 towards its least: 61.8 % of the
//! quota, 3.2 % answered 429 in bursts at each cooldown's reopening.)
//!
//! Flags:
//!
//! - `--workers N` (default 64), `--minutes M` (default 10);
//! - `--penalty`: a request during a block extends it (rejected requests are
//!   charged to the bucket, which goes into debt);
//! - `--seed S` (default 1): run `i` uses `S + i`; `--runs R` (default 3);
//! - `--strategy NAME`: only `naive`, `backoff`, `cooldown`, `throttle`,
//!   `headers`, `all` or `breaker` (default: every one but `breaker`, side
//!   by side; with `--outage`, `breaker` too: the anchor plus the breaker
//!   alone, without the throttle);
//! - `--rpm N`, `--burst N`: the quota (default 600, 20);
//! - `--outage START-END` (virtual minutes, e.g. `3-5`; default none): the
//!   provider is down then, answering every request overloaded (a 529,
//!   `Transient`, no header). The table then adds the requests sent during
//!   it, the calls refused before their first attempt (the open breaker's:
//!   the task switched route), the goodput in the minute after it and how
//!   long after it a 10 s window is back at 90 % of quota; the windows of
//!   goodput over time are before, during, the minute after, and the rest;
//! - `--breaker RATIO,MIN` (default `50,10`): the breaker opens at RATIO %
//!   failures of at least MIN calls in its 30 s window;
//! - `--noise PERCENT` (default 0): that share of requests is answered
//!   529 (overloaded) or 503 at random, half each, whatever the fleet's
//!   rate — the routine noise of a busy provider, which no guard should
//!   take for its own excess;
//! - `--svg PATH`: where the chart of requests/s and 429s/s goes (default
//!   `target/fleet.svg`; `--svg none` for no chart; with an outage the
//!   lower panel counts 529s with the 429s);
//! - `--redis URL` (feature `redis`): the workers as `--processes N` OS
//!   processes (default 4), in real time for `--seconds S` a row (default
//!   20), against a provider on loopback keeping the same quota, their
//!   guards each process's own or shared through the Redis at `URL`
//!   (`examples/fleet/procs.rs`); one run a row, no chart, no outage.

use std::error::Error;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use plotters::prelude::*;

// Shared with tests/fleet.rs, which checks the ranking this prints.
#[path = "fleet/sim.rs"]
mod sim;

// `--redis`: the fleet as OS processes sharing their guards through Redis.
#[cfg(feature = "redis")]
#[path = "fleet/procs.rs"]
mod procs;

use sim::{Config, Outcome, Strategy, Summary};

/// Which count of a bin a chart panel draws.
type Pick = fn(&sim::Bin) -> u32;

/// Width of one point of the chart: requests/s averaged over it.
const CHART_BIN: usize = 10;

struct Args {
    config: Config,
    seed: u64,
    runs: u32,
    strategies: Vec<Strategy>,
    svg: Option<String>,
    /// `--redis URL`, `--processes N`, `--seconds S`.
    redis: Option<String>,
    processes: u32,
    seconds: u32,
}

const USAGE: &str = "usage: fleet [--workers N] [--minutes M] [--penalty] [--seed S] [--runs R] \
                     [--strategy naive|backoff|cooldown|throttle|headers|all|breaker] \
                     [--rpm N] [--burst N] [--outage START-END] [--noise PERCENT] [--breaker RATIO,MIN] [--svg PATH|none] \
                     [--redis URL [--processes N] [--seconds S]]";

/// What `--redis` says without the feature.
#[cfg(not(feature = "redis"))]
const NO_REDIS: &str = "--redis needs the `redis` feature: cargo run --release --example fleet \
                        --features redis -- --redis redis://127.0.0.1:6379";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        config: Config::new(sim::WORKERS, 10),
        seed: 1,
        runs: 3,
        strategies: Strategy::ALL.to_vec(),
        svg: Some("target/fleet.svg".to_owned()),
        redis: None,
        processes: 4,
        seconds: 20,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            "--penalty" => {
                args.config = args.config.penalty(true);
                continue;
            }
            _ => {}
        }
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = |v: &str| {
            v.trim()
                .parse::<u64>()
                .map_err(|e| format!("{flag}: {v:?} is not a count ({e})"))
        };
        let small = |v: &str| {
            u32::try_from(number(v)?)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{flag}: {v:?} is out of range"))
        };
        match flag.as_str() {
            "--workers" => args.config.workers = small(&value)?,
            "--minutes" => {
                args.config.duration = Duration::from_secs(u64::from(small(&value)?) * 60);
            }
            "--seed" => args.seed = number(&value)?,
            "--runs" => args.runs = small(&value)?,
            "--rpm" => args.config.rpm = small(&value)?,
            "--burst" => args.config.burst = small(&value)?,
            "--strategy" => {
                let strategy = Strategy::from_flag(&value)
                    .ok_or_else(|| format!("unknown strategy {value:?}\n{USAGE}"))?;
                args.strategies = vec![strategy];
            }
            "--outage" => {
                let (from, to) = value
                    .split_once('-')
                    .ok_or_else(|| format!("{flag}: {value:?} is not START-END (minutes)"))?;
                let (from, to) = (number(from)?, number(to)?);
                if from >= to {
                    return Err(format!("{flag}: {value:?} ends before it starts"));
                }
                let minute = Duration::from_secs(60);
                args.config = args.config.outage(
                    minute * u32::try_from(from).map_err(|e| format!("{flag}: {e}"))?,
                    minute * u32::try_from(to).map_err(|e| format!("{flag}: {e}"))?,
                );
            }
            "--noise" => {
                // A percentage, tenths allowed: `10`, `2.5`.
                let percent: f64 = value
                    .trim()
                    .parse()
                    .ok()
                    .filter(|p: &f64| (0.0..=100.0).contains(p))
                    .ok_or_else(|| format!("{flag}: {value:?} is not a percentage (0 to 100)"))?;
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let permille = (percent * 10.0).round() as u32;
                args.config = args.config.noise(permille);
            }
            "--breaker" => {
                // `RATIO,MIN`: opens at RATIO % failures of at least MIN calls.
                let parsed = value.split_once(',').and_then(|(ratio, min)| {
                    let ratio: u32 = ratio
                        .trim()
                        .parse()
                        .ok()
                        .filter(|r| (1..=100).contains(r))?;
                    let min: u32 = min.trim().parse().ok().filter(|m| *m >= 1)?;
                    Some((ratio, min))
                });
                let (ratio, min) = parsed.ok_or_else(|| {
                    format!("{flag}: {value:?} is not RATIO,MIN (a percentage 1 to 100, calls ≥ 1)")
                })?;
                args.config = args.config.breaker(ratio, min);
            }
            "--svg" => args.svg = (value != "none").then_some(value),
            "--redis" => args.redis = Some(value),
            "--processes" => args.processes = small(&value)?,
            "--seconds" => args.seconds = small(&value)?,
            _ => return Err(format!("unknown flag {flag}\n{USAGE}")),
        }
    }
    if args.redis.is_some() && args.config.outage.is_some() {
        return Err("--outage is for the in-process run, not with --redis".to_owned());
    }
    if let Some((_, to)) = args.config.outage {
        if to > args.config.duration {
            return Err(format!(
                "--outage ends after the run's {} min",
                args.config.duration.as_secs() / 60
            ));
        }
        // The breaker alone too, beside the anchor, unless one was asked.
        if args.strategies == Strategy::ALL {
            args.strategies.push(Strategy::Breaker);
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    #[cfg(feature = "redis")]
    if let Some(code) = procs::child_if_asked() {
        return code;
    }
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(redis) = &args.redis {
        #[cfg(feature = "redis")]
        return procs::run(&procs::Options {
            redis: redis.clone(),
            processes: args.processes,
            seconds: args.seconds,
            config: args.config,
            seed: args.seed,
            strategies: args.strategies,
        });
        #[cfg(not(feature = "redis"))]
        {
            let _ = (redis, args.processes, args.seconds);
            eprintln!("{NO_REDIS}");
            return ExitCode::FAILURE;
        }
    }
    let config = args.config;
    let minutes = config.duration.as_secs() / 60;
    println!(
        "{} workers × {minutes} virtual min, quota {} req/min (burst {}){}{}{}; demand ≈ {:.0} req/s \
         = {:.1}× quota; {} run(s) from seed {}\n",
        config.workers,
        config.rpm,
        config.burst,
        if config.penalty {
            ", penalty mode (requests during a block extend it)"
        } else {
            ""
        },
        if config.noise > 0 {
            format!(
                ", noise {:.1} % (529/503 at random)",
                f64::from(config.noise) / 10.0
            )
        } else {
            String::new()
        },
        config.outage.map_or_else(String::new, |(from, to)| format!(
            ", provider down {}–{} min (every request answered overloaded)",
            minutes_label(from),
            minutes_label(to)
        )),
        config.demand(),
        config.demand() / (f64::from(config.rpm) / 60.0),
        args.runs,
        args.seed,
    );

    let started = Instant::now();
    let results = run_all(&args);
    let wall = started.elapsed();

    // The outage's columns only with one: without, the table is as it was.
    let outage = config.outage.is_some();
    println!(
        "| strategy | goodput (% quota) | 429s (% req) | p50 call (s) | p99 call (s) | tasks | calls given up | Jain | req/s | wall (s) |{}",
        if outage {
            " req in outage | switched route | goodput 1 min after (% quota) | back to 90 % after (s) |"
        } else {
            ""
        }
    );
    println!(
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|{}",
        if outage { "---:|---:|---:|---:|" } else { "" }
    );
    for (strategy, summary, _, wall) in &results {
        let extra = if outage {
            format!(
                " {:.0} | {:.0} | {:.1} | {} |",
                summary.outage_requests,
                summary.refused,
                summary.after,
                summary
                    .recovered
                    .map_or_else(|| "never".to_owned(), |s| format!("{s:.1}")),
            )
        } else {
            String::new()
        };
        println!(
            "| {} | {:.1} | {:.1} | {:.2} | {:.2} | {:.0} | {:.0} | {:.3} | {:.1} | {:.2} |{extra}",
            strategy.name(),
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
    if outage {
        println!(
            "\nreq in outage: requests the provider received while down (all answered 529). \
             switched route: calls the open breaker refused before their first attempt (the \
             task goes elsewhere; not counted in tasks). back to 90 %: from the outage's end \
             to the first {} s window serving 90 % of quota (mean of the runs).",
            sim::RECOVERED.as_secs()
        );
    }

    // Goodput in four windows of the run (seed's first run): how it holds;
    // with an outage, before it, during it, the minute after, and the rest.
    let window = config.duration / 4;
    let rps = f64::from(config.rpm) / 60.0;
    println!("\ngoodput (% quota) over time, first run:\n");
    let edges: Vec<_> = match config.outage {
        Some((from, to)) => {
            let next = (to + Duration::from_secs(60)).min(config.duration);
            [
                (Duration::ZERO, from),
                (from, to),
                (to, next),
                (next, config.duration),
            ]
            .into_iter()
            .filter(|(a, b)| a < b)
            .collect()
        }
        None => (0..4u32).map(|i| (window * i, window * (i + 1))).collect(),
    };
    let head: String = edges
        .iter()
        .map(|(a, b)| format!(" {}–{} min |", minutes_label(*a), minutes_label(*b)))
        .collect();
    println!("| strategy |{head}");
    println!("|---|{}", "---:|".repeat(edges.len()));
    for (strategy, _, out, _) in &results {
        let cells: String = edges
            .iter()
            .map(|&(a, b)| format!(" {:.1} |", out.goodput_between(a, b, rps)))
            .collect();
        println!("| {} |{cells}", strategy.name());
    }

    println!(
        "\nsimulated {} strategies × {} run(s) of {} workers × {minutes} min in {:.2} s wall \
         ({} thread(s), a run each at a time)",
        results.len(),
        args.runs,
        config.workers,
        wall.as_secs_f64(),
        threads(results.len() * args.runs as usize),
    );

    if let Some(path) = &args.svg {
        if let Some(dir) = std::path::Path::new(path).parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = chart(path, &args, &results) {
            eprintln!("cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
        println!("wrote {path}");
    }
    ExitCode::SUCCESS
}

/// Whole minutes as such, else to a tenth.
fn minutes_label(d: Duration) -> String {
    let secs = d.as_secs();
    if secs.is_multiple_of(60) {
        format!("{}", secs / 60)
    } else {
        format!("{:.1}", d.as_secs_f64() / 60.0)
    }
}

/// Every strategy's mean and first run, and the wall time its runs took.
///
/// Each run (a strategy and a seed) is a job, on its own current-thread
/// runtime; as many threads as the machine has cores take the jobs, the
/// dearest strategies' first ([`cost_rank`]), so the cores finish about
/// together. No more threads than cores: a run at 10 000 workers keeps
/// some 8 MB of tasks and timers, touched in no order, and runs beyond
/// the cores would only be switched in and out and share the caches (a
/// thread per strategy, as before, spent more CPU time than the same runs
/// one after another). The means are taken in the seeds' order
/// ([`Summary::mean`]): the figures do not depend on which run finished
/// first.
fn run_all(args: &Args) -> Vec<(Strategy, Summary, Outcome, Duration)> {
    let mut jobs: Vec<(usize, u32)> = (0..args.strategies.len())
        .flat_map(|s| (0..args.runs).map(move |run| (s, run)))
        .collect();
    jobs.sort_by_key(|&(s, run)| (cost_rank(args.strategies[s]), s, run));
    let threads = threads(jobs.len());
    let next = AtomicUsize::new(0);
    let done: Vec<Done> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| run_jobs(args, &jobs, &next)))
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut by_strategy: Vec<Vec<_>> = args.strategies.iter().map(|_| Vec::new()).collect();
    for job in done {
        by_strategy[job.0].push(job);
    }
    args.strategies
        .iter()
        .zip(by_strategy)
        .map(|(&strategy, mut runs)| {
            runs.sort_by_key(|&(_, run, ..)| run);
            let summaries: Vec<Summary> = runs.iter().map(|&(_, _, summary, ..)| summary).collect();
            let mean = Summary::mean(&summaries).expect("one run at least");
            let wall = runs.iter().map(|&(.., wall)| wall).sum();
            let first = runs
                .into_iter()
                .find_map(|(.., first, _)| first)
                .expect("every strategy's first run");
            (strategy, mean, first, wall)
        })
        .collect()
}

/// A run done: its strategy (an index into `Args::strategies`) and run,
/// its figures, its outcome if it is the strategy's first run, and its
/// wall time.
type Done = (usize, u32, Summary, Option<Outcome>, Duration);

/// One of [`run_all`]'s threads: takes the next job of `jobs` (`next`)
/// until there is none, and runs it.
fn run_jobs(args: &Args, jobs: &[(usize, u32)], next: &AtomicUsize) -> Vec<Done> {
    let mut done = Vec::new();
    while let Some(&(s, run)) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
        let started = Instant::now();
        let out = sim::simulate(
            args.strategies[s],
            args.config,
            args.seed.wrapping_add(u64::from(run)),
        );
        let summary = Summary::of(&out, args.config);
        let first = (run == 0).then_some(out);
        done.push((s, run, summary, first, started.elapsed()));
    }
    done
}

/// The threads [`run_all`] runs `jobs` runs on: one a core, no more than
/// the runs.
fn threads(jobs: usize) -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(jobs)
        .max(1)
}

/// The order the runs are started in: the dearest strategies first, as
/// measured at 10 000 workers (the naive loop sends some 10 000 requests a
/// second; with header pacing the cooldown turns most calls away, each
/// worker asking again after its tool time, and the throttle's queue
/// wakes its waiters; the backoff's and the cooldown's waits are long).
fn cost_rank(strategy: Strategy) -> u8 {
    match strategy {
        Strategy::Naive => 0,
        Strategy::AllGuards => 1,
        Strategy::HeaderPacing => 2,
        Strategy::Throttle => 3,
        Strategy::Breaker => 4,
        Strategy::Backoff => 5,
        Strategy::Cooldown => 6,
        Strategy::Admission => 7,
    }
}

/// Two panels from each strategy's first run: requests/s and 429s/s, each
/// averaged over `CHART_BIN` seconds, on log axes (the naive loop sends an
/// order of magnitude more than the quota; a guarded fleet gets a few 429s).
fn chart(
    path: &str,
    args: &Args,
    results: &[(Strategy, Summary, Outcome, Duration)],
) -> Result<(), Box<dyn Error>> {
    let colors = [
        RED,
        BLACK,
        BLUE,
        GREEN,
        MAGENTA,
        CYAN,
        RGBColor(255, 140, 0),
    ];
    let config = args.config;
    let minutes = config.duration.as_secs_f64() / 60.0;
    let series = |out: &Outcome, pick: Pick| -> Vec<(f64, f64)> {
        out.over_time
            .chunks(CHART_BIN)
            .enumerate()
            .map(|(i, bins)| {
                let sum: u32 = bins.iter().map(pick).sum();
                #[allow(clippy::cast_precision_loss)]
                let at = (i * CHART_BIN) as f64 / 60.0;
                #[allow(clippy::cast_precision_loss)]
                let width = bins.len() as f64;
                (at, f64::from(sum) / width)
            })
            .collect()
    };
    let floor = 0.1;
    let peak = results
        .iter()
        .flat_map(|(_, _, out, _)| series(out, |b| b.requests))
        .map(|(_, y)| y)
        .fold(10.0, f64::max)
        * 1.5;

    let root = SVGBackend::new(path, (960, 900)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        &format!(
            "{} workers, quota {} req/min (burst {}){}",
            config.workers,
            config.rpm,
            config.burst,
            if config.penalty { ", penalty mode" } else { "" }
        ),
        ("sans-serif", 24),
    )?;
    let (top, bottom) = root.split_vertically(440);
    let panels: [(_, &str, Pick); 2] = [
        (&top, "requests/s", |b| b.requests),
        if config.outage.is_some() {
            (&bottom, "429s + 529s/s", |b| b.rejected + b.overloaded)
        } else {
            (&bottom, "429s/s", |b| b.rejected)
        },
    ];
    for (area, what, pick) in panels {
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!(
                    "{what}, {CHART_BIN} s means (quota: {:.0}/s)",
                    f64::from(config.rpm) / 60.0
                ),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..minutes, (floor..peak).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("virtual time (min)")
            .y_desc(format!("{what} (log)"))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y}"))
            .draw()?;
        let quota = f64::from(config.rpm) / 60.0;
        let grey = RGBColor(150, 150, 150);
        chart
            .draw_series(LineSeries::new(
                [(0.0, quota), (minutes, quota)],
                grey.stroke_width(1),
            ))?
            .label("quota")
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], grey.stroke_width(1)));
        for ((strategy, _, out, _), color) in results.iter().zip(colors) {
            let points = series(out, pick)
                .into_iter()
                .map(|(x, y)| (x, y.max(floor)));
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(1)))?
                .label(strategy.name())
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 24, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}
