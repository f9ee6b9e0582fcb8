//! The throttle's settings: the first answer it waits for, and the
//! floor and ceiling of its adaptive rate, as `const` builders and
//! their getters.
use std::time::Duration;

use super::Throttle;
use crate::clock::saturating_nanos;

impl Throttle {
    /// The default [`min_rate`](Throttle::min_rate): 0.5 requests a second
    /// (`MIN_FILL_RATE` of the AWS SDKs' adaptive mode).
    pub const MIN_RATE: f64 = 0.5;

    /// Until the provider has answered a call naming it, lets one attempt
    /// go first and holds every other for that answer, at most `wait`: a
    /// fleet that starts at once sends one request, learns the window from
    /// its headers (or its 429), and paces the rest by it, instead of
    /// sending them all into a quota it does not know yet. The calls held
    /// ask again every 20 ms; after `wait` without an answer they go.
    /// Default: zero, none held (the AWS SDKs' behaviour: off until the
    /// first throttle). Over real HTTP on loopback (`tests/fleet_http.rs`,
    /// 32 tasks against 4 requests a second, a burst of 4), the first
    /// wave's 28 of 32 requests answered 429 were every 429 the guarded
    /// fleet got; with `probe_first` there are none in it. Bound to a
    /// store (feature `redis`), the probe is the fleet's: the first call
    /// of any process to ask goes, and every process holds its calls
    /// (asking the fleet again every 20 ms) until that answer turns the
    /// fleet's throttle on, or its own `wait` from the probe's start runs
    /// out; while Redis is down, each process probes for itself.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Throttle;
    ///
    /// static OPENAI: Throttle = Throttle::new().probe_first(Duration::from_secs(2));
    /// assert_eq!(OPENAI.get_probe_first(), Duration::from_secs(2));
    /// assert_eq!(Throttle::new().get_probe_first(), Duration::ZERO);
    /// ```
    #[must_use]
    pub const fn probe_first(self, wait: Duration) -> Self {
        Self {
            probe_first: saturating_nanos(wait),
            ..self
        }
    }

    /// The wait set by [`probe_first`](Throttle::probe_first).
    #[must_use]
    pub const fn get_probe_first(&self) -> Duration {
        Duration::from_nanos(self.probe_first)
    }

    /// The least adaptive rate, in requests a second: however often the
    /// provider throttles, the bucket fills at least this fast. Default
    /// [`MIN_RATE`](Throttle::MIN_RATE), 0.5; a positive finite number.
    /// (It does not bound the pacing from headers, which follows the
    /// provider's window.)
    ///
    /// ```
    /// use tenacious::Throttle;
    ///
    /// static SLOW: Throttle = Throttle::new().min_rate(0.1);
    /// assert_eq!(SLOW.get_min_rate(), 0.1);
    /// ```
    ///
    /// # Panics
    ///
    /// For a rate that is not a positive finite number, or one above the
    /// [`max_rate`](Throttle::max_rate) set before, as a config's
    /// `min_rate` is refused: in a `const` or `static`, at compile time.
    ///
    /// ```compile_fail
    /// use tenacious::Throttle;
    ///
    /// static WRONG: Throttle = Throttle::new().min_rate(0.0);
    /// ```
    #[must_use]
    pub const fn min_rate(self, rate: f64) -> Self {
        assert!(
            rate > 0.0 && rate.is_finite(),
            "Throttle::min_rate takes a positive number of requests a second, like \
             `min_rate(0.5)`"
        );
        assert!(
            rate <= self.max_rate,
            "Throttle::min_rate is above the `max_rate` set before it: the rate never goes \
             under `min_rate`, so it would never grow at all; lower `min_rate` or raise \
             `max_rate`"
        );
        Self {
            min_rate: rate,
            ..self
        }
    }

    /// The rate set by [`min_rate`](Throttle::min_rate).
    #[must_use]
    pub const fn get_min_rate(&self) -> f64 {
        self.min_rate
    }

    /// The most adaptive rate, in requests a second, however long the
    /// calls succeed: a ceiling on CUBIC's growth once the throttle is on
    /// (it does not turn the throttle on). Default unbounded
    /// (`f64::INFINITY`); a positive number, at least
    /// [`min_rate`](Throttle::min_rate).
    ///
    /// ```
    /// use tenacious::Throttle;
    ///
    /// static CAPPED: Throttle = Throttle::new().max_rate(50.0);
    /// assert_eq!(CAPPED.get_max_rate(), 50.0);
    /// assert_eq!(Throttle::new().get_max_rate(), f64::INFINITY);
    /// // Below the default least rate (0.5): set the least one first.
    /// static SLOW: Throttle = Throttle::new().min_rate(0.1).max_rate(0.2);
    /// assert_eq!(SLOW.get_max_rate(), 0.2);
    /// ```
    ///
    /// # Panics
    ///
    /// For a rate that is not a positive number, or one below the
    /// `min_rate` (the default's 0.5, or the one set before), as a
    /// config's `max_rate` is refused: in a `const` or `static`, at
    /// compile time.
    ///
    /// ```compile_fail
    /// use tenacious::Throttle;
    ///
    /// static WRONG: Throttle = Throttle::new().max_rate(0.2); // below 0.5
    /// ```
    #[must_use]
    pub const fn max_rate(self, rate: f64) -> Self {
        assert!(
            rate > 0.0,
            "Throttle::max_rate takes a positive number of requests a second, like \
             `max_rate(50.0)`"
        );
        assert!(
            rate >= self.min_rate,
            "Throttle::max_rate is below `min_rate` (the default 0.5, or the one set before \
             it): the rate never goes under `min_rate`, so it would never grow at all; raise \
             `max_rate`, or set a lower `min_rate` first"
        );
        Self {
            max_rate: rate,
            ..self
        }
    }

    /// The rate set by [`max_rate`](Throttle::max_rate).
    #[must_use]
    pub const fn get_max_rate(&self) -> f64 {
        self.max_rate
    }
}
