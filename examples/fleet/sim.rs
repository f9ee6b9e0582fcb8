//! A fleet of agent workers sharing one provider's quota, in virtual time,
//! through the real retry loop.
//!
//! The provider is an in-process token bucket (default 600 requests/min,
//! burst 20) on tokio's clock. A request that finds a token is served after
//! a simulated model latency (200 ms – 1 s); one that finds none is answered
//! 429 at once (after a short network round trip) with `Retry-After` (whole
//! seconds, as the HTTP header has it) and the rate-limit headers
//! (`remaining`, `reset` — when the bucket is full again — and `limit`,
//! its size, as OpenAI and Anthropic send them). In *penalty* mode a rejected request is charged
//! to the bucket too, which may go into debt: requests during a block
//! extend it, as many real APIs do ("unsuccessful requests contribute to
//! your per-minute limit, so continuously resending a request won't work",
//! in OpenAI's words). A fleet that keeps asking faster than the quota then
//! never sees a token again.
//!
//! An optional *outage* ([`Config::outage`]) makes the provider as a whole
//! fail for a while: every request arriving then is answered overloaded
//! (an HTTP 529, Anthropic's `overloaded_error`) after a 429's short round
//! trip, without `Retry-After` or rate-limit headers, and without reaching
//! the quota (the bucket keeps refilling, full again when the outage ends).
//! The client reads it as a `Transient` error whose [`Signals`] say
//! `overloaded`: what the [`Breaker`] and the throttle hear. The error type
//! is refusable ([`Classify::refused`]), so an open breaker stops a call
//! before its first attempt; the agent then takes another route for the
//! task (a fallback model, a cached answer: not simulated), which counts
//! as *switched route*, not as completed, and starts its next task after
//! its tool time.
//!
//! Every call reads the answer the way its strategy's client does: the
//! naive loop reads no header, the others read `Retry-After`, and only the
//! header-pacing rows pass the rate-limit headers on as
//! [`tenacious::Signals`] (the headers of a 429; `Classify::signals` is
//! asked of errors only).
//!
//! `workers` workers each run agent tasks of 3–6 model calls, with 0–2 s of
//! tool work after each call; every call goes through
//! [`tenacious::Policy::retry`] with the strategy's policy and guards. The
//! whole fleet runs on a current-thread tokio runtime with the clock paused,
//! so time only advances when every worker waits: ten virtual minutes take
//! what the library's own work takes. The jitter RNG is seeded
//! ([`tenacious::seed_jitter`]) and so is every worker's own, so a seed
//! fixes the run.
//!
//! Shared by `examples/fleet.rs` and `tests/fleet.rs`; `examples/fleet/procs.rs`
//! (`--redis`) runs its workers as OS processes against its [`Bucket`].

use std::cell::{Cell, RefCell};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use tenacious::{
    AdaptiveLimit, Breaker, Classify, Concurrency, Cooldown, ErrorClass, Jitter, Policy, Refused,
    Signals, Task, Throttle,
};
use tokio::time::Instant;

// The simulation in parts: the provider, the fleet's run, and what a run
// produced. Included by path, so that `tests/fleet.rs` and the example
// read the same files.
#[path = "outcome.rs"]
mod outcome;
#[path = "provider.rs"]
mod provider;
#[path = "run.rs"]
mod run;

// The example and `tests/fleet.rs` each use some of these.
#[allow(unused_imports)]
pub use outcome::{Bin, Outcome, Summary, average, jain};
#[allow(unused_imports)]
pub use provider::{Answer, ApiError, Bucket};
pub use run::simulate;

/// Default quota: requests per minute.
pub const RPM: u32 = 600;
/// Default burst: the bucket's size.
pub const BURST: u32 = 20;
/// Default fleet size.
pub const WORKERS: u32 = 64;

/// A served call's model latency: uniform in this range.
pub const SERVICE: (Duration, Duration) = (Duration::from_millis(200), Duration::from_secs(1));
/// A 429's round trip: uniform in this range.
pub const REJECT: (Duration, Duration) = (Duration::from_millis(20), Duration::from_millis(60));
/// Tool work after each call: uniform in this range.
pub const THINK: (Duration, Duration) = (Duration::ZERO, Duration::from_secs(2));
/// Model calls per agent task: uniform in this range, both ends included.
pub const CALLS_PER_TASK: (u32, u32) = (3, 6);
/// Workers start spread over this long, not all at instant zero.
pub const RAMP: Duration = Duration::from_secs(2);
/// The width of a bin of [`Outcome::over_time`].
pub const BIN: Duration = Duration::from_secs(1);
/// The window [`Outcome::recovered_after`] measures goodput over.
pub const RECOVERED: Duration = Duration::from_secs(10);

