//! The thundering-herd experiment of Marc Brooker's "Exponential Backoff And
//! Jitter" (AWS Architecture Blog, 2015), as a virtual-time discrete-event
//! simulation.
//!
//! `clients` clients start at the same instant and each wants to update one
//! shared row once, with optimistic concurrency: read the row's version, then
//! write conditionally on that version. A write succeeds only if no other
//! write succeeded since its read; a client whose write fails backs off with
//! its strategy and starts over with a fresh read. There is no attempt limit:
//! every client eventually succeeds.
//!
//! Time is virtual (integer nanoseconds): events sit in a binary heap ordered
//! by the instant they reach the server, so nothing sleeps and 10 000 clients
//! take seconds, not hours. Every backoff is drawn by the runtime's own
//! formula, [`tenacious::backoff_delay`], from a seeded RNG: the same seed
//! gives the same run.
//!
//! Shared by `examples/herd.rs` and `tests/herd.rs`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use tenacious::{Jitter, backoff_delay};

/// The first backoff ceiling, as in the original experiment.
pub const BASE: Duration = Duration::from_millis(5);
/// The ceiling of any backoff, as in the original experiment.
pub const CAP: Duration = Duration::from_secs(2);
/// Shortest one-way network delay.
pub const NET_MIN: Duration = Duration::from_millis(8);
/// Longest one-way network delay. The original drew `|normal(10 ms, 2 ms)|`;
/// a uniform 8–12 ms has the same mean and keeps the variation that stops
/// un-jittered clients from staying in perfect lockstep.
pub const NET_MAX: Duration = Duration::from_millis(12);

/// The narrowest bin of [`Outcome::calls_over_time`]: the longest run
/// (10 000 clients without jitter, about 40 virtual minutes) then needs a
/// few million bins, not trillions.
pub const MIN_BIN: Duration = Duration::from_millis(1);

/// How a client waits after a failed conditional write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Read again at once.
    NoBackoff,
    /// Capped exponential backoff without jitter (`Jitter::None`).
    Exponential,
    /// `Jitter::Equal`.
    Equal,
    /// `Jitter::Full`.
    Full,
    /// `Jitter::Decorrelated`.
    Decorrelated,
}

impl Strategy {
    /// Every strategy, in the order tables and charts list them.
    pub const ALL: [Self; 5] = [
        Self::NoBackoff,
        Self::Exponential,
        Self::Equal,
        Self::Full,
        Self::Decorrelated,
    ];

    /// A short label for tables and legends.
    pub const fn name(self) -> &'static str {
        match self {
            Self::NoBackoff => "no backoff",
            Self::Exponential => "exponential, no jitter",
            Self::Equal => "equal jitter",
            Self::Full => "full jitter",
            Self::Decorrelated => "decorrelated jitter",
        }
    }

    /// The runtime's jitter and base for this strategy. "No backoff" is the
    /// runtime with a zero base: every formula then yields zero, so all five
    /// strategies go through the same function.
    const fn backoff(self) -> (Jitter, Duration) {
        match self {
            Self::NoBackoff => (Jitter::None, Duration::ZERO),
            Self::Exponential => (Jitter::None, BASE),
            Self::Equal => (Jitter::Equal, BASE),
            Self::Full => (Jitter::Full, BASE),
            Self::Decorrelated => (Jitter::Decorrelated, BASE),
        }
    }
}

/// What one simulated run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Conditional writes the server received, failed ones included: the
    /// "calls" of the original experiment. Every write follows its own read,
    /// so the server handled twice as many requests.
    pub calls: u64,
    /// Writes that succeeded: one per client when the run is over.
    pub successes: u64,
    /// When the last client learned that its write succeeded.
    pub completion: Duration,
    /// The longest single backoff any client waited.
    pub longest_wait: Duration,
    /// `calls_over_time[i]`: writes that reached the server during
    /// `[i * bin, (i + 1) * bin)`.
    pub calls_over_time: Vec<u64>,
    /// The width of a `calls_over_time` bin.
    pub bin: Duration,
}

/// A write reaching the server. Packed into one integer, so the heap
/// compares plain numbers: the instant in the high 64 bits, the client in
/// the low ones. Simultaneous writes thus go in client order, which keeps
/// runs reproducible.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Write(u128);

impl Write {
    const fn new(at: u64, client: u32) -> Self {
        Self((at as u128) << 64 | client as u128)
    }

    // The fields were packed by `new`, so each truncation is exact.
    #[allow(clippy::cast_possible_truncation)]
    const fn at(self) -> u64 {
        (self.0 >> 64) as u64
    }

    #[allow(clippy::cast_possible_truncation)]
    const fn client(self) -> u32 {
        self.0 as u32
    }
}

