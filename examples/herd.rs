//! The thundering herd: how much load each backoff strategy puts on a
//! contended resource, and how long the herd takes to get through.
//!
//! N clients start together and each updates one shared row once, with an
//! optimistic read-then-conditional-write, retrying on conflict (the
//! experiment of Marc Brooker's "Exponential Backoff And Jitter"; the model is
//! described in `examples/herd/sim.rs`). Time is virtual and the backoffs come
//! from `tenacious::backoff_delay`, the formula `#[retry]` uses.
//!
//! ```sh
//! cargo run --example herd                        # 10, 100 and 1000 clients
//! cargo run --release --example herd -- --clients 10,100,1000,10000
//! cargo run --release --example herd -- --svg docs/herd.svg
//! ```
//!
//! Flags:
//!
//! - `--clients LIST`: comma-separated herd sizes (default `10,100,1000`;
//!   10 000 wants `--release`, where it takes about 2 s);
//! - `--seed N`: the first seed (default 1); run `i` uses `N + i`;
//! - `--runs N`: runs averaged per row (default: enough for about 10 000
//!   client-runs, so `10000 / clients`, at least 1);
//! - `--svg PATH`: also write a chart of writes over time per strategy;
//! - `--chart-clients N`: the herd size of the chart (default 1000).

use std::error::Error;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use plotters::prelude::*;

// Shared with tests/herd.rs, which checks the ranking this prints.
#[path = "herd/sim.rs"]
mod sim;

use sim::{Strategy, Summary, average, simulate};

/// Width of one bar of the chart's histogram.
const CHART_BIN: Duration = Duration::from_millis(100);

struct Args {
    clients: Vec<u32>,
    seed: u64,
    runs: Option<u32>,
    svg: Option<String>,
    chart_clients: u32,
}

const USAGE: &str = "usage: herd [--clients 10,100,1000] [--seed N] [--runs N] \
                     [--svg PATH] [--chart-clients N]";

/// The largest herd accepted: without backoff the writes grow with the
/// square of the herd, so 100 000 clients already take minutes.
const MAX_CLIENTS: u32 = 100_000;

fn check_herd(sizes: &[u32]) -> Result<(), String> {
    match sizes.iter().find(|&&n| n > MAX_CLIENTS) {
        Some(n) => Err(format!(
            "{n} clients is more than this simulation handles (at most {MAX_CLIENTS})"
        )),
        None => Ok(()),
    }
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        clients: vec![10, 100, 1000],
        seed: 1,
        runs: None,
        svg: None,
        chart_clients: 1000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = |v: &str| {
            v.trim()
                .parse::<u32>()
                .map_err(|e| format!("{flag}: {v:?} is not a count ({e})"))
        };
        match flag.as_str() {
            "--clients" => {
                args.clients = value.split(',').map(number).collect::<Result<_, _>>()?;
                check_herd(&args.clients)?;
            }
            "--seed" => {
                args.seed = value
                    .parse()
                    .map_err(|e| format!("--seed: {value:?} is not a u64 ({e})"))?;
            }
            "--runs" => args.runs = Some(number(&value)?.max(1)),
            "--svg" => args.svg = Some(value),
            "--chart-clients" => {
                args.chart_clients = number(&value)?;
                check_herd(&[args.chart_clients])?;
            }
            _ => return Err(format!("unknown flag {flag}\n{USAGE}")),
        }
    }
    Ok(args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
    };

    println!(
        "calls = conditional writes (each after its own read); completion = when the last \
         client's write succeeded; base {:?}, cap {:?}, network {:?}..{:?} each way\n",
        sim::BASE,
        sim::CAP,
        sim::NET_MIN,
        sim::NET_MAX
    );
    println!(
        "| clients | runs | strategy | calls | calls / client | vs full jitter | completion (s) |"
    );
    println!("|---:|---:|---|---:|---:|---:|---:|");
    let mut timings = Vec::new();
    for &clients in &args.clients {
        let runs = args
            .runs
            .unwrap_or_else(|| (10_000 / clients.max(1)).max(1));
        let started = Instant::now();
        let summaries = average_all(clients, args.seed, runs);
        timings.push((clients, runs, started.elapsed()));
        let full = summaries
            .iter()
            .find(|(s, _)| *s == Strategy::Full)
            .map_or(1.0, |(_, summary)| summary.calls.max(1.0));
        for (strategy, summary) in summaries {
            println!(
                "| {clients} | {runs} | {} | {:.0} | {:.1} | {:.2}× | {:.2} |",
                strategy.name(),
                summary.calls,
                summary.calls / f64::from(clients.max(1)),
                summary.calls / full,
                summary.completion_secs,
            );
        }
    }
    println!();
    for (clients, runs, wall) in timings {
        println!(
            "simulated {clients} clients × {runs} runs × 5 strategies in {:.2} s",
            wall.as_secs_f64()
        );
    }

    if let Some(path) = &args.svg {
        if let Err(e) = chart(path, args.chart_clients, args.seed) {
            eprintln!("cannot write {path}: {e}");
            return ExitCode::FAILURE;
        }
        println!("\nwrote {path}");
    }
    ExitCode::SUCCESS
}

