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

/// The provider's quota: a token bucket on tokio's clock (the real one
/// for the provider of `examples/fleet/procs.rs`).
#[derive(Debug)]
pub struct Bucket {
    tokens: f64,
    /// The instant the bucket was made full: the times below count from it.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    origin: Instant,
    /// The last arrival, after `origin`.
    at: Duration,
    /// Tokens per second.
    rate: f64,
    burst: f64,
    penalty: bool,
}

/// What the provider answered a request with, headers included (the
/// provider of `examples/fleet/procs.rs`, `--redis`).
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    /// Served (else 429).
    pub served: bool,
    /// `Retry-After`, whole seconds (on a 429).
    pub retry_after: Duration,
    /// `x-ratelimit-remaining-requests`.
    pub remaining: u64,
    /// `x-ratelimit-reset-requests`: until the bucket is full again.
    pub reset: Duration,
    /// `x-ratelimit-limit-requests`: the bucket's size.
    pub limit: u64,
}

impl Bucket {
    /// `config`'s quota, full at `at`.
    #[must_use]
    pub fn new(config: &Config, at: Instant) -> Self {
        Self {
            tokens: f64::from(config.burst),
            origin: at,
            at: Duration::ZERO,
            rate: f64::from(config.rpm) / 60.0,
            burst: f64::from(config.burst),
            penalty: config.penalty,
        }
    }

    /// A request arriving at `now`: the provider's answer.
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    pub fn arrive(&mut self, now: Instant) -> Answer {
        let served = self.take(now.saturating_duration_since(self.origin));
        Answer {
            served,
            retry_after: if served {
                Duration::ZERO
            } else {
                self.retry_after()
            },
            remaining: self.remaining(),
            reset: self.reset(),
            limit: self.limit(),
        }
    }

    /// A request arriving `since` the bucket was made full: whether a
    /// token serves it. The headers of the answer are read from the bucket
    /// right after ([`Bucket::retry_after`] and the others), only those the
    /// client reads: the simulation's hot path.
    fn take(&mut self, since: Duration) -> bool {
        let elapsed = since.saturating_sub(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.at = since;
        let served = self.tokens >= 1.0;
        if served || self.penalty {
            self.tokens -= 1.0;
        }
        served
    }

    /// `Retry-After` of a 429: until a whole token is there again, rounded
    /// up to seconds.
    fn retry_after(&self) -> Duration {
        let short = (1.0 - self.tokens).max(0.0) / self.rate;
        Duration::from_secs_f64(short.ceil().max(1.0))
    }

    /// `x-ratelimit-remaining-requests`: whole tokens, as the header is an
    /// integer, and never negative.
    fn remaining(&self) -> u64 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let remaining = self.tokens.max(0.0).floor() as u64;
        remaining
    }

    /// `x-ratelimit-reset-requests`: until the bucket is full again.
    fn reset(&self) -> Duration {
        Duration::from_secs_f64((self.burst - self.tokens).max(0.0) / self.rate)
    }

    /// `x-ratelimit-limit-requests`: the bucket's size.
    fn limit(&self) -> u64 {
        // The burst is a whole number of requests (`Config::burst`).
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let limit = self.burst as u64;
        limit
    }

    /// The rate-limit headers of the answer just given, as [`Signals`].
    fn signals(&self) -> Signals {
        Signals::NONE
            .remaining(self.remaining())
            .reset(self.reset())
            .limit(self.limit())
    }
}

/// A failed call, as the strategy's client read it.
#[derive(Debug, Clone, Copy)]
pub enum ApiError {
    /// A 429: the caller's own quota.
    TooManyRequests {
        /// `Retry-After`, if the client reads it.
        retry_after: Option<Duration>,
        /// The rate-limit headers, if the client passes them on.
        signals: Signals,
    },
    /// A 529 during an outage, or noise: the provider as a whole is
    /// refusing work.
    Overloaded,
    /// A 503 of the noise: one request failed, nothing said.
    Unavailable,
    /// A guard refused the call before its first attempt.
    Refused(Refused),
}

