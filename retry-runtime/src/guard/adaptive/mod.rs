//! [`AdaptiveLimit`]: how many attempts may be in flight at once when the
//! provider's concurrency cap is unknown, learnt from how attempts end.
//! A pure, clock-free state machine: the caller passes each finished
//! attempt's latency and the attempts in flight when it started.
//!
//! The rule was chosen by the simulation of `examples/adaptive.rs` (the
//! numbers are in its docs and in `tests/adaptive_sim.rs`); the unit
//! tests here hold its arithmetic and its bounds under hostile samples.
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::AtomicU32;

mod rule;
mod sample;
#[cfg(test)]
mod tests;

use rule::{State, clamp};
pub use sample::{Sample, SampleOutcome};

/// A concurrency limit that adapts to a provider whose cap is unknown: it
/// grows while attempts succeed at a steady latency, and cuts on an
/// overload answer (429, 529, 503) and on a sharp rise in latency. A
/// concurrency guard admits an attempt while fewer than
/// [`limit`](AdaptiveLimit::limit) are in flight, and feeds it one
/// [`Sample`] per finished attempt.
///
/// # The rule
///
/// AIMD that remembers where it was refused, with a Vegas-like latency
/// guard. The limit is a real number `L` (the guard admits `⌊L⌋`); a
/// sample whose attempt started with `k` attempts in flight (itself
/// included) does this:
///
/// | sample | effect on `L` |
/// |---|---|
/// | [`Overloaded`](SampleOutcome::Overloaded) | `L ← min(L × backoff, k − 1)`: `k` in flight was too many. The *ceiling* becomes `k` (the least `k` refused since a probe last went through). An attempt started under a higher limit than now (`k > ⌊L⌋`: one of a burst already cut for) only applies `k − 1`. |
/// | [`Dropped`](SampleOutcome::Dropped) | `L ← L × backoff`, at most once per `⌊L⌋` samples (a round trip's worth). No ceiling: a timeout is no proof of a cap. |
/// | [`Ok`](SampleOutcome::Ok), latency risen | No growth; once per round trip, `L ← L × backoff` if the rise has just begun or the last cut brought the latency down (the rise is the caller's own queue); after 3 round trips in which it did not, the provider is slower, not loaded, and the baseline moves up to the latency now over `√tolerance`. |
/// | [`Ok`](SampleOutcome::Ok), `k < L / 2` | Nothing: the caller does not use the limit, so a success says nothing of a higher one. |
/// | [`Ok`](SampleOutcome::Ok) | `k ≥` ceiling clears the ceiling (the cap is not there, or has risen). Then `L ← L + 1 / L` (one more per round trip of `L` successes), or, within one of the ceiling, `L ← L + 1 / max(L, probe)`: one probe above the last refusal per [`probe`](AdaptiveLimit::probe) successes. |
///
/// then `L` is held to [`min`](AdaptiveLimit::min)`..=`[`max`](AdaptiveLimit::max).
/// "Latency risen": the short-term latency (a moving average gaining
/// [`smoothing`](AdaptiveLimit::smoothing) of each success's latency) is
/// above [`tolerance`](AdaptiveLimit::tolerance) × the baseline (the least
/// short-term latency seen, or the one it was moved up to). Overload
/// samples' latencies never enter either: a 429 comes back at once, and a
/// burst of them must not look like a fast provider (what lets Netflix's
/// Gradient2 grow under 429s).
///
/// # Why this rule
///
/// Chosen by the simulation of `examples/adaptive.rs` (`cargo run
/// --release --example adaptive`; `tests/adaptive_sim.rs` holds the
/// targets): a server answering 429 at once above its cap `C` and after
/// 50 ms ±20 % (up to 30 % slower near its cap) below it, 256 clients
/// always wanting to send, every rule starting at 20; settled means the
/// rolling 10 s median of the limit within ±15 % of `C`. Mean of 3 seeds:
///
/// | `C` | this rule: settled, 429s | plain AIMD (+1, ×0.5) | Gradient2 (its defaults) |
/// |---|---|---|---|
/// | 2 | 10 ms, 1.44 % | 173 ms, 25.4 % | never (min 20), 98.8 % |
/// | 8 | 10 ms, 0.78 % | 53.7 s, 3.3 % | never (min 20), 95.2 % |
/// | 64 | 4.1 s, 0.23 % | never (mean 49), 0.06 % | never (mean 36), 0.8 % |
/// | 64 → 8 | 123 ms, 0.38 % | 50.5 s, 0.45 % | never, 76.4 % |
/// | 8 → 64 | 7.0 s, 0.29 % | never (mean 49), 0.46 % | never, 76.4 % |
///
/// Each part earns its place there (the sweeps below: 5 seeds). The
/// `k − 1` bound reaches a cap of 2 from 20 within one round trip (a
/// multiplicative cut alone needs several, each paid for in 429s). The
/// ceiling keeps the 429s low at small caps: without it (`probe(1)`) a
/// probe goes out every round trip or so, and a cap of 2 or 8 answers one
/// request in 4 or 10 with a 429 (25.3 %, 9.9 %). `probe` trades those
/// 429s against how fast a risen cap is found: at `C` = 2, 50 gives
/// 2.9 % 429s, 100 gives 2.0 %, 200 gives 1.5 % (0.9 % of it the first
/// burst of 18, which no rule avoids), 1000 gives 1.0 % but takes 11.7 s
/// rather than 7.2 s to settle after 8 → 64. A gentle `backoff` keeps the
/// sawtooth inside ±15 % at 64: with ×0.5 the mean limit there is 49 and
/// it never settles; the last 30 s are in the band 54 % of the time with
/// ×0.7, 79 % with ×0.8, 100 % with ×0.9. The latency guard never fires
/// on that server (its 30 % rise near the cap is far below the
/// tolerance); on one that gets 3 times slower at the same cap of 8 it
/// cuts once or twice (to 7, still within the band), then takes the slower
/// latency for the new normal; on one that queues above its
/// cap of 8 instead of refusing, it holds the limit near 1.6 `C` and the
/// latency at 1.6 times the server's at its cap, where plain AIMD grows
/// without bound (106, 13 times) and Gradient2 sits near 36 (4.6 times).
///
/// # Shared
///
/// `&self` throughout, so one `static` serves every task: a `Mutex` around
/// the few numbers of the rule (held for a few arithmetic operations,
/// never across an `await`, never poisoned, since nothing in it panics),
/// and the limit mirrored in an atomic, so [`limit`](AdaptiveLimit::limit)
/// takes no lock.
///
/// # Hostile samples
///
/// Nothing panics and the limit stays within `[min, max]` whatever the
/// samples say: a zero latency is not averaged (it would make a baseline
/// of zero); a latency far above the baseline counts as twice the
/// tolerance at most, so one stuck attempt cannot cut; `in_flight` 0 is
/// taken as unknown (no `k − 1` bound, no growth), `u32::MAX` as an
/// attempt started under an earlier, higher limit.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{AdaptiveLimit, Sample};
///
/// static LIMIT: AdaptiveLimit = AdaptiveLimit::new(20).min(1).max(64);
///
/// assert_eq!(LIMIT.limit(), 20);
/// // Three attempts were in flight when this one started: a 429.
/// LIMIT.sample(Sample::overloaded(Duration::from_millis(2), 3));
/// assert_eq!(LIMIT.limit(), 2, "3 in flight was too many");
/// // Successes at the limit: it stays under the 3 that were refused,
/// // probing above once per `probe` (200) successes.
/// for _ in 0..100 {
///     LIMIT.sample(Sample::ok(Duration::from_millis(50), 2));
/// }
/// assert_eq!(LIMIT.limit(), 2);
/// ```
pub struct AdaptiveLimit {
    initial: u32,
    min: u32,
    max: u32,
    backoff: f64,
    smoothing: f64,
    tolerance: f64,
    probe: u32,
    /// `⌊L⌋`, read without the lock.
    limit: AtomicU32,
    state: Mutex<State>,
}

