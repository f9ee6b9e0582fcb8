//! What the table reports of a run, measured on its last phase (after the
//! step, for a step scenario), and the mean over seeds.
//!
//! - **Settle time (median)**: the limit is read every 10 ms; at each
//!   reading, the median of the readings of the 10 s before it (of the
//!   phase only, so fewer in its first 10 s) is within ±15 % of the cap
//!   or not. The settle time is when it last entered the band for good:
//!   from then to the phase's end, every rolling median is within it.
//!   Being a trailing median, it lags: a limit that reaches the band at
//!   once, from the phase's start, reads 10 ms, but one that reaches it at
//!   `t` reads about `2t` (the median needs half its window in the band).
//!   A single reading out of band (a probe) does not move it.
//! - **Settle time (strict)**: when the limit itself last entered ±15 %
//!   of the cap for good, every change counted, however short.
//! - **In band**: the share of the phase's last 30 s the limit spent
//!   within ±15 % of the cap, and its mean there.
//! - **429s**: the share of all the run's requests answered 429, the
//!   first burst included (a start limit above the cap sends `20 − C`
//!   requests the server must refuse, whatever the rule).
//! - **Goodput**: requests in service, averaged over the whole run, over
//!   the cap.
//! - **Latency**: the mean latency of the requests answered 200 in the
//!   last 30 s.
//!
//! "Never" means the phase ended out of band. The targets are in
//! [`meets`].

use std::time::Duration;

use super::sim::{BASE, RISE, Run, Scenario, TAIL, nanos};

/// The target settle time (by the rolling median, every seed).
pub const SETTLE: Duration = Duration::from_secs(30);
/// The target share of requests answered 429 (mean over the seeds).
pub const REJECTED: f64 = 0.02;
/// The target on a queueing server: the mean latency at most this many
/// times the server's latency at its cap (`BASE × (1 + RISE)`), the
/// latency guard's default tolerance.
pub const QUEUE_LATENCY: f64 = 2.0;

/// The band: within ±this share of the cap.
pub const BAND: f64 = 0.15;
/// The rolling median's window.
pub const WINDOW: Duration = Duration::from_secs(10);
/// How often the limit is read for the rolling median.
pub const READING: Duration = Duration::from_millis(10);

/// One run's measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// Settle time by the rolling median, `None` for never.
    pub settle: Option<Duration>,
    /// Settle time, strictly, `None` for never.
    pub strict: Option<Duration>,
    /// The share of the last 30 s in band.
    pub in_band: f64,
    /// The mean limit over the last 30 s.
    pub mean_limit: f64,
    /// The share of requests answered 429.
    pub rejected: f64,
    /// Goodput against the cap.
    pub goodput: f64,
    /// The mean latency of successes over the last 30 s.
    pub latency: Duration,
}

/// Whether `limit` is within ±15 % of `cap`.
#[must_use]
pub fn in_band(limit: u32, cap: u32) -> bool {
    (f64::from(limit) - f64::from(cap)).abs() <= BAND * f64::from(cap)
}

/// The limit's steps within `[start, end)`: `(from, to, limit)`.
fn segments(trace: &[(u64, u32)], start: u64, end: u64) -> Vec<(u64, u64, u32)> {
    let mut out = Vec::new();
    let first = trace
        .partition_point(|&(t, _)| t <= start)
        .saturating_sub(1);
    for (i, &(t, limit)) in trace.iter().enumerate().skip(first) {
        let from = t.max(start);
        let to = trace.get(i + 1).map_or(end, |&(next, _)| next.min(end));
        if from >= end {
            break;
        }
        if to > from {
            out.push((from, to, limit));
        }
    }
    out
}

