//! What a run of the fleet simulation produced, and its summary over seeds (see `sim.rs`).
#![allow(clippy::wildcard_imports)]

use super::*;

/// What one run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Requests the provider received.
    pub requests: u64,
    /// Of them, answered 429.
    pub rejected: u64,
    /// Of them, answered overloaded (during the outage) or 529/503 by the
    /// noise.
    pub overloaded: u64,
    /// Of them, served.
    pub served: u64,
    /// Requests the quota admitted over the run ([`Config::capacity`]).
    pub capacity: f64,
    /// Every logical call that succeeded: from its start to its answer,
    /// retries and guard waits included, sorted.
    pub latencies: Vec<Duration>,
    /// Logical calls the policy gave up on (their task was abandoned).
    pub gave_up: u64,
    /// Logical calls a guard refused before their first attempt (their
    /// task switched route).
    pub refused: u64,
    /// Tasks each worker completed.
    pub tasks: Vec<u32>,
    /// Per [`BIN`]: requests, 429s, overloads and served requests.
    pub over_time: Vec<Bin>,
}

/// One [`BIN`] of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bin {
    /// Requests received.
    pub requests: u32,
    /// Of them, answered 429.
    pub rejected: u32,
    /// Of them, answered overloaded.
    pub overloaded: u32,
    /// Of them, served.
    pub served: u32,
}

impl Outcome {
    /// Served requests over the quota's capacity, in %.
    #[must_use]
    pub fn goodput(&self) -> f64 {
        percent(self.served, self.capacity)
    }

    /// The share of requests answered 429, in %.
    #[must_use]
    pub fn rejected_share(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let requests = self.requests.max(1) as f64;
        percent(self.rejected, requests)
    }

    /// The `q`-quantile (0..=1) of the call latencies (zero if none).
    #[must_use]
    pub fn latency(&self, q: f64) -> Duration {
        quantile(&self.latencies, q)
    }

    /// Tasks completed by the whole fleet.
    #[must_use]
    pub fn tasks_completed(&self) -> u64 {
        self.tasks.iter().map(|&n| u64::from(n)).sum()
    }

    /// Jain's fairness index over tasks completed per worker: 1 when all
    /// completed as many, `1 / n` when one did all (1 when none did).
    #[must_use]
    pub fn jain(&self) -> f64 {
        jain(&self.tasks)
    }

    /// Goodput (%) over `[from, to)` of the run.
    #[must_use]
    pub fn goodput_between(&self, from: Duration, to: Duration, rps: f64) -> f64 {
        let served = self.sum_between(from, to, |b| b.served);
        percent(served, rps * (to - from).as_secs_f64())
    }

    /// Requests received over `[from, to)` of the run.
    #[must_use]
    pub fn requests_between(&self, from: Duration, to: Duration) -> u64 {
        self.sum_between(from, to, |b| b.requests)
    }

    /// How long after `from` goodput is back: the first [`RECOVERED`]
    /// window starting then or later (by [`BIN`]s) whose goodput is at
    /// least 90 % of the quota; `None` if none is, to the run's end.
    #[must_use]
    pub fn recovered_after(&self, from: Duration, rps: f64) -> Option<Duration> {
        let end = BIN * u32::try_from(self.over_time.len()).ok()?;
        let mut at = from;
        while at + RECOVERED <= end {
            if self.goodput_between(at, at + RECOVERED, rps) >= 90.0 {
                return Some(at - from);
            }
            at += BIN;
        }
        None
    }

    fn sum_between(&self, from: Duration, to: Duration, pick: fn(&Bin) -> u32) -> u64 {
        let bins = |d: Duration| usize::try_from(d.as_secs() / BIN.as_secs()).unwrap_or(usize::MAX);
        self.over_time
            .iter()
            .take(bins(to))
            .skip(bins(from))
            .map(|b| u64::from(pick(b)))
            .sum()
    }
}

/// Jain's fairness index of `xs`.
#[must_use]
pub fn jain(xs: &[u32]) -> f64 {
    let sum: f64 = xs.iter().map(|&x| f64::from(x)).sum();
    let squares: f64 = xs.iter().map(|&x| f64::from(x).powi(2)).sum();
    if squares == 0.0 {
        1.0
    } else {
        #[allow(clippy::cast_precision_loss)]
        let n = xs.len() as f64;
        sum * sum / (n * squares)
    }
}