/// How the fleet's calls retry, and which guards they share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// A loop that sleeps a fixed second after any failure, forever, and
    /// reads no header.
    Naive,
    /// Independent exponential backoff with full jitter, on top of the
    /// server's `Retry-After`: what backon, tenacity and the provider SDKs
    /// do. The anchor every other row is compared with.
    Backoff,
    /// The anchor plus a shared [`Cooldown`]: one 429 holds the whole fleet
    /// until its `Retry-After`, then releases it spread out.
    Cooldown,
    /// The anchor plus a shared adaptive throttle (CUBIC after a 429), not
    /// reading the rate-limit headers.
    Throttle,
    /// The anchor plus the throttle paced by the rate-limit headers.
    HeaderPacing,
    /// Every provider guard: cooldown, header-paced throttle, breaker.
    AllGuards,
    /// The anchor plus the breaker alone: what the breaker does without a
    /// throttle shedding the load first. Not in [`Strategy::ALL`] (its
    /// quota figures are the anchor's): `--strategy breaker`.
    Breaker,
    /// The anchor with the breaker and a concurrency limit that learns the
    /// provider's cap from its 429s (`Concurrency::adaptive`), each
    /// worker's agent task run in a `Task` so that the calls of tasks in
    /// progress go before the first calls of new ones. No cooldown or
    /// throttle: their queues are first come first served, and would put
    /// a task's next call behind every new task's first (with them, no
    /// task completed at 4 096 workers). Not in [`Strategy::ALL`]:
    /// `--strategy admission`.
    Admission,
}

impl Strategy {
    /// Every strategy, in the order tables and charts list them.
    pub const ALL: [Self; 6] = [
        Self::Naive,
        Self::Backoff,
        Self::Cooldown,
        Self::Throttle,
        Self::HeaderPacing,
        Self::AllGuards,
    ];

    /// A short label for tables and legends.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Naive => "naive 1 s loop",
            Self::Backoff => "backoff + jitter",
            Self::Cooldown => "+ cooldown",
            Self::Throttle => "+ throttle",
            Self::HeaderPacing => "+ header pacing",
            Self::AllGuards => "all guards",
            Self::Breaker => "backoff + breaker",
            Self::Admission => "all + admission",
        }
    }

    /// The name `--strategy` takes.
    pub const fn flag(self) -> &'static str {
        match self {
            Self::Naive => "naive",
            Self::Backoff => "backoff",
            Self::Cooldown => "cooldown",
            Self::Throttle => "throttle",
            Self::HeaderPacing => "headers",
            Self::AllGuards => "all",
            Self::Breaker => "breaker",
            Self::Admission => "admission",
        }
    }

    /// The strategy `--strategy` names.
    pub fn from_flag(flag: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .chain([Self::Breaker, Self::Admission])
            .find(|s| s.flag() == flag)
    }

    /// Whether its client reads `Retry-After`: all but the naive loop.
    pub const fn reads_retry_after(self) -> bool {
        !matches!(self, Self::Naive)
    }

    /// Whether its client passes the rate-limit headers on as
    /// [`Signals`]: only where a header-paced throttle reads them.
    pub const fn reads_rate_headers(self) -> bool {
        matches!(self, Self::HeaderPacing | Self::AllGuards | Self::Admission)
    }
}

/// The anchor: full jitter from 500 ms to 60 s on top of the server's
/// hint, twenty attempts. Generous on purpose (an SDK's default two or three
/// retries give up far more calls when demand is several times the quota),
/// so the guarded rows are compared with a strong independent client.
pub const BACKOFF: Policy = Policy::new()
    .max(20)
    .base(Duration::from_millis(500))
    .cap(Duration::from_secs(60))
    .jitter(Jitter::Full);

/// The naive loop: a fixed second (cap = base, no jitter), forever.
pub const NAIVE: Policy = Policy::new()
    .max(u32::MAX)
    .base(Duration::from_secs(1))
    .cap(Duration::from_secs(1))
    .jitter(Jitter::None);

/// The provider guards of one run: fresh state per run, leaked to be
/// `&'static` as `Policy` wants (a few small leaks per run).
#[derive(Debug, Clone, Copy)]
pub struct Guards {
    /// The shared rate-limit cooldown.
    pub cooldown: &'static Cooldown,
    /// The shared adaptive throttle.
    pub throttle: &'static Throttle,
    /// The shared circuit breaker (without an outage this provider never
    /// fails but for its quota, so it stays closed: what it costs, not what
    /// it saves; an outage opens it).
    pub breaker: &'static Breaker,
    /// The adaptive concurrency limit of [`Strategy::Admission`].
    pub concurrency: &'static Concurrency,
}