/// What the simulation keeps per client.
#[derive(Debug, Clone, Copy)]
struct Client {
    /// When its last read reached the server.
    read_at: u64,
    /// Failed writes so far: the retry number of the next backoff.
    retries: u32,
    /// Its last backoff (`base` before the first), for decorrelated jitter.
    prev: Duration,
}

/// Runs the experiment once: `clients` clients, backing off by `strategy`,
/// with randomness (network delays and jitter) from `seed`; write counts are
/// binned every `bin` (at least [`MIN_BIN`]).
///
/// Only writes are events. A read changes nothing on the server, so instead
/// of being an event of its own it is remembered by the instant it arrived:
/// the write then succeeds if no write succeeded after that instant (a read
/// sees a write that arrived at the same instant). Writes are handled in
/// time order, so every write that could conflict has been decided by then.
/// The client's own steps (answer in, next request out, or failure in,
/// backoff, read out) take no time, so each attempt is one event at the
/// instant its write arrives: four hops, plus the backoff before a retry.
#[must_use]
pub fn simulate(strategy: Strategy, clients: u32, seed: u64, bin: Duration) -> Outcome {
    let (jitter, base) = strategy.backoff();
    let mut rng = SmallRng::seed_from_u64(seed);
    let (net_min, net_max) = (nanos(NET_MIN), nanos(NET_MAX));
    let net = move |rng: &mut SmallRng| rng.random_range(net_min..=net_max);
    let bin_nanos = nanos(bin.max(MIN_BIN));

    let mut states = Vec::with_capacity(clients as usize);
    let mut queue = BinaryHeap::with_capacity(clients as usize);
    for client in 0..clients {
        // Everyone starts at instant zero: the herd.
        let read_at = net(&mut rng);
        states.push(Client {
            read_at,
            retries: 0,
            prev: base,
        });
        let write_at = read_at + net(&mut rng) + net(&mut rng);
        queue.push(Reverse(Write::new(write_at, client)));
    }

    let mut last_success: Option<u64> = None;
    let mut out = Outcome {
        calls: 0,
        successes: 0,
        completion: Duration::ZERO,
        longest_wait: Duration::ZERO,
        calls_over_time: Vec::new(),
        bin: Duration::from_nanos(bin_nanos),
    };
    // A write makes at most one successor, for the same client, so the
    // successor replaces it at the top of the heap: one sift instead of a
    // pop and a push.
    while let Some(mut top) = queue.peek_mut() {
        let Reverse(write) = *top;
        let (now, id) = (write.at(), write.client());
        let state = &mut states[id as usize];

        out.calls += 1;
        let slot = usize::try_from(now / bin_nanos).unwrap_or(usize::MAX);
        if slot >= out.calls_over_time.len() {
            out.calls_over_time.resize(slot.saturating_add(1), 0);
        }
        out.calls_over_time[slot] += 1;

        let reply_at = now.saturating_add(net(&mut rng));
        if last_success.is_none_or(|at| at <= state.read_at) {
            last_success = Some(now);
            out.successes += 1;
            out.completion = out.completion.max(Duration::from_nanos(reply_at));
            PeekMut::pop(top);
        } else {
            state.retries = state.retries.saturating_add(1);
            state.prev = backoff_delay(jitter, base, CAP, state.retries, state.prev, &mut rng);
            out.longest_wait = out.longest_wait.max(state.prev);
            state.read_at = reply_at
                .saturating_add(nanos(state.prev))
                .saturating_add(net(&mut rng));
            let write_at = state
                .read_at
                .saturating_add(net(&mut rng))
                .saturating_add(net(&mut rng));
            *top = Reverse(Write::new(write_at, id));
        }
    }
    out
}

/// The mean of `runs` runs (seeds `seed`, `seed + 1`, …).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Mean conditional writes per run.
    pub calls: f64,
    /// Mean completion time per run, in seconds.
    pub completion_secs: f64,
}

/// Runs the experiment `runs` times (at least once) and averages.
#[must_use]
pub fn average(strategy: Strategy, clients: u32, seed: u64, runs: u32) -> Summary {
    let runs = runs.max(1);
    let (mut calls, mut secs) = (0.0, 0.0);
    for run in 0..runs {
        let out = simulate(
            strategy,
            clients,
            seed.wrapping_add(u64::from(run)),
            Duration::MAX,
        );
        // Exact below 2^53 calls, far beyond any run that finishes.
        #[allow(clippy::cast_precision_loss)]
        let run_calls = out.calls as f64;
        calls += run_calls;
        secs += out.completion.as_secs_f64();
    }
    let runs = f64::from(runs);
    Summary {
        calls: calls / runs,
        completion_secs: secs / runs,
    }
}

/// Whole nanoseconds, saturating (every duration here is far below 584 years).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
