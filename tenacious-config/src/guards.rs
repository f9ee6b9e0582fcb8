//! The shared guards' settings as a config gives them: each deserializes
//! into its guard's own builders (a concurrency limit's in
//! `guards/concurrency.rs`).
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use tenacious_runtime::{Breaker, Cooldown, RetryBudget, Throttle};

use crate::read::{At, BREAKERS, BUDGETS, COOLDOWNS, Kind, Reader, THROTTLES, count, entries};
use crate::read::{number, table, unknown_key};
use crate::settings::duration;
use crate::value::Value;

/// Deserializes through the config's reader (`read_fn`), so a guard
/// embedded in a config of yours is checked as a file's is.
macro_rules! deserialize_through {
    ($config:ident, $read_fn:path) => {
        impl<'de> Deserialize<'de> for $config {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = Value::deserialize(deserializer)?;
                let mut reader = Reader::new("");
                let config = $read_fn(&mut reader, &At::root(), &value);
                reader
                    .finish()
                    .map(|()| config)
                    .map_err(serde::de::Error::custom)
            }
        }
    };
}

// A concurrency limit's settings, in a file of their own; after the macro,
// which they use.
mod concurrency;

pub use concurrency::ConcurrencyConfig;
pub(crate) use concurrency::concurrency;

/// A [`RetryBudget`]'s settings, under `[budgets.NAME]` in a set of
/// policies, or deserialized on its own.
///
/// | key | value | default |
/// |---|---|---|
/// | `capacity` | tokens, a whole number (a retry costs 5; 0 allows none) | [`RetryBudget::CAPACITY`], 500 |
///
/// ```
/// use tenacious::config::BudgetConfig;
///
/// let config: BudgetConfig = serde_json::from_str(r#"{ "capacity": 50 }"#).unwrap();
/// assert_eq!(config.build().capacity(), 50);
/// assert_eq!(BudgetConfig::default().build().capacity(), 500);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BudgetConfig {
    pub(crate) capacity: Option<u32>,
}

impl BudgetConfig {
    /// A full budget of the capacity set, else of the default.
    ///
    /// A guard is named by `&'static` reference: keep the one built in a
    /// `static` (a `OnceLock`), or leak it once at start-up with
    /// `Box::leak(Box::new(config.build()))`, as
    /// [`Policies`](super::Policies) does.
    #[must_use]
    pub fn build(self) -> RetryBudget {
        RetryBudget::with_capacity(self.capacity.unwrap_or(RetryBudget::CAPACITY))
    }

    /// The capacity, if set.
    #[must_use]
    pub const fn get_capacity(&self) -> Option<u32> {
        self.capacity
    }
}

deserialize_through!(BudgetConfig, budget);

/// A [`Cooldown`]'s settings, under `[cooldowns.NAME]` in a set of
/// policies, or deserialized on its own.
///
/// | key | value | default |
/// |---|---|---|
/// | `spacing` | a duration like `"10ms"` between waiters released (`"0s"`: all at once) | [`Cooldown::SPACING`], 10 ms |
///
/// ```
/// use std::time::Duration;
/// use tenacious::config::CooldownConfig;
///
/// let config: CooldownConfig = serde_json::from_str(r#"{ "spacing": "50ms" }"#).unwrap();
/// assert_eq!(config.build().get_spacing(), Duration::from_millis(50));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CooldownConfig {
    pub(crate) spacing: Option<u64>,
}

impl CooldownConfig {
    /// The settings on top of `cooldown` (a fresh one from its builders).
    #[must_use]
    pub fn apply(self, mut cooldown: Cooldown) -> Cooldown {
        if let Some(spacing) = self.spacing {
            cooldown = cooldown.spacing(Duration::from_nanos(spacing));
        }
        cooldown
    }

    /// A new, open cooldown with these settings (see
    /// [`BudgetConfig::build`] on making it `'static`).
    #[must_use]
    pub fn build(self) -> Cooldown {
        self.apply(Cooldown::new())
    }