impl AdaptiveLimit {
    /// The default [`min`](AdaptiveLimit::min): 1.
    pub const MIN: u32 = 1;
    /// The default [`max`](AdaptiveLimit::max): 1000.
    pub const MAX: u32 = 1000;
    /// The default [`backoff`](AdaptiveLimit::backoff): 0.9.
    pub const BACKOFF: f64 = 0.9;
    /// The default [`smoothing`](AdaptiveLimit::smoothing): 0.2.
    pub const SMOOTHING: f64 = 0.2;
    /// The default [`tolerance`](AdaptiveLimit::tolerance): 2.0.
    pub const TOLERANCE: f64 = 2.0;
    /// The default [`probe`](AdaptiveLimit::probe): 200.
    pub const PROBE: u32 = 200;

    /// A limit starting at `initial` (held to `[min, max]`; 0 starts at
    /// `min`), with the default settings: [`MIN`](AdaptiveLimit::MIN),
    /// [`MAX`](AdaptiveLimit::MAX), [`BACKOFF`](AdaptiveLimit::BACKOFF),
    /// [`SMOOTHING`](AdaptiveLimit::SMOOTHING),
    /// [`TOLERANCE`](AdaptiveLimit::TOLERANCE),
    /// [`PROBE`](AdaptiveLimit::PROBE).
    ///
    /// ```
    /// use tenacious::AdaptiveLimit;
    ///
    /// static LIMIT: AdaptiveLimit = AdaptiveLimit::new(20);
    /// assert_eq!(LIMIT.limit(), 20);
    /// assert_eq!(AdaptiveLimit::new(0).limit(), 1);
    /// assert_eq!(AdaptiveLimit::new(5000).limit(), 1000);
    /// ```
    #[must_use]
    pub const fn new(initial: u32) -> Self {
        Self {
            initial,
            min: Self::MIN,
            max: Self::MAX,
            backoff: Self::BACKOFF,
            smoothing: Self::SMOOTHING,
            tolerance: Self::TOLERANCE,
            probe: Self::PROBE,
            limit: AtomicU32::new(clamp(initial, Self::MIN, Self::MAX)),
            state: Mutex::new(State::new()),
        }
    }