/// Every strategy's mean over `runs` runs, one thread per strategy.
fn average_all(clients: u32, seed: u64, runs: u32) -> Vec<(Strategy, Summary)> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = Strategy::ALL
            .into_iter()
            .map(|strategy| scope.spawn(move || (strategy, average(strategy, clients, seed, runs))))
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// Two panels from one run per strategy: writes per `CHART_BIN` while the
/// jittered herds drain, then every strategy's cumulative writes over its
/// whole run (where each line ends is its completion time).
fn chart(path: &str, clients: u32, seed: u64) -> Result<(), Box<dyn Error>> {
    let colors = [RED, BLACK, BLUE, GREEN, MAGENTA];
    let runs: Vec<_> = Strategy::ALL
        .into_iter()
        .zip(colors)
        .map(|(strategy, color)| {
            (
                strategy,
                color,
                simulate(strategy, clients, seed, CHART_BIN),
            )
        })
        .collect();
    let bin_secs = CHART_BIN.as_secs_f64();
    // Bin indices and counts stay far below 2^53: the casts are exact.
    #[allow(clippy::cast_precision_loss)]
    let at = |i: usize| i as f64 * bin_secs;
    #[allow(clippy::cast_precision_loss)]
    let count = |n: u64| n as f64;

    // Without jitter the herd takes an order of magnitude longer than with
    // any other strategy; the rate panel shows the span the others need and
    // says where the slow one ends.
    let slowest = |keep: fn(Strategy) -> bool| {
        runs.iter()
            .filter(|(s, _, _)| keep(*s))
            .map(|(_, _, out)| out.completion.as_secs_f64())
            .fold(bin_secs, f64::max)
    };
    let window = (slowest(|s| s != Strategy::Exponential) * 1.1).ceil();
    let end = slowest(|_| true) * 1.05;
    let exponential_end = slowest(|s| s == Strategy::Exponential);

    let root = SVGBackend::new(path, (960, 900)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        &format!("{clients} clients updating one row with optimistic concurrency"),
        ("sans-serif", 24),
    )?;
    let (top, bottom) = root.split_vertically(460);

    // Zero bins sit on the floor of the log axis, so the gaps between the
    // bursts of un-jittered clients stay visible instead of vanishing.
    let floor = 0.5;
    let peak = runs
        .iter()
        .flat_map(|(_, _, out)| out.calls_over_time.iter().copied())
        .max()
        .map_or(10.0, |n| count(n) * 1.5);
    let mut rate = ChartBuilder::on(&top)
        .caption(
            format!(
                "writes per {} ms, first {window:.0} s (no jitter goes on to {exponential_end:.0} s)",
                CHART_BIN.as_millis()
            ),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(0.0..window, (floor..peak).log_scale())?;
    rate.configure_mesh()
        .x_desc("virtual time (s)")
        .y_desc("writes per bin (log)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    for (strategy, color, out) in &runs {
        let points = out
            .calls_over_time
            .iter()
            .enumerate()
            .map(|(i, &n)| (at(i), count(n).max(floor)))
            .take_while(|&(x, _)| x <= window);
        rate.draw_series(LineSeries::new(points, color.stroke_width(1)))?
            .label(strategy.name())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], color.stroke_width(2)));
    }
    rate.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;

    let total = runs
        .iter()
        .map(|(_, _, out)| count(out.calls))
        .fold(10.0, f64::max);
    // The herd's first writes all land in the first bin: the axis starts
    // just below the smallest of them.
    let first = runs
        .iter()
        .filter_map(|(_, _, out)| out.calls_over_time.first().copied())
        .min()
        .map_or(1.0, |n| count(n).max(1.0));
    let mut work = ChartBuilder::on(&bottom)
        .caption(
            "cumulative writes over the whole run (each line ends when its last client succeeds)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(
            (bin_secs..end).log_scale(),
            (first / 2.0..total * 1.5).log_scale(),
        )?;
    work.configure_mesh()
        .x_desc("virtual time (s, log)")
        .y_desc("writes so far (log)")
        .x_label_formatter(&|x| format!("{x}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    for (strategy, color, out) in &runs {
        let points = out
            .calls_over_time
            .iter()
            .enumerate()
            .scan(0, |sum, (i, &n)| {
                *sum += n;
                Some((at(i + 1), count(*sum).max(1.0)))
            });
        work.draw_series(LineSeries::new(points, color.stroke_width(2)))?
            .label(strategy.name())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 24, y)], color.stroke_width(2)));
    }
    work.configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
