//! The rule of an [`AdaptiveLimit`]: what each [`Sample`] does to it.
use std::sync::atomic::Ordering;
use std::sync::{MutexGuard, PoisonError};
use std::time::Duration;

use super::{AdaptiveLimit, Sample, SampleOutcome};

/// What the rule keeps between samples.
#[derive(Debug, Clone, Copy)]
pub(super) struct State {
    /// `L`, or NaN before the first sample (then `initial`, held to
    /// `[min, max]`: the builders may still change them in a `const`).
    pub(super) estimate: f64,
    /// The least `k` answered overloaded since the last probe went
    /// through; infinite when none.
    pub(super) ceiling: f64,
    /// The short-term latency, seconds; 0 before the first.
    pub(super) short: f64,
    /// The baseline latency, seconds; 0 before the first.
    pub(super) baseline: f64,
    /// Samples since the last cut (or the last look at a latency rise).
    pub(super) since_cut: u32,
    /// The highest short-term latency since the limit was last cut for
    /// latency, while the rise lasts; 0 when it is not risen.
    pub(super) peak: f64,
    /// Round trips the rise has lasted since the last latency cut without
    /// the latency falling.
    pub(super) stuck: u32,
}

impl State {
    /// Before the first sample.
    pub(super) const fn new() -> Self {
        Self {
            estimate: f64::NAN,
            ceiling: f64::INFINITY,
            short: 0.0,
            baseline: 0.0,
            since_cut: 0,
            peak: 0.0,
            stuck: 0,
        }
    }
}

/// Round trips a latency rise may last, after a cut that did not bring
/// the latency down, before it is taken as the provider's new normal.
const STUCK: u32 = 3;

impl AdaptiveLimit {
    /// How many attempts may be in flight now: admit one while fewer are.
    /// Always within `[min, max]`. An atomic load, no lock.
    ///
    /// ```
    /// use tenacious::AdaptiveLimit;
    ///
    /// static LIMIT: AdaptiveLimit = AdaptiveLimit::new(20).max(16);
    /// assert_eq!(LIMIT.limit(), 16);
    /// ```
    #[must_use]
    pub fn limit(&self) -> u32 {
        self.limit.load(Ordering::Relaxed)
    }

