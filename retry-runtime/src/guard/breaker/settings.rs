//! The breaker's settings: the share of failures that opens it, its
//! window, the fewest outcomes it weighs, how long it stays open and its
//! probes, as `const` builders with their defaults and getters.
use std::time::Duration;

use super::Breaker;
use super::window::COUNT_MAX;
use crate::clock::saturating_nanos;

impl Breaker {
    /// The default failure ratio: 0.5 (see the type's docs).
    pub const RATIO: f64 = 0.5;
    /// The default sampling window: 30 s.
    pub const WINDOW: Duration = Duration::from_secs(30);
    /// The default minimum of counted outcomes in the window: 10.
    pub const MIN_THROUGHPUT: u32 = 10;
    /// The default break: 15 s.
    pub const OPEN_FOR: Duration = Duration::from_secs(15);
    /// The default probes while half-open: 1.
    pub const PROBES: u32 = 1;

    /// The share of counted failures among the window's outcomes at which
    /// it opens, from 0 (any counted failure, once the minimum throughput
    /// is reached) to 1 (every outcome a failure). Default
    /// [`RATIO`](Breaker::RATIO), 0.5.
    ///
    /// ```
    /// use tenacious::Breaker;
    ///
    /// static TOUCHY: Breaker = Breaker::new().ratio(0.25);
    /// assert_eq!(TOUCHY.get_ratio(), 0.25);
    /// ```
    ///
    /// # Panics
    ///
    /// For a ratio outside `0.0..=1.0` or NaN, as a config's `ratio` is
    /// refused: in a `const` or `static`, at compile time.
    ///
    /// ```compile_fail
    /// use tenacious::Breaker;
    ///
    /// static WRONG: Breaker = Breaker::new().ratio(50.0); // a percentage: 0.5 was meant
    /// ```
    #[must_use]
    pub const fn ratio(self, ratio: f64) -> Self {
        assert!(
            ratio >= 0.0 && ratio <= 1.0,
            "Breaker::ratio takes the share of failures that opens the breaker, from 0 to 1, \
             like `ratio(0.5)`"
        );
        Self { ratio, ..self }
    }

    /// How far back the outcomes it weighs go. Default
    /// [`WINDOW`](Breaker::WINDOW), 30 s. Kept in ten buckets, so the
    /// window slides a tenth at a time.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Breaker;
    ///
    /// static PROVIDER: Breaker = Breaker::new().window(Duration::from_secs(60));
    /// assert_eq!(PROVIDER.get_window(), Duration::from_secs(60));
    /// ```
    ///
    /// # Panics
    ///
    /// For a zero window, which weighs no outcome, so the breaker would
    /// never open (a config's zero `window` is refused too): in a `const`
    /// or `static`, at compile time.
    #[must_use]
    pub const fn window(self, window: Duration) -> Self {
        assert!(
            !window.is_zero(),
            "Breaker::window: a zero window weighs no outcome, so the breaker never opens; give \
             how far back to weigh them, like `window(Duration::from_secs(30))`"
        );
        Self {
            window: saturating_nanos(window),
            ..self
        }
    }

    /// The fewest counted outcomes (failures and successes) in the window
    /// before the ratio is weighed at all. Default
    /// [`MIN_THROUGHPUT`](Breaker::MIN_THROUGHPUT), 10; at least 1.
    ///
    /// ```
    /// use tenacious::Breaker;
    ///
    /// static PROVIDER: Breaker = Breaker::new().min_throughput(20);
    /// assert_eq!(PROVIDER.get_min_throughput(), 20);
    /// ```
    ///
    /// # Panics
    ///
    /// For 0, as a config's `min_throughput = 0` is refused (write 1 to
    /// weigh from the first outcome): in a `const` or `static`, at compile
    /// time.
    #[must_use]
    pub const fn min_throughput(self, min: u32) -> Self {
        assert!(
            min >= 1,
            "Breaker::min_throughput takes the fewest outcomes the breaker weighs, at least 1, \
             like `min_throughput(10)`"
        );
        Self {
            min_throughput: min,
            ..self
        }
    }

    /// How long it stays open before it probes (the break). Default
    /// [`OPEN_FOR`](Breaker::OPEN_FOR), 15 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Breaker;
    ///
    /// static PROVIDER: Breaker = Breaker::new().open_for(Duration::from_secs(30));
    /// assert_eq!(PROVIDER.get_open_for(), Duration::from_secs(30));
    /// ```
    ///
    /// # Panics
    ///
    /// For a zero break, which would let probes through as soon as it
    /// opens, holding no call back (a config's zero `open_for` is refused
    /// too): in a `const` or `static`, at compile time.
    ///
    /// ```compile_fail
    /// use std::time::Duration;
    /// use tenacious::Breaker;
    ///
    /// static WRONG: Breaker = Breaker::new().open_for(Duration::ZERO);
    /// ```
    #[must_use]
    pub const fn open_for(self, open_for: Duration) -> Self {
        assert!(
            !open_for.is_zero(),
            "Breaker::open_for: a zero break lets probes through as soon as the breaker opens, \
             so it holds no call back; give the break, like `open_for(Duration::from_secs(15))`"
        );
        Self {
            open_for: saturating_nanos(open_for),
            ..self
        }
    }