impl Guards {
    /// New guards, in their initial state.
    #[must_use]
    pub fn fresh() -> Self {
        Self {
            cooldown: Box::leak(Box::new(Cooldown::new())),
            throttle: Box::leak(Box::new(Throttle::new())),
            breaker: Box::leak(Box::new(Breaker::new())),
            concurrency: Box::leak(Box::new(Concurrency::adaptive(Box::leak(Box::new(
                AdaptiveLimit::new(20),
            ))))),
        }
    }
}

/// The policy every call of `strategy` runs: the one place the guards are
/// wired. Each strategy adds to the one before: the cooldown; then the
/// throttle (its client passes no rate-limit headers, so it adapts from
/// 429s alone); then header pacing (the same throttle, told the headers of
/// every answer); then all guards.
#[must_use]
pub fn policy(strategy: Strategy, guards: Guards) -> Policy {
    match strategy {
        Strategy::Naive => NAIVE,
        Strategy::Backoff => BACKOFF,
        Strategy::Cooldown => BACKOFF.cooldown(guards.cooldown),
        Strategy::Throttle | Strategy::HeaderPacing => {
            BACKOFF.cooldown(guards.cooldown).throttle(guards.throttle)
        }
        Strategy::AllGuards => BACKOFF
            .breaker(guards.breaker)
            .cooldown(guards.cooldown)
            .throttle(guards.throttle),
        Strategy::Breaker => BACKOFF.breaker(guards.breaker),
        Strategy::Admission => BACKOFF
            .breaker(guards.breaker)
            .concurrency(guards.concurrency),
    }
}

/// The settings of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Workers in the fleet.
    pub workers: u32,
    /// Virtual time simulated.
    pub duration: Duration,
    /// Whether a rejected request is charged to the bucket too.
    pub penalty: bool,
    /// The quota, requests per minute.
    pub rpm: u32,
    /// The bucket's size.
    pub burst: u32,
    /// When the provider is down, from the run's start: `[from, to)`.
    pub outage: Option<(Duration, Duration)>,
    /// Noise: the share of requests, per mille, answered 529 (overloaded)
    /// or 503 at random, half each, whatever the fleet's rate; not charged
    /// to the quota and carrying no rate-limit header.
    pub noise: u32,
    /// The breaker's failure ratio (percent) and least calls in its
    /// window, if not its defaults (50 %, 10).
    pub breaker: Option<(u32, u32)>,
}

impl Config {
    /// `workers` workers for `minutes` virtual minutes against the default
    /// quota, without penalty.
    #[must_use]
    pub const fn new(workers: u32, minutes: u64) -> Self {
        Self {
            workers,
            duration: Duration::from_secs(minutes * 60),
            penalty: false,
            rpm: RPM,
            burst: BURST,
            outage: None,
            noise: 0,
            breaker: None,
        }
    }

    /// The same, with a breaker that opens at `ratio_percent` % failures
    /// of at least `min_throughput` calls in its window.
    #[must_use]
    pub const fn breaker(self, ratio_percent: u32, min_throughput: u32) -> Self {
        Self {
            breaker: Some((ratio_percent, min_throughput)),
            ..self
        }
    }

    /// The same, with `permille` ‰ of requests answered 529 or 503 at
    /// random ([`Config::noise`]).
    #[must_use]
    pub const fn noise(self, permille: u32) -> Self {
        Self {
            noise: if permille > 1000 { 1000 } else { permille },
            ..self
        }
    }

    /// The same, with the provider down over `[from, to)` of the run.
    #[must_use]
    pub const fn outage(self, from: Duration, to: Duration) -> Self {
        Self {
            outage: Some((from, to)),
            ..self
        }
    }

    /// The same, in penalty mode or not.
    #[must_use]
    pub const fn penalty(self, penalty: bool) -> Self {
        Self { penalty, ..self }
    }

    /// Requests the quota admits over the run: the burst plus the refill.
    #[must_use]
    pub fn capacity(&self) -> f64 {
        f64::from(self.burst) + f64::from(self.rpm) / 60.0 * self.duration.as_secs_f64()
    }

    /// The fleet's demand without any 429, requests per second: each worker
    /// makes one call per mean service time plus mean tool time.
    #[must_use]
    pub fn demand(&self) -> f64 {
        let mean = |(lo, hi): (Duration, Duration)| (lo + hi).as_secs_f64() / 2.0;
        f64::from(self.workers) / (mean(SERVICE) + mean(THINK))
    }
}
