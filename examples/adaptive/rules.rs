//! The limit rules the simulation compares: tenacious's [`AdaptiveLimit`]
//! (the chosen one, and without its remembered ceiling), Netflix's
//! Gradient2 with its published defaults, and a plain AIMD.
//!
//! Every rule hears the same samples: one per finished attempt, with its
//! latency, the attempts in flight when it started (itself included), and
//! whether it was answered 429.

use std::time::Duration;

use tenacious::{AdaptiveLimit, Sample};

/// A concurrency-limit rule, as the simulated client uses it.
pub trait Rule {
    /// How many attempts may be in flight now.
    fn limit(&self) -> u32;
    /// One finished attempt.
    fn sample(&mut self, latency: Duration, in_flight: u32, overloaded: bool);
}

/// The rules of the table, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `AdaptiveLimit::new(20)` with its defaults: the chosen rule.
    Tenacious,
    /// The same with `probe(1)`: no slowing down near the last overload,
    /// so AIMD (×0.9, +1 per round trip) with the `k − 1` bound.
    NoCeiling,
    /// Netflix's `Gradient2Limit` with its published defaults.
    Gradient2,
    /// Plain AIMD: +1 per round trip of successes, ×0.5 per 429.
    Aimd,
}

impl Kind {
    /// Every rule, in the table's order.
    pub const ALL: [Kind; 4] = [
        Kind::Tenacious,
        Kind::NoCeiling,
        Kind::Gradient2,
        Kind::Aimd,
    ];

    /// The start limit every rule is given (Gradient2's default).
    pub const INITIAL: u32 = 20;

    /// Its name in the table.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Kind::Tenacious => "tenacious AdaptiveLimit",
            Kind::NoCeiling => "  same, probe(1)",
            Kind::Gradient2 => "Netflix Gradient2",
            Kind::Aimd => "plain AIMD (+1, x0.5)",
        }
    }

    /// A fresh rule of this kind, starting at [`Kind::INITIAL`].
    #[must_use]
    pub fn build(self) -> Box<dyn Rule> {
        match self {
            Kind::Tenacious => Box::new(Tenacious(AdaptiveLimit::new(Self::INITIAL))),
            Kind::NoCeiling => Box::new(Tenacious(AdaptiveLimit::new(Self::INITIAL).probe(1))),
            Kind::Gradient2 => Box::new(Gradient2::new()),
            Kind::Aimd => Box::new(Aimd::new(Self::INITIAL)),
        }
    }
}

/// tenacious's rule, fed as a concurrency guard would feed it.
pub struct Tenacious(pub AdaptiveLimit);

impl Rule for Tenacious {
    fn limit(&self) -> u32 {
        self.0.limit()
    }

    fn sample(&mut self, latency: Duration, in_flight: u32, overloaded: bool) {
        self.0.sample(if overloaded {
            Sample::overloaded(latency, in_flight)
        } else {
            Sample::ok(latency, in_flight)
        });
    }
}

/// Netflix concurrency-limits' `Gradient2Limit` (`concurrency-limits-core`,
/// `limit/Gradient2Limit.java`), its `_update` line for line, with the
/// builder's defaults: initial limit 20, min 20, max 200, smoothing 0.2,
/// queue size 4, long window 600 samples (an exponential average over
/// `2 / (600 + 1)` after a plain mean of the first 10). The short RTT is the
/// last sample. Its `didDrop` argument is unused in `_update`, so a 429 is
/// a sample like any other, of the 429's own (short) round trip: the
/// limiter's `onDropped` feeds it exactly so.
pub struct Gradient2 {
    estimate: f64,
    min: f64,
    max: f64,
    smoothing: f64,
    queue: f64,
    long: ExpAvg,
}

/// `ExpAvgMeasurement(window, warmup)`.
struct ExpAvg {
    value: f64,
    sum: f64,
    count: u32,
    window: u32,
    warmup: u32,
}

impl ExpAvg {
    fn add(&mut self, sample: f64) -> f64 {
        if self.count < self.warmup {
            self.count += 1;
            self.sum += sample;
            self.value = self.sum / f64::from(self.count);
        } else {
            let factor = 2.0 / f64::from(self.window + 1);
            self.value = self.value * (1.0 - factor) + sample * factor;
        }
        self.value
    }
}

impl Gradient2 {
    /// `Gradient2Limit.newDefault()`.
    #[must_use]
    pub fn new() -> Self {
        Self {
            estimate: 20.0,
            min: 20.0,
            max: 200.0,
            smoothing: 0.2,
            queue: 4.0,
            long: ExpAvg {
                value: 0.0,
                sum: 0.0,
                count: 0,
                window: 600,
                warmup: 10,
            },
        }
    }
}

impl Default for Gradient2 {
    fn default() -> Self {
        Self::new()
    }
}

impl Rule for Gradient2 {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "Java's `(int) estimatedLimit`, within [20, 200]"
    )]
    fn limit(&self) -> u32 {
        self.estimate as u32
    }

    fn sample(&mut self, latency: Duration, in_flight: u32, _overloaded: bool) {
        // Nanoseconds, as the Java code's `rtt`.
        let rtt = latency.as_secs_f64() * 1e9;
        let short = rtt;
        let long = self.long.add(rtt);
        if long / short > 2.0 {
            self.long.value *= 0.9;
        }
        if f64::from(in_flight) < self.estimate / 2.0 {
            return;
        }
        let gradient = (long / short).clamp(0.5, 1.0);
        let new = self.estimate * gradient + self.queue;
        let new = self.estimate * (1.0 - self.smoothing) + new * self.smoothing;
        self.estimate = new.clamp(self.min, self.max);
    }
}

/// Plain AIMD: each success adds `1 / L` (one per round trip of `L`
/// successes), each 429 halves `L`; within `[1, 200]`.
pub struct Aimd {
    estimate: f64,
}

impl Aimd {
    /// Starting at `initial`.
    #[must_use]
    pub fn new(initial: u32) -> Self {
        Self {
            estimate: f64::from(initial),
        }
    }
}

impl Rule for Aimd {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "within [1, 200]"
    )]
    fn limit(&self) -> u32 {
        self.estimate as u32
    }

    fn sample(&mut self, _latency: Duration, _in_flight: u32, overloaded: bool) {
        self.estimate = if overloaded {
            self.estimate * 0.5
        } else {
            self.estimate + 1.0 / self.estimate
        }
        .clamp(1.0, 200.0);
    }
}