fn percent(n: u64, of: f64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let n = n as f64;
    if of > 0.0 { 100.0 * n / of } else { 0.0 }
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    // The nearest rank: an index below the length, exact for any run.
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The mean of `runs` runs (seeds `seed`, `seed + 1`, …).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Summary {
    /// Goodput, % of quota.
    pub goodput: f64,
    /// Requests answered 429, %.
    pub rejected: f64,
    /// Median call latency, seconds.
    pub p50: f64,
    /// 99th-percentile call latency, seconds.
    pub p99: f64,
    /// Tasks completed by the fleet.
    pub tasks: f64,
    /// Calls given up.
    pub gave_up: f64,
    /// Jain's index over tasks per worker.
    pub jain: f64,
    /// Requests per second received.
    pub rps: f64,
    /// Calls refused before their first attempt: tasks that switched route.
    pub refused: f64,
    /// Requests received during the outage (0 without one).
    pub outage_requests: f64,
    /// Goodput (% quota) in the minute after the outage (or what is left
    /// of the run; 0 without an outage).
    pub after: f64,
    /// Seconds from the outage's end to the first [`RECOVERED`] window at
    /// 90 % of quota ([`Outcome::recovered_after`]): `None` without an
    /// outage, or if a run never got there.
    pub recovered: Option<f64>,
}

impl Summary {
    /// One run's figures.
    #[must_use]
    pub fn of(out: &Outcome, config: Config) -> Self {
        #[allow(clippy::cast_precision_loss)]
        let count = |n: u64| n as f64;
        let rps = f64::from(config.rpm) / 60.0;
        let (outage_requests, after, recovered) = match config.outage {
            Some((from, to)) => {
                let to = to.min(config.duration);
                let next = (to + Duration::from_secs(60)).min(config.duration);
                (
                    count(out.requests_between(from.min(to), to)),
                    if next > to {
                        out.goodput_between(to, next, rps)
                    } else {
                        0.0
                    },
                    out.recovered_after(to, rps).map(|d| d.as_secs_f64()),
                )
            }
            None => (0.0, 0.0, None),
        };
        Self {
            goodput: out.goodput(),
            rejected: out.rejected_share(),
            p50: out.latency(0.5).as_secs_f64(),
            p99: out.latency(0.99).as_secs_f64(),
            tasks: count(out.tasks_completed()),
            gave_up: count(out.gave_up),
            jain: out.jain(),
            rps: count(out.requests) / config.duration.as_secs_f64().max(1e-9),
            refused: count(out.refused),
            outage_requests,
            after,
            recovered,
        }
    }

    /// The mean of the runs' figures, in the order given (the seeds'): the
    /// sums are taken in that order, so the figures do not depend on which
    /// run finished first. `None` without a run.
    #[must_use]
    pub fn mean(runs: &[Self]) -> Option<Self> {
        let (first, rest) = runs.split_first()?;
        let mut sum = *first;
        for s in rest {
            sum.goodput += s.goodput;
            sum.rejected += s.rejected;
            sum.p50 += s.p50;
            sum.p99 += s.p99;
            sum.tasks += s.tasks;
            sum.gave_up += s.gave_up;
            sum.jain += s.jain;
            sum.rps += s.rps;
            sum.refused += s.refused;
            sum.outage_requests += s.outage_requests;
            sum.after += s.after;
            sum.recovered = sum.recovered.zip(s.recovered).map(|(a, b)| a + b);
        }
        #[allow(clippy::cast_precision_loss)]
        let n = runs.len() as f64;
        Some(Self {
            goodput: sum.goodput / n,
            rejected: sum.rejected / n,
            p50: sum.p50 / n,
            p99: sum.p99 / n,
            tasks: sum.tasks / n,
            gave_up: sum.gave_up / n,
            jain: sum.jain / n,
            rps: sum.rps / n,
            refused: sum.refused / n,
            outage_requests: sum.outage_requests / n,
            after: sum.after / n,
            recovered: sum.recovered.map(|r| r / n),
        })
    }
}

/// Runs `runs` times (at least once) and averages; also returns the first
/// run's outcome (for windows and charts). The tests' (`tests/fleet.rs`):
/// the example runs the seeds side by side (its `run_all`).
#[must_use]
#[allow(dead_code)]
pub fn average(strategy: Strategy, config: Config, seed: u64, runs: u32) -> (Summary, Outcome) {
    let first = simulate(strategy, config, seed);
    let summaries: Vec<_> = std::iter::once(Summary::of(&first, config))
        .chain((1..runs.max(1)).map(|run| {
            let out = simulate(strategy, config, seed.wrapping_add(u64::from(run)));
            Summary::of(&out, config)
        }))
        .collect();
    let mean = Summary::mean(&summaries).expect("one run at least");
    (mean, first)
}