    /// The limit it starts at: `initial` held to `[min, max]`.
    ///
    /// ```
    /// use tenacious::AdaptiveLimit;
    ///
    /// assert_eq!(AdaptiveLimit::new(5000).get_initial(), 1000);
    /// ```
    #[must_use]
    pub const fn get_initial(&self) -> u32 {
        clamp(self.initial, self.min, self.max)
    }

    /// The least limit, however often the provider refuses. Default
    /// [`MIN`](AdaptiveLimit::MIN), 1; 0 is taken as 1 (a limit of 0
    /// would admit nothing, and so never hear anything to raise it).
    ///
    /// ```
    /// use tenacious::AdaptiveLimit;
    ///
    /// static LIMIT: AdaptiveLimit = AdaptiveLimit::new(2).min(4);
    /// assert_eq!(LIMIT.get_min(), 4);
    /// assert_eq!(LIMIT.limit(), 4, "the start is held to the least limit");
    /// ```
    ///
    /// # Panics
    ///
    /// Above the [`max`](AdaptiveLimit::max) set before it (default
    /// 1000): in a `const` or `static`, at compile time.
    ///
    /// ```compile_fail
    /// use tenacious::AdaptiveLimit;
    ///
    /// static WRONG: AdaptiveLimit = AdaptiveLimit::new(20).max(10).min(50);
    /// ```
    #[must_use]
    pub const fn min(self, min: u32) -> Self {
        let min = if min == 0 { 1 } else { min };
        assert!(
            min <= self.max,
            "AdaptiveLimit::min is above the `max` set before it (default 1000): raise `max` \
             first, or lower `min`"
        );
        Self {
            min,
            limit: AtomicU32::new(clamp(self.initial, min, self.max)),
            ..self
        }
    }