    /// The spacing, if set.
    #[must_use]
    pub fn get_spacing(&self) -> Option<Duration> {
        self.spacing.map(Duration::from_nanos)
    }
}

deserialize_through!(CooldownConfig, cooldown);

/// A [`Throttle`]'s settings, under `[throttles.NAME]` in a set of
/// policies, or deserialized on its own.
///
/// | key | value | default |
/// |---|---|---|
/// | `min_rate` | requests a second, a positive number | [`Throttle::MIN_RATE`], 0.5 |
/// | `max_rate` | requests a second, at least `min_rate` | unbounded |
/// | `probe_first` | a duration: how long the first call's answer is awaited by the others | `"0s"`, none held |
///
/// ```
/// use std::time::Duration;
/// use tenacious::config::ThrottleConfig;
///
/// let config: ThrottleConfig =
///     serde_json::from_str(r#"{ "max_rate": 20, "probe_first": "2s" }"#).unwrap();
/// let throttle = config.build();
/// assert_eq!(throttle.get_max_rate(), 20.0);
/// assert_eq!(throttle.get_probe_first(), Duration::from_secs(2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ThrottleConfig {
    pub(crate) min_rate: Option<f64>,
    pub(crate) max_rate: Option<f64>,
    pub(crate) probe_first: Option<u64>,
}

impl ThrottleConfig {
    /// The settings on top of `throttle` (a fresh one from its builders).
    ///
    /// # Panics
    ///
    /// As the builders do, when a rate read meets one of `throttle`'s own
    /// that it does not fit: a `min_rate` above its `max_rate`, a
    /// `max_rate` below its `min_rate`. (On [`Throttle::new`], never: the
    /// reader refused those.)
    #[must_use]
    pub fn apply(self, mut throttle: Throttle) -> Throttle {
        if let Some(rate) = self.min_rate {
            throttle = throttle.min_rate(rate);
        }
        if let Some(rate) = self.max_rate {
            throttle = throttle.max_rate(rate);
        }
        if let Some(wait) = self.probe_first {
            throttle = throttle.probe_first(Duration::from_nanos(wait));
        }
        throttle
    }

    /// A new throttle, off until the first throttling answer, with these
    /// settings (see [`BudgetConfig::build`] on making it `'static`).
    #[must_use]
    pub fn build(self) -> Throttle {
        self.apply(Throttle::new())
    }

    /// The least adaptive rate, if set.
    #[must_use]
    pub const fn get_min_rate(&self) -> Option<f64> {
        self.min_rate
    }

    /// The most adaptive rate, if set.
    #[must_use]
    pub const fn get_max_rate(&self) -> Option<f64> {
        self.max_rate
    }

    /// The wait for the first answer, if set.
    #[must_use]
    pub fn get_probe_first(&self) -> Option<Duration> {
        self.probe_first.map(Duration::from_nanos)
    }
}

deserialize_through!(ThrottleConfig, throttle);

/// A [`Breaker`]'s settings, under `[breakers.NAME]` in a set of
/// policies, or deserialized on its own.
///
/// | key | value | default |
/// |---|---|---|
/// | `ratio` | the share of failures that opens it, from 0 to 1 | [`Breaker::RATIO`], 0.5 |
/// | `window` | a duration: how far back outcomes are weighed | [`Breaker::WINDOW`], 30 s |
/// | `min_throughput` | the fewest outcomes weighed, ≥ 1 | [`Breaker::MIN_THROUGHPUT`], 10 |
/// | `open_for` | a duration: the break before it probes | [`Breaker::OPEN_FOR`], 15 s |
/// | `probes` | attempts let through while half-open, 1 to 65535 | [`Breaker::PROBES`], 1 |
///
/// ```
/// use std::time::Duration;
/// use tenacious::config::BreakerConfig;
///
/// let config: BreakerConfig =
///     serde_json::from_str(r#"{ "ratio": 0.25, "open_for": "30s" }"#).unwrap();
/// let breaker = config.build();
/// assert_eq!(breaker.get_ratio(), 0.25);
/// assert_eq!(breaker.get_open_for(), Duration::from_secs(30));
/// assert_eq!(breaker.get_window(), Duration::from_secs(30)); // the default
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BreakerConfig {
    pub(crate) ratio: Option<f64>,
    pub(crate) window: Option<u64>,
    pub(crate) min_throughput: Option<u32>,
    pub(crate) open_for: Option<u64>,
    pub(crate) probes: Option<u32>,
}