impl Classify for ApiError {
    fn classify(&self) -> ErrorClass {
        match self {
            Self::TooManyRequests { .. } => ErrorClass::RateLimited,
            Self::Overloaded | Self::Unavailable => ErrorClass::Transient,
            Self::Refused(refused) => refused.classify(),
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::TooManyRequests { retry_after, .. } => *retry_after,
            Self::Overloaded | Self::Unavailable | Self::Refused(_) => None,
        }
    }
    fn signals(&self) -> Signals {
        match self {
            Self::TooManyRequests { signals, .. } => *signals,
            Self::Overloaded => Signals::NONE.overloaded(true),
            Self::Unavailable | Self::Refused(_) => Signals::NONE,
        }
    }
    fn variant(&self) -> &'static str {
        match self {
            Self::TooManyRequests { .. } => "TooManyRequests",
            Self::Overloaded => "Overloaded",
            Self::Unavailable => "Unavailable",
            Self::Refused(_) => "Refused",
        }
    }
    fn refused() -> Option<fn(Refused) -> Self> {
        Some(Self::Refused)
    }
}

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

/// What the run's workers share: the provider and the counters. One a
/// run, in [`FLEET`] while the run is under way on its thread.
#[derive(Debug)]
struct Fleet {
    bucket: RefCell<Bucket>,
    start: Instant,
    /// The run's length: what happens from `start + duration` on is not
    /// counted.
    duration: Duration,
    requests: Cell<u64>,
    rejected: Cell<u64>,
    overloaded: Cell<u64>,
    gave_up: Cell<u64>,
    refused: Cell<u64>,
    /// The outage, from the run's start.
    outage: Option<(Duration, Duration)>,
    /// [`Config::noise`], and the draws that pick the noisy requests.
    noise: u32,
    noise_rng: RefCell<SmallRng>,
    latencies: RefCell<Vec<Duration>>,
    tasks: Vec<Cell<u32>>,
    over_time: RefCell<Vec<Bin>>,
}

thread_local! {
    /// The fleet of the run under way on this thread. Its workers are
    /// tokio tasks of the run's runtime, which must be `Send`: they reach
    /// the fleet through here rather than holding an `Rc` of it (which
    /// would need a `LocalSet`, a scheduler on top of the runtime's, and
    /// its cost on every wake-up).
    static FLEET: RefCell<Option<Fleet>> = const { RefCell::new(None) };
}

/// `f` of the fleet of the run under way on this thread.
fn with_fleet<R>(f: impl FnOnce(&Fleet) -> R) -> R {
    FLEET.with_borrow(|fleet| f(fleet.as_ref().expect("a run under way on this thread")))
}

impl Fleet {
    /// A request reaching the provider now: when, and its answer, counted,
    /// as the `reads` strategy's client reads it — with a success, the
    /// rate-limit headers it passes on ([`Signals::NONE`] if it reads none).
    fn request(&self, reads: Strategy) -> (Instant, Result<Signals, ApiError>) {
        let now = Instant::now();
        let since = now - self.start;
        let counted = since < self.duration;
        let down = self
            .outage
            .is_some_and(|(from, to)| (from..to).contains(&since));
        if down {
            // The provider is down before any quota is checked: a 529,
            // no header.
            if counted {
                self.count_overloaded(since);
            }
            return (now, Err(ApiError::Overloaded));
        }
        if self.noise > 0 {
            let draw = self.noise_rng.borrow_mut().random_range(0..2000);
            if draw < 2 * self.noise {
                if counted {
                    self.count_overloaded(since);
                }
                let error = if draw % 2 == 0 {
                    ApiError::Overloaded
                } else {
                    ApiError::Unavailable
                };
                return (now, Err(error));
            }
        }
        let mut bucket = self.bucket.borrow_mut();
        let served = bucket.take(since);
        if counted {
            self.requests.set(self.requests.get() + 1);
            if let Some(bin) = self.over_time.borrow_mut().get_mut(bin(since)) {
                bin.requests += 1;
                if served {
                    bin.served += 1;
                } else {
                    bin.rejected += 1;
                }
            }
            if !served {
                self.rejected.set(self.rejected.get() + 1);
            }
        }
        // Only the headers the client reads are worked out.
        let signals = if reads.reads_rate_headers() {
            bucket.signals()
        } else {
            Signals::NONE
        };
        if served {
            return (now, Ok(signals));
        }
        let rejected = ApiError::TooManyRequests {
            retry_after: reads.reads_retry_after().then(|| bucket.retry_after()),
            signals,
        };
        (now, Err(rejected))
    }