    /// The least limit set by [`min`](AdaptiveLimit::min).
    #[must_use]
    pub const fn get_min(&self) -> u32 {
        self.min
    }

    /// The most limit, however long attempts succeed. Default
    /// [`MAX`](AdaptiveLimit::MAX), 1000.
    ///
    /// ```
    /// use tenacious::AdaptiveLimit;
    ///
    /// static LIMIT: AdaptiveLimit = AdaptiveLimit::new(20).max(8);
    /// assert_eq!(LIMIT.get_max(), 8);
    /// assert_eq!(LIMIT.limit(), 8, "the start is held to the most limit");
    /// ```
    ///
    /// # Panics
    ///
    /// Below the [`min`](AdaptiveLimit::min) set before it (default 1):
    /// in a `const` or `static`, at compile time.
    ///
    /// ```compile_fail
    /// use tenacious::AdaptiveLimit;
    ///
    /// static WRONG: AdaptiveLimit = AdaptiveLimit::new(20).min(10).max(5);
    /// ```
    #[must_use]
    pub const fn max(self, max: u32) -> Self {
        assert!(
            max >= self.min,
            "AdaptiveLimit::max is below the `min` set before it (default 1): lower `min` \
             first, or raise `max`"
        );
        Self {
            max,
            limit: AtomicU32::new(clamp(self.initial, self.min, max)),
            ..self
        }
    }

    /// The most limit set by [`max`](AdaptiveLimit::max).
    #[must_use]
    pub const fn get_max(&self) -> u32 {
        self.max
    }

    /// What an overload (or a drop, or a latency rise) multiplies the
    /// limit by. Default [`BACKOFF`](AdaptiveLimit::BACKOFF), 0.9 (the
    /// default `backoffRatio` of Netflix's `AIMDLimit`): an overload also
    /// brings the limit under the attempts in flight, so the cut need not
    /// be deep to find a small cap, and a gentle one keeps the limit
    /// within 10 % of a large one. In `(0, 1)`.
    ///
    /// ```
    /// use tenacious::AdaptiveLimit;
    ///
    /// static LIMIT: AdaptiveLimit = AdaptiveLimit::new(20).backoff(0.5);
    /// assert_eq!(LIMIT.get_backoff(), 0.5);
    /// ```
    ///
    /// # Panics
    ///
    /// Outside `(0, 1)`, or NaN: in a `const` or `static`, at compile
    /// time.
    ///
    /// ```compile_fail
    /// use tenacious::AdaptiveLimit;
    ///
    /// static WRONG: AdaptiveLimit = AdaptiveLimit::new(20).backoff(1.0);
    /// ```
    #[must_use]
    pub const fn backoff(self, backoff: f64) -> Self {
        assert!(
            backoff > 0.0 && backoff < 1.0,
            "AdaptiveLimit::backoff takes a factor in (0, 1), like `backoff(0.9)`"
        );
        Self { backoff, ..self }
    }

    /// The factor set by [`backoff`](AdaptiveLimit::backoff).
    #[must_use]
    pub const fn get_backoff(&self) -> f64 {
        self.backoff
    }

    /// The weight of each success's latency in the short-term latency (an
    /// exponentially weighted moving average): 1 keeps only the last.
    /// Default [`SMOOTHING`](AdaptiveLimit::SMOOTHING), 0.2 (about the
    /// last 10 samples). In `(0, 1]`.
    ///
    /// ```
    /// use tenacious::AdaptiveLimit;
    ///
    /// static LIMIT: AdaptiveLimit = AdaptiveLimit::new(20).smoothing(0.05);
    /// assert_eq!(LIMIT.get_smoothing(), 0.05);
    /// ```
    ///
    /// # Panics
    ///
    /// Outside `(0, 1]`, or NaN: in a `const` or `static`, at compile
    /// time.
    ///
    /// ```compile_fail
    /// use tenacious::AdaptiveLimit;
    ///
    /// static WRONG: AdaptiveLimit = AdaptiveLimit::new(20).smoothing(0.0);
    /// ```
    #[must_use]
    pub const fn smoothing(self, smoothing: f64) -> Self {
        assert!(
            smoothing > 0.0 && smoothing <= 1.0,
            "AdaptiveLimit::smoothing takes a weight in (0, 1], like `smoothing(0.2)`"
        );
        Self { smoothing, ..self }
    }

