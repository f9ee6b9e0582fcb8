//! Where a route's targets keep their guards and statistics: one slot per
//! target name, process-wide.
//!
//! A policy names its guards and its statistics record as `&'static`
//! references, which the engine asks, registers and reports through. A
//! target built at run time gets them here: the first target of a name
//! moves its guards into a slot made for that name, and every later one
//! of that name — in another route, a route rebuilt from a reloaded
//! config, a per-request route — shares them. That is what a provider's
//! guards are for: a breaker per model that sees every call to the model,
//! whichever route made it. The slots are never freed, so their memory is
//! bounded by the names, not by the routes: at most [`MAX_TARGETS`] names
//! per process.
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::stats::CallStats;
use crate::{Breaker, Cooldown, RetryBudget, Throttle};

/// The most target names (and route names with a budget) a process
/// keeps: a name made per request (an id in it) is refused past this,
/// not kept forever.
pub const MAX_TARGETS: usize = 4096;

/// The guards a target is given, by value, before its route is built.
#[derive(Debug, Default)]
pub(super) struct Guards {
    pub(super) breaker: Option<Breaker>,
    pub(super) cooldown: Option<Cooldown>,
    pub(super) throttle: Option<Throttle>,
}

impl Guards {
    /// What two definitions of one name must agree on: which guards, and
    /// their settings.
    fn settings(&self) -> String {
        let breaker = self.breaker.as_ref().map(|b| {
            (
                b.get_ratio().to_bits(),
                b.get_window(),
                b.get_min_throughput(),
                b.get_open_for(),
                b.get_probes(),
            )
        });
        let cooldown = self.cooldown.as_ref().map(Cooldown::get_spacing);
        let throttle = self.throttle.as_ref().map(|t| {
            (
                t.get_probe_first(),
                t.get_min_rate().to_bits(),
                t.get_max_rate().to_bits(),
            )
        });
        format!("{breaker:?} {cooldown:?} {throttle:?}")
    }
}

/// A target name's guards and statistics, for the life of the process.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) name: &'static str,
    pub(super) breaker: Option<Breaker>,
    pub(super) cooldown: Option<Cooldown>,
    pub(super) throttle: Option<Throttle>,
    pub(super) stats: CallStats,
    /// What the target's answers have taught of its answer time.
    pub(super) rto: Mutex<Option<super::rto::Rto>>,
    settings: String,
}

/// Why a route could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RouteError {
    /// A route needs at least one target.
    NoTargets,
    /// Two targets of one route have the same name: the second could not
    /// be told from the first in results and statistics.
    Duplicate(String),
    /// A target of this name was built before with other guards or other
    /// guard settings. Its guards are shared by every target of the name
    /// (see [`Target`](super::Target)): give the same ones, or another
    /// name.
    Conflict(String),
    /// The process keeps [`MAX_TARGETS`] target names already: names are
    /// for models, deployments and providers, not for requests.
    TooManyNames,
}

impl std::fmt::Display for RouteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoTargets => f.write_str("a route needs at least one target"),
            Self::Duplicate(name) => write!(f, "the route names target `{name}` twice"),
            Self::Conflict(name) => write!(
                f,
                "target `{name}` was built before with other guards: a target name's guards are \
                 shared process-wide, so give the same guards and settings, or another name"
            ),
            Self::TooManyNames => write!(
                f,
                "this process keeps {MAX_TARGETS} target names already: name targets after models \
                 or providers, not requests"
            ),
        }
    }
}

impl std::error::Error for RouteError {}

static TARGETS: Mutex<Option<HashMap<String, &'static Slot>>> = Mutex::new(None);
static BUDGETS: Mutex<Option<HashMap<String, &'static RetryBudget>>> = Mutex::new(None);

/// The slot of target `name`: made from `guards` the first time, checked
/// against them after.
pub(super) fn target(name: &str, guards: Guards) -> Result<&'static Slot, RouteError> {
    let settings = guards.settings();
    let mut table = TARGETS.lock().unwrap_or_else(PoisonError::into_inner);
    let table = table.get_or_insert_with(HashMap::new);
    if let Some(slot) = table.get(name) {
        return if slot.settings == settings {
            Ok(slot)
        } else {
            Err(RouteError::Conflict(name.to_owned()))
        };
    }
    if table.len() >= MAX_TARGETS {
        return Err(RouteError::TooManyNames);
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    let slot: &'static Slot = Box::leak(Box::new(Slot {
        name: leaked,
        breaker: guards.breaker.map(|b| b.name(leaked)),
        cooldown: guards.cooldown.map(|c| c.name(leaked)),
        throttle: guards.throttle.map(|t| t.name(leaked)),
        stats: CallStats::new(leaked),
        rto: Mutex::new(None),
        settings,
    }));
    table.insert(name.to_owned(), slot);
    Ok(slot)
}

/// The budget of route `name`: made from `budget` the first time; a
/// later route of the name shares it (its own capacity is not read).
pub(super) fn budget(name: &str, budget: RetryBudget) -> Result<&'static RetryBudget, RouteError> {
    let mut table = BUDGETS.lock().unwrap_or_else(PoisonError::into_inner);
    let table = table.get_or_insert_with(HashMap::new);
    if let Some(shared) = table.get(name) {
        return Ok(shared);
    }
    if table.len() >= MAX_TARGETS {
        return Err(RouteError::TooManyNames);
    }
    let shared: &'static RetryBudget = Box::leak(Box::new(budget));
    table.insert(name.to_owned(), shared);
    Ok(shared)
}