    /// The attempts it admits while half-open, and the successes among
    /// them that close it. Default [`PROBES`](Breaker::PROBES), 1; from 1
    /// to 65535.
    ///
    /// ```
    /// use tenacious::Breaker;
    ///
    /// static PROVIDER: Breaker = Breaker::new().probes(3);
    /// assert_eq!(PROVIDER.get_probes(), 3);
    /// ```
    ///
    /// # Panics
    ///
    /// For 0 or more than 65535, as a config's `probes` out of that range
    /// is refused: in a `const` or `static`, at compile time.
    #[must_use]
    pub const fn probes(self, probes: u32) -> Self {
        assert!(
            probes >= 1 && probes <= COUNT_MAX as u32,
            "Breaker::probes takes the attempts let through while half-open, from 1 to 65535, \
             like `probes(1)`"
        );
        #[allow(clippy::cast_possible_truncation)] // at most 65535
        let probes = probes as u16;
        Self { probes, ..self }
    }

    /// The ratio set by [`ratio`](Breaker::ratio).
    #[must_use]
    pub const fn get_ratio(&self) -> f64 {
        self.ratio
    }

    /// The window set by [`window`](Breaker::window).
    #[must_use]
    pub const fn get_window(&self) -> Duration {
        Duration::from_nanos(self.window)
    }

    /// The minimum set by [`min_throughput`](Breaker::min_throughput).
    #[must_use]
    pub const fn get_min_throughput(&self) -> u32 {
        self.min_throughput
    }

    /// The break set by [`open_for`](Breaker::open_for).
    #[must_use]
    pub const fn get_open_for(&self) -> Duration {
        Duration::from_nanos(self.open_for)
    }

    /// The probes set by [`probes`](Breaker::probes).
    #[must_use]
    pub const fn get_probes(&self) -> u32 {
        self.probes as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_documented_ones() {
        let breaker = Breaker::new();
        assert_eq!(
            (
                breaker.get_ratio(),
                breaker.get_window(),
                breaker.get_min_throughput(),
                breaker.get_open_for(),
                breaker.get_probes()
            ),
            (0.5, Duration::from_secs(30), 10, Duration::from_secs(15), 1)
        );
        assert_eq!(Breaker::new().ratio(0.0).get_ratio(), 0.0);
        assert_eq!(Breaker::new().ratio(1.0).get_ratio(), 1.0);
        assert_eq!(Breaker::new().min_throughput(1).get_min_throughput(), 1);
        assert_eq!(Breaker::new().probes(65_535).get_probes(), 65_535);
        assert_eq!(
            Breaker::new().window(Duration::from_nanos(1)).get_window(),
            Duration::from_nanos(1)
        );
    }

    /// What the config reader refuses, the builders refuse, at run time as
    /// at compile time (`tests/ui/fail/breaker_*.rs`).
    #[test]
    #[should_panic(
        expected = "Breaker::open_for: a zero break lets probes through as soon as \
                               the breaker opens"
    )]
    fn a_zero_break_is_refused() {
        let zero = std::hint::black_box(Duration::ZERO);
        let _ = Breaker::new().open_for(zero);
    }

    #[test]
    #[should_panic(expected = "Breaker::window: a zero window weighs no outcome")]
    fn a_zero_window_is_refused() {
        let _ = Breaker::new().window(std::hint::black_box(Duration::ZERO));
    }

    #[test]
    #[should_panic(
        expected = "Breaker::ratio takes the share of failures that opens the \
                               breaker, from 0 to 1"
    )]
    fn a_ratio_above_1_is_refused() {
        let _ = Breaker::new().ratio(std::hint::black_box(50.0));
    }

    #[test]
    #[should_panic(expected = "Breaker::ratio takes the share")]
    fn a_nan_ratio_is_refused() {
        let _ = Breaker::new().ratio(std::hint::black_box(f64::NAN));
    }

    #[test]
    #[should_panic(
        expected = "Breaker::min_throughput takes the fewest outcomes the breaker \
                               weighs, at least 1"
    )]
    fn a_zero_min_throughput_is_refused() {
        let _ = Breaker::new().min_throughput(std::hint::black_box(0));
    }

    #[test]
    #[should_panic(
        expected = "Breaker::probes takes the attempts let through while half-open, \
                               from 1 to 65535"
    )]
    fn zero_probes_are_refused() {
        let _ = Breaker::new().probes(std::hint::black_box(0));
    }

    #[test]
    #[should_panic(expected = "Breaker::probes takes the attempts")]
    fn more_probes_than_65535_are_refused() {
        let _ = Breaker::new().probes(std::hint::black_box(65_536));
    }
}