impl BreakerConfig {
    /// The settings on top of `breaker` (a fresh one from its builders).
    #[must_use]
    pub fn apply(self, mut breaker: Breaker) -> Breaker {
        if let Some(ratio) = self.ratio {
            breaker = breaker.ratio(ratio);
        }
        if let Some(window) = self.window {
            breaker = breaker.window(Duration::from_nanos(window));
        }
        if let Some(min) = self.min_throughput {
            breaker = breaker.min_throughput(min);
        }
        if let Some(open_for) = self.open_for {
            breaker = breaker.open_for(Duration::from_nanos(open_for));
        }
        if let Some(probes) = self.probes {
            breaker = breaker.probes(probes);
        }
        breaker
    }

    /// A new, closed breaker with these settings (see
    /// [`BudgetConfig::build`] on making it `'static`).
    #[must_use]
    pub fn build(self) -> Breaker {
        self.apply(Breaker::new())
    }

    /// The failure ratio, if set.
    #[must_use]
    pub const fn get_ratio(&self) -> Option<f64> {
        self.ratio
    }

    /// The window, if set.
    #[must_use]
    pub fn get_window(&self) -> Option<Duration> {
        self.window.map(Duration::from_nanos)
    }

    /// The minimum throughput, if set.
    #[must_use]
    pub const fn get_min_throughput(&self) -> Option<u32> {
        self.min_throughput
    }

    /// The break, if set.
    #[must_use]
    pub fn get_open_for(&self) -> Option<Duration> {
        self.open_for.map(Duration::from_nanos)
    }

    /// The half-open probes, if set.
    #[must_use]
    pub const fn get_probes(&self) -> Option<u32> {
        self.probes
    }
}

deserialize_through!(BreakerConfig, breaker);