    /// Counts a request answered overloaded `since` the run's start.
    fn count_overloaded(&self, since: Duration) {
        self.requests.set(self.requests.get() + 1);
        self.overloaded.set(self.overloaded.get() + 1);
        if let Some(bin) = self.over_time.borrow_mut().get_mut(bin(since)) {
            bin.requests += 1;
            bin.overloaded += 1;
        }
    }
}

/// The [`BIN`] of the run an instant `since` its start falls in.
fn bin(since: Duration) -> usize {
    usize::try_from(since.as_secs() / BIN.as_secs()).unwrap_or(usize::MAX)
}

fn uniform(rng: &mut SmallRng, (lo, hi): (Duration, Duration)) -> Duration {
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rng.random_range(nanos(lo)..=nanos(hi)))
}

/// Tool work: a draw of [`THINK`] from `now`, when the clock was last
/// read; the clock when it is over.
async fn think(rng: &mut SmallRng, now: Instant) -> Instant {
    tokio::time::sleep_until(now + uniform(rng, THINK)).await;
    Instant::now()
}

/// One worker, `id`: agent tasks, one after another, until the run ends
/// at `end`; its draws from `rng`.
///
/// The paused clock stands still between waits: it is read once after
/// each (`now`), and what starts then starts at that reading.
async fn worker(
    id: usize,
    strategy: Strategy,
    (policy, throttle): (&'static Policy, &'static Throttle),
    end: Instant,
    mut rng: SmallRng,
) {
    tokio::time::sleep(uniform(&mut rng, (Duration::ZERO, RAMP))).await;
    let mut now = Instant::now();
    loop {
        let calls = rng.random_range(CALLS_PER_TASK.0..=CALLS_PER_TASK.1);
        let task = run_task(calls, strategy, (policy, throttle), end, &mut rng, &mut now);
        let done = if strategy == Strategy::Admission {
            Task::new().run(task).await
        } else {
            task.await
        };
        let Some(done) = done else { return };
        if done && now < end {
            with_fleet(|fleet| {
                let tasks = &fleet.tasks[id];
                tasks.set(tasks.get() + 1);
            });
        }
    }
}