/// Measures `run` of `scenario`.
#[must_use]
pub fn measure(run: &Run, scenario: Scenario) -> Measured {
    let (start, end, cap) = scenario.last_phase();
    let steps = segments(&run.trace, start, end);

    // Strict: after the last step out of band.
    let strict = match steps.last() {
        Some(&(_, _, limit)) if !in_band(limit, cap) => None,
        _ => Some(
            steps
                .iter()
                .filter(|&&(_, _, limit)| !in_band(limit, cap))
                .map(|&(_, to, _)| to - start)
                .max()
                .unwrap_or(0),
        ),
    };

    // The rolling median, on readings every 10 ms.
    let reading = nanos(READING);
    let window = usize::try_from(nanos(WINDOW) / reading).unwrap_or(usize::MAX);
    let mut readings = Vec::new();
    let mut i = 0;
    let mut t = start;
    while t < end {
        while steps[i].1 <= t {
            i += 1;
        }
        readings.push(steps[i].2);
        t += reading;
    }
    let (lo, hi) = (f64::from(cap) * (1.0 - BAND), f64::from(cap) * (1.0 + BAND));
    let (mut below, mut above) = (0_usize, 0_usize);
    let mut last_out = None;
    for (j, &limit) in readings.iter().enumerate() {
        below += usize::from(f64::from(limit) < lo);
        above += usize::from(f64::from(limit) > hi);
        if j >= window {
            let gone = f64::from(readings[j - window]);
            below -= usize::from(gone < lo);
            above -= usize::from(gone > hi);
        }
        let n = j.min(window - 1) + 1;
        let m = (n - 1) / 2;
        if !(below <= m && above < n - m) {
            last_out = Some(j);
        }
    }
    let settle = match last_out {
        Some(j) if j + 1 == readings.len() => None,
        Some(j) => Some(reading * (j as u64 + 1)),
        None => Some(0),
    };

    // The tail.
    let tail = end - nanos(TAIL);
    let (mut inside, mut sum) = (0_u64, 0.0);
    for (from, to, limit) in segments(&run.trace, tail, end) {
        if in_band(limit, cap) {
            inside += to - from;
        }
        sum += f64::from(limit) * (to - from) as f64;
    }
    let span = (end - tail) as f64;
    Measured {
        settle: settle.map(Duration::from_nanos),
        strict: strict.map(Duration::from_nanos),
        in_band: inside as f64 / span,
        mean_limit: sum / span,
        rejected: run.rejected_share(),
        goodput: run.goodput(),
        latency: run.latency,
    }
}

/// The mean of several runs' measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mean {
    /// Runs averaged.
    pub runs: u32,
    /// Runs whose limit settled by the rolling median.
    pub settled: u32,
    /// Their mean settle time.
    pub settle: Option<Duration>,
    /// The longest of them.
    pub settle_max: Option<Duration>,
    /// Runs whose limit settled strictly.
    pub strictly: u32,
    /// Their mean strict settle time.
    pub strict: Option<Duration>,
    /// Mean share of the last 30 s in band.
    pub in_band: f64,
    /// Mean limit over the last 30 s.
    pub mean_limit: f64,
    /// Mean share of 429s.
    pub rejected: f64,
    /// The largest share of 429s of a run.
    pub rejected_max: f64,
    /// Mean goodput.
    pub goodput: f64,
    /// Mean latency of successes over the last 30 s.
    pub latency: Duration,
}

/// The mean of `runs` (at least one).
#[must_use]
pub fn mean(runs: &[Measured]) -> Mean {
    let n = runs.len() as f64;
    let avg = |f: fn(&Measured) -> f64| runs.iter().map(f).sum::<f64>() / n;
    let times = |f: fn(&Measured) -> Option<Duration>| {
        let settled: Vec<Duration> = runs.iter().filter_map(f).collect();
        let count = u32::try_from(settled.len()).unwrap_or(u32::MAX);
        let mean = (count > 0).then(|| settled.iter().sum::<Duration>() / count);
        (count, mean, settled.iter().max().copied())
    };
    let (settled, settle, settle_max) = times(|m| m.settle);
    let (strictly, strict, _) = times(|m| m.strict);
    Mean {
        runs: u32::try_from(runs.len()).unwrap_or(u32::MAX),
        settled,
        settle,
        settle_max,
        strictly,
        strict,
        in_band: avg(|m| m.in_band),
        mean_limit: avg(|m| m.mean_limit),
        rejected: avg(|m| m.rejected),
        rejected_max: runs.iter().map(|m| m.rejected).fold(0.0, f64::max),
        goodput: avg(|m| m.goodput),
        latency: Duration::from_secs_f64(avg(|m| m.latency.as_secs_f64())),
    }
}

/// Whether `mean` meets the targets of `scenario`: on a server answering
/// 429, every run settled within [`SETTLE`] and at most [`REJECTED`] of the
/// requests answered 429 on average; on a queueing server, where there is
/// no 429 to find the cap by, the mean latency within [`QUEUE_LATENCY`] ×
/// the server's at its cap.
#[must_use]
pub fn meets(mean: &Mean, scenario: Scenario) -> bool {
    if scenario.queue {
        let at_cap = BASE.as_secs_f64() * (1.0 + RISE);
        return mean.latency.as_secs_f64() <= QUEUE_LATENCY * at_cap;
    }
    mean.settled == mean.runs
        && mean.settle_max.is_some_and(|t| t <= SETTLE)
        && mean.rejected <= REJECTED
}
