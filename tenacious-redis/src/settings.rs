//! The settings a shared guard's scripts take, agreed across the fleet: the
//! first written under a name hold (see the module's docs, "Settings").
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ::redis::Script;

use crate::{Link, SETTINGS_IDLE};

/// How a setting's value is shown.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A whole number.
    Count,
    /// Microseconds, shown as a duration.
    Micros,
    /// Thousandths, shown as a number.
    Milli,
    /// Thousandths, 0 being none (unbounded).
    MilliOrNone,
}

/// A guard's settings as its scripts take them: names and values, in the
/// order the settings key holds them.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    names: &'static [(&'static str, Unit)],
    values: Vec<i64>,
}

impl Settings {
    pub(crate) fn new(names: &'static [(&'static str, Unit)], values: Vec<i64>) -> Self {
        debug_assert_eq!(names.len(), values.len());
        Self { names, values }
    }

    /// Other values under the same names.
    fn with(&self, values: Vec<i64>) -> Self {
        Self {
            names: self.names,
            values,
        }
    }

    /// What the settings key holds: the values, comma-separated.
    fn decode(&self, text: &str) -> Option<Vec<i64>> {
        let values: Vec<i64> = text
            .split(',')
            .map(|value| value.parse().ok())
            .collect::<Option<_>>()?;
        (values.len() == self.names.len()).then_some(values)
    }
}

impl std::fmt::Display for Settings {
    /// `capacity 1000`; `ratio 0.5, window 30s, …`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut shown = String::new();
        for (i, ((name, unit), value)) in self.names.iter().zip(&self.values).enumerate() {
            if i > 0 {
                shown.push_str(", ");
            }
            #[allow(clippy::cast_precision_loss)]
            let milli = *value as f64 / 1000.0;
            let _ = match unit {
                Unit::Count => write!(shown, "{name} {value}"),
                Unit::Micros => write!(shown, "{name} {:?}", crate::from_micros(*value)),
                Unit::MilliOrNone if *value == 0 => write!(shown, "{name} unbounded"),
                Unit::Milli | Unit::MilliOrNone => write!(shown, "{name} {milli}"),
            };
        }
        f.write_str(&shown)
    }
}

/// `KEYS[1]`: the settings key (a string, the values comma-separated).
/// `ARGV`: its time to live in ms, then this process's values. Writes them
/// if the key is missing; keeps the key alive if it holds them. Answers
/// what it holds.
const SETTINGS: &str = r"
local mine = table.concat(ARGV, ',', 2)
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], mine, 'PX', ARGV[1])
  return mine
end
if held == mine then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return held
";

static SETTINGS_SCRIPT: LazyLock<Script> = LazyLock::new(|| Script::new(SETTINGS));

/// A bound name's settings: this process's, and the fleet's that its
/// decisions in Redis take (its own until the first check, and while
/// they are the fleet's). Shared by the guards of one kind bound to one
/// name in one store, which have the same settings.
#[doc(hidden)]
pub struct Agreed {
    /// The guard's key, `{prefix}:{name}:{kind}`.
    pub(crate) guard_key: String,
    /// `{guard_key}:settings`.
    key: std::sync::Arc<str>,
    pub(crate) mine: Settings,
    fleet: Box<[AtomicI64]>,
    /// Whether the last check found others than this process's.
    differs: AtomicBool,
    /// When it was last checked; `None`: never, or Redis came back since.
    checked: Mutex<Option<Instant>>,
}

impl Agreed {
    pub(crate) fn new(guard_key: String, mine: Settings) -> Self {
        Self {
            key: format!("{guard_key}:settings").into(),
            guard_key,
            fleet: mine.values.iter().map(|v| AtomicI64::new(*v)).collect(),
            mine,
            differs: AtomicBool::new(false),
            checked: Mutex::new(None),
        }
    }

    /// The `i`th setting the fleet's scripts take.
    pub(crate) fn get(&self, i: usize) -> i64 {
        self.fleet[i].load(Ordering::Relaxed)
    }

    /// Whether a check is due: never made, or made `every` ago.
    pub(crate) fn due(&self, now: Instant, every: Duration) -> bool {
        self.checked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none_or(|at| now.saturating_duration_since(at) >= every)
    }

    /// The next check is due at once (Redis came back, maybe empty).
    pub(crate) fn recheck(&self) {
        *self.checked.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Writes this process's settings if the fleet has none, keeps them
    /// alive if they are the fleet's, and takes the fleet's otherwise
    /// (logged and counted once, until they agree again).
    pub(crate) async fn check(&self, link: &Link) {
        let ttl = SETTINGS_IDLE.max(link.refresh.saturating_mul(3));
        let mut args = vec![crate::micros(ttl) / 1000];
        args.extend(&self.mine.values);
        let Some(held) = link.run::<String>(&SETTINGS_SCRIPT, &self.key, &args).await else {
            return;
        };
        *self.checked.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        let fleet = self.mine.decode(&held);
        let values = fleet.as_ref().unwrap_or(&self.mine.values);
        for (slot, value) in self.fleet.iter().zip(values) {
            slot.store(*value, Ordering::Relaxed);
        }
        if fleet.as_ref() == Some(&self.mine.values) {
            self.differs.store(false, Ordering::Relaxed);
        } else if !self.differs.swap(true, Ordering::Relaxed) {
            let fleet =
                fleet.map_or_else(|| format!("{held:?}"), |v| self.mine.with(v).to_string());
            link.settings_differ(&self.key, &fleet, &self.mine.to_string());
        }
    }
}