    /// Hears how one attempt ended, and moves the limit by the rule (see
    /// [`AdaptiveLimit`]). Call it once per finished attempt that the
    /// limit admitted; an attempt cancelled before its answer is no
    /// sample.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::{AdaptiveLimit, Sample};
    ///
    /// let limit = AdaptiveLimit::new(4);
    /// // Successes at the limit: one more per round trip of `limit` of them.
    /// for _ in 0..30 {
    ///     limit.sample(Sample::ok(Duration::from_millis(100), limit.limit()));
    /// }
    /// assert_eq!(limit.limit(), 8);
    /// // Hostile samples never panic, and keep it in [min, max].
    /// limit.sample(Sample::ok(Duration::MAX, u32::MAX));
    /// limit.sample(Sample::overloaded(Duration::ZERO, 0));
    /// assert!((1..=1000).contains(&limit.limit()));
    /// ```
    pub fn sample(&self, sample: Sample) {
        let mut state = self.lock();
        let estimate = self.step(&mut state, sample);
        state.estimate = estimate;
        // `estimate` is within [min, max] ⊂ [1, u32::MAX]: the cast floors.
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "within [min, max]: the cast is the floor"
        )]
        self.limit.store(estimate as u32, Ordering::Relaxed);
    }

    /// The rule: the new `L` after `sample`, within `[min, max]`.
    fn step(&self, state: &mut State, sample: Sample) -> f64 {
        let (min, max) = (f64::from(self.min), f64::from(self.max));
        let mut estimate = if state.estimate.is_nan() {
            f64::from(self.initial)
        } else {
            state.estimate
        }
        .clamp(min, max);
        let admitted = estimate.floor();
        let k = f64::from(sample.in_flight);
        // 0 is unknown; above the limit, the attempt started under a higher
        // one (a burst already cut for), or the caller's count is off.
        let known = sample.in_flight > 0;
        let stale = k > admitted;
        let round_trip = state.since_cut >= u32_of(admitted);
        match sample.outcome {
            SampleOutcome::Overloaded => {
                let bound = if known { (k - 1.0).max(min) } else { max };
                estimate = if stale {
                    estimate.min(bound)
                } else {
                    (estimate * self.backoff).min(bound)
                };
                if known {
                    state.ceiling = state.ceiling.min(k);
                }
                state.since_cut = 0;
            }
            SampleOutcome::Dropped => {
                if !stale && round_trip {
                    estimate *= self.backoff;
                    state.since_cut = 0;
                }
            }
            SampleOutcome::Ok => {
                state.since_cut = state.since_cut.saturating_add(1);
                if self.latency_risen(state, sample.latency) {
                    // Held while risen: no growth; one look per round trip.
                    if round_trip && !stale {
                        estimate = self.latency_cut(state, estimate);
                    }
                } else if known && k >= estimate / 2.0 {
                    if k >= state.ceiling {
                        // The probe went through: the cap is not there.
                        state.ceiling = f64::INFINITY;
                    }
                    let per = if estimate + 1.0 >= state.ceiling {
                        estimate.max(f64::from(self.probe))
                    } else {
                        estimate
                    };
                    estimate += 1.0 / per;
                }
            }
        }
        estimate.clamp(min, max)
    }

    /// Averages a success's latency in; whether the short-term latency
    /// is now above `tolerance` × the baseline.
    fn latency_risen(&self, state: &mut State, latency: Duration) -> bool {
        let seconds = latency.as_secs_f64();
        if seconds > 0.0 {
            let seconds = if state.baseline > 0.0 {
                // One stuck attempt counts as twice the tolerance at most
                // (infinite with an infinite tolerance: `min` keeps `seconds`).
                seconds.min(state.baseline * self.tolerance * 2.0)
            } else {
                seconds
            };
            state.short = if state.short > 0.0 {
                state.short + self.smoothing * (seconds - state.short)
            } else {
                seconds
            };
            if state.baseline <= 0.0 || state.short < state.baseline {
                state.baseline = state.short;
            }
        }
        let risen = state.baseline > 0.0 && state.short > self.tolerance * state.baseline;
        if risen {
            if state.peak > 0.0 {
                state.peak = state.peak.max(state.short);
            }
        } else {
            state.peak = 0.0;
            state.stuck = 0;
        }
        risen
    }

    /// A round trip into a latency rise: cut if this is its start or the
    /// last cut brought the latency down (the rise is the caller's own
    /// queue), else wait; after [`STUCK`] round trips without the latency
    /// falling, the provider is slower, not loaded: its latency now is the
    /// new baseline.
    fn latency_cut(&self, state: &mut State, estimate: f64) -> f64 {
        state.since_cut = 0;
        // Fell from its peak since the last cut by at least half the cut
        // (for `backoff` 0.9, by 5 %).
        let fell = state.short < state.peak * (1.0 + self.backoff) / 2.0;
        if state.peak <= 0.0 || fell {
            state.peak = state.short;
            state.stuck = 0;
            return estimate * self.backoff;
        }
        state.stuck += 1;
        if state.stuck >= STUCK {
            state.baseline = state.baseline.max(state.short / self.tolerance.sqrt());
            state.peak = 0.0;
            state.stuck = 0;
        }
        estimate
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics under the lock; a poisoned one holds a whole state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `x` held to `[lo, hi]`, in a `const`.
pub(super) const fn clamp(x: u32, lo: u32, hi: u32) -> u32 {
    if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}

/// A non-negative whole `f64` below 2³² as a `u32` (saturating).
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "the callers pass a floored limit within [min, max]"
)]
fn u32_of(x: f64) -> u32 {
    x as u32
}