    /// The weight set by [`smoothing`](AdaptiveLimit::smoothing).
    #[must_use]
    pub const fn get_smoothing(&self) -> f64 {
        self.smoothing
    }

    /// How many times the baseline latency the short-term latency may
    /// reach before the limit is cut for it. Default
    /// [`TOLERANCE`](AdaptiveLimit::TOLERANCE), 2.0: well above what
    /// jitter and a server's rise near its cap make (the simulation's
    /// 30 % rise and ±20 % jitter never reach it), so latency cuts a
    /// provider that queues; one that is merely slower costs a cut or two
    /// before its latency becomes the baseline (moved up to the latency
    /// over `√tolerance`). `f64::INFINITY` turns the latency cut off (for
    /// calls whose latency says nothing of load, such as LLM completions
    /// of any length). Above 1.
    ///
    /// ```
    /// use tenacious::AdaptiveLimit;
    ///
    /// static LIMIT: AdaptiveLimit = AdaptiveLimit::new(20).tolerance(f64::INFINITY);
    /// assert_eq!(LIMIT.get_tolerance(), f64::INFINITY);
    /// ```
    ///
    /// # Panics
    ///
    /// At or below 1, or NaN: in a `const` or `static`, at compile time.
    ///
    /// ```compile_fail
    /// use tenacious::AdaptiveLimit;
    ///
    /// static WRONG: AdaptiveLimit = AdaptiveLimit::new(20).tolerance(0.5);
    /// ```
    #[must_use]
    pub const fn tolerance(self, tolerance: f64) -> Self {
        assert!(
            tolerance > 1.0,
            "AdaptiveLimit::tolerance takes a ratio above 1, like `tolerance(2.0)`"
        );
        Self { tolerance, ..self }
    }

    /// The ratio set by [`tolerance`](AdaptiveLimit::tolerance).
    #[must_use]
    pub const fn get_tolerance(&self) -> f64 {
        self.tolerance
    }

    /// Successes per probe above the last overload: within one of the
    /// ceiling the limit grows by `1 / max(L, probe)` per success, so it
    /// tries one more attempt than was refused once per `probe` successes
    /// (or once per round trip when the limit is larger). Each probe that
    /// meets the same cap costs one 429, so about `1 / probe` of requests
    /// (0.5 %) in the steady state; one that goes through clears the
    /// ceiling, and the limit grows by one per round trip again. Default
    /// [`PROBE`](AdaptiveLimit::PROBE), 200; 0 is taken as 1 (no
    /// slowing down: plain AIMD with the `k − 1` bound).
    ///
    /// ```
    /// use tenacious::AdaptiveLimit;
    ///
    /// static LIMIT: AdaptiveLimit = AdaptiveLimit::new(20).probe(50);
    /// assert_eq!(LIMIT.get_probe(), 50);
    /// ```
    #[must_use]
    pub const fn probe(self, probe: u32) -> Self {
        let probe = if probe == 0 { 1 } else { probe };
        Self { probe, ..self }
    }

    /// The count set by [`probe`](AdaptiveLimit::probe).
    #[must_use]
    pub const fn get_probe(&self) -> u32 {
        self.probe
    }
}

impl fmt::Debug for AdaptiveLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdaptiveLimit")
            .field("limit", &self.limit())
            .field("min", &self.min)
            .field("max", &self.max)
            .field("backoff", &self.backoff)
            .field("smoothing", &self.smoothing)
            .field("tolerance", &self.tolerance)
            .field("probe", &self.probe)
            .finish_non_exhaustive()
    }
}