/// One agent task of `calls` model calls, with tool work after each:
/// `Some(true)` when every call succeeded, `Some(false)` when one gave up
/// or was refused, `None` when the run ended during it.
async fn run_task(
    calls: u32,
    strategy: Strategy,
    (policy, throttle): (&'static Policy, &'static Throttle),
    end: Instant,
    rng: &mut SmallRng,
    now: &mut Instant,
) -> Option<bool> {
    let mut done = true;
    for _ in 0..calls {
        let started = *now;
        let result = policy
            .retry(|| {
                let service = uniform(rng, SERVICE);
                let reject = uniform(rng, REJECT);
                async move {
                    let (at, answer) = with_fleet(|fleet| fleet.request(strategy));
                    let latency = if answer.is_ok() { service } else { reject };
                    tokio::time::sleep_until(at + latency).await;
                    // A success's headers reach the throttle from the
                    // client, as `Throttle::report` documents; a 429's
                    // through `Classify::signals`.
                    answer.map(|signals| {
                        if !signals.is_none() {
                            throttle.report(signals);
                        }
                    })
                }
            })
            .await;
        *now = Instant::now();
        if *now >= end {
            return None;
        }
        match result {
            Ok(()) => with_fleet(|fleet| fleet.latencies.borrow_mut().push(*now - started)),
            Err(ApiError::Refused(_)) => {
                // The breaker is open: the agent takes another route
                // for this task, and its next task comes after the
                // tool time (refused at once, a worker would else
                // spin at one instant).
                with_fleet(|fleet| fleet.refused.set(fleet.refused.get() + 1));
                *now = think(rng, *now).await;
                done = false;
                break;
            }
            Err(_) => {
                with_fleet(|fleet| fleet.gave_up.set(fleet.gave_up.get() + 1));
                done = false;
                break;
            }
        }
        *now = think(rng, *now).await;
    }
    Some(done)
}

/// Runs the fleet once: `config` with `strategy`, randomness from `seed`.
///
/// # Panics
///
/// If tokio's runtime cannot be built.
#[must_use]
pub fn simulate(strategy: Strategy, config: Config, seed: u64) -> Outcome {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    let mut guards = Guards::fresh();
    if let Some((ratio, min)) = config.breaker {
        guards.breaker = Box::leak(Box::new(
            Breaker::new()
                .ratio(f64::from(ratio.clamp(1, 100)) / 100.0)
                .min_throughput(min.max(1)),
        ));
    }
    // Leaked as the guards are: every worker borrows it for the run, and
    // holds a pointer to it rather than a copy.
    let policy: &'static Policy = Box::leak(Box::new(policy(strategy, guards)));
    let bins = usize::try_from(config.duration.as_secs().div_ceil(BIN.as_secs())).unwrap_or(0);
    runtime.block_on(async {
        // The engine's jitter draws from this thread's RNG: seeded, so the
        // run is the seed's.
        tenacious::seed_jitter(seed);
        let start = Instant::now();
        let end = start + config.duration;
        FLEET.set(Some(Fleet {
            bucket: RefCell::new(Bucket::new(&config, start)),
            start,
            duration: config.duration,
            requests: Cell::new(0),
            rejected: Cell::new(0),
            overloaded: Cell::new(0),
            gave_up: Cell::new(0),
            refused: Cell::new(0),
            outage: config.outage,
            noise: config.noise,
            noise_rng: RefCell::new(SmallRng::seed_from_u64(seed ^ 0x006e_6f69_7365)),
            latencies: RefCell::new(Vec::new()),
            tasks: (0..config.workers).map(|_| Cell::new(0)).collect(),
            over_time: RefCell::new(vec![Bin::default(); bins]),
        }));
        for id in 0..config.workers as usize {
            let rng =
                SmallRng::seed_from_u64(seed ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            // Detached: the runtime drops the workers with it.
            drop(tokio::spawn(worker(
                id,
                strategy,
                (policy, guards.throttle),
                end,
                rng,
            )));
        }
        tokio::time::sleep_until(end).await;
    });
    drop(runtime);
    let fleet = FLEET
        .take()
        .expect("the run's fleet, its workers gone with their runtime");
    let mut latencies = fleet.latencies.into_inner();
    latencies.sort_unstable();
    let over_time = fleet.over_time.into_inner();
    Outcome {
        requests: fleet.requests.get(),
        rejected: fleet.rejected.get(),
        overloaded: fleet.overloaded.get(),
        served: over_time.iter().map(|b| u64::from(b.served)).sum(),
        capacity: config.capacity(),
        latencies,
        gave_up: fleet.gave_up.get(),
        refused: fleet.refused.get(),
        tasks: fleet.tasks.iter().map(Cell::get).collect(),
        over_time,
    }
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