/// Reads a guard's table: each key through `read`, which returns whether
/// it knew the key.
pub(crate) fn guard_table(
    r: &mut Reader<'_>,
    at: &At,
    value: &Value,
    kind: &Kind,
    mut read: impl FnMut(&mut Reader<'_>, &At, &str, &Value) -> bool,
) {
    let expected = format!(
        "a {} takes a table of settings, like `{}`",
        kind.singular,
        match kind.singular {
            "budget" => "capacity = 500",
            "cooldown" => "spacing = \"10ms\"",
            "throttle" => "min_rate = 0.5",
            "concurrency" => "limit = 4",
            _ => "open_for = \"15s\"",
        }
    );
    let Some(table) = table(r, at, value, &expected) else {
        return;
    };
    for (at, entry) in entries(r, at, table) {
        if !read(r, &at, &entry.key, &entry.value) {
            r.problem(&at, None, unknown_key(&entry.key, kind.keys, false));
        }
    }
}

pub(crate) fn budget(r: &mut Reader<'_>, at: &At, value: &Value) -> BudgetConfig {
    let mut config = BudgetConfig::default();
    guard_table(r, at, value, &BUDGETS, |r, at, key, value| {
        if key != "capacity" {
            return false;
        }
        config.capacity = count(
            r,
            at,
            value,
            0,
            "`capacity` takes a whole number of tokens: `capacity = 500` (a retry costs 5)",
            "`capacity` takes a whole number of tokens: `capacity = 500` (a retry costs 5)",
            "`capacity` must fit a `u32`: write a number of tokens up to 4294967295",
        );
        true
    });
    config
}

pub(crate) fn cooldown(r: &mut Reader<'_>, at: &At, value: &Value) -> CooldownConfig {
    let mut config = CooldownConfig::default();
    guard_table(r, at, value, &COOLDOWNS, |r, at, key, value| {
        if key != "spacing" {
            return false;
        }
        config.spacing = duration(r, at, key, value);
        true
    });
    config
}

/// A rate in requests a second: positive, finite unless `infinite_ok`.
pub(crate) fn rate(
    r: &mut Reader<'_>,
    at: &At,
    key: &str,
    value: &Value,
    example: &str,
) -> Option<f64> {
    match number(value) {
        Some(rate) if rate > 0.0 && (rate.is_finite() || key == "max_rate") => Some(rate),
        _ => {
            r.problem(
                at,
                Some(value),
                format!("`{key}` takes a positive number of requests a second: `{example}`"),
            );
            None
        }
    }
}

pub(crate) fn throttle(r: &mut Reader<'_>, at: &At, value: &Value) -> ThrottleConfig {
    let mut config = ThrottleConfig::default();
    let mut max_rate_at: Option<(At, Value)> = None;
    guard_table(r, at, value, &THROTTLES, |r, at, key, value| {
        match key {
            "min_rate" => config.min_rate = rate(r, at, key, value, "min_rate = 0.5"),
            "max_rate" => {
                config.max_rate = rate(r, at, key, value, "max_rate = 50");
                max_rate_at = Some((at.clone(), value.clone()));
            }
            "probe_first" => config.probe_first = duration(r, at, key, value),
            _ => return false,
        }
        true
    });
    if let (Some(max_rate), Some((at, value))) = (config.max_rate, max_rate_at) {
        let (min_rate, which) = match config.min_rate {
            Some(min_rate) => (min_rate, "`min_rate`"),
            None => (
                tenacious_runtime::Throttle::MIN_RATE,
                "the default `min_rate`",
            ),
        };
        if max_rate < min_rate {
            r.problem(
                &at,
                Some(&value),
                format!(
                    "`max_rate` ({max_rate}) is below {which} ({min_rate}): the rate never goes \
                     under `min_rate`, so it would never grow at all; raise `max_rate` or lower \
                     `min_rate`"
                ),
            );
        }
    }
    config
}

pub(crate) fn breaker(r: &mut Reader<'_>, at: &At, value: &Value) -> BreakerConfig {
    let mut config = BreakerConfig::default();
    guard_table(r, at, value, &BREAKERS, |r, at, key, value| {
        match key {
            "ratio" => match number(value) {
                Some(ratio) if (0.0..=1.0).contains(&ratio) => config.ratio = Some(ratio),
                _ => r.problem(
                    at,
                    Some(value),
                    "`ratio` takes the share of failures that opens the breaker, from 0 to 1: \
                     `ratio = 0.5`",
                ),
            },
            "window" => config.window = duration(r, at, key, value),
            "open_for" => config.open_for = duration(r, at, key, value),
            "min_throughput" => {
                let why = "`min_throughput` takes the fewest outcomes the breaker weighs, a \
                     whole number at least 1: `min_throughput = 10`";
                config.min_throughput = count(
                    r,
                    at,
                    value,
                    1,
                    why,
                    why,
                    "`min_throughput` must fit a `u32`: write a number of outcomes up to \
                     4294967295",
                );
            }
            "probes" => {
                let why = "`probes` takes the attempts let through while half-open, a whole \
                     number from 1 to 65535: `probes = 1`";
                config.probes = count(r, at, value, 1, why, why, why).filter(|probes| {
                    let fits = *probes <= u32::from(u16::MAX);
                    if !fits {
                        r.problem(at, Some(value), why);
                    }
                    fits
                });
            }
            _ => return false,
        }
        true
    });
    config
}
