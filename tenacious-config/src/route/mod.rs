//! Routes declared in a set: `[routes.NAME]`, its targets, deadline,
//! budget and rules, read and checked with the rest of the document, and
//! built into a [`Route<String>`] by [`Policies::route`].
//!
//! A route is kept as its settings, not as a built [`Route`]: building
//! one puts its targets' guards in the process-wide table of target names
//! (`tenacious::route`), which a set does only when asked for the route.
mod build;
mod check;
mod error;
mod read;
mod target;

use std::time::Duration;

use tenacious_runtime::Policy;
use tenacious_runtime::route::Rules;

use crate::guards::{
    BreakerConfig, BudgetConfig, ConcurrencyConfig, CooldownConfig, ThrottleConfig,
};
use crate::policy::PolicyConfig;
use crate::read::At;
use crate::value::Value;

pub(crate) use build::build;
pub(crate) use check::check;
pub use error::RouteConfigError;
pub(crate) use read::routes;

/// The keys of a route's table.
const ROUTE_KEYS: &[&str] = &[
    "targets",
    "deadline",
    "budget",
    "on_class",
    "on_stop",
    "on_silence",
];

/// The keys of a target's table.
const TARGET_KEYS: &[&str] = &[
    "name",
    "data",
    "policy",
    "breaker",
    "cooldown",
    "throttle",
    "concurrency",
    "context",
    "silence",
    "learn_silence",
];

/// A target written as a route's targets are: for messages.
const TARGET_EXAMPLE: &str = "{ name = \"gpt-4o\", data = \"https://api.openai.com/v1\" }";

/// A guard (or a route's budget) as a route or a target writes it.
#[derive(Debug, Clone)]
pub(crate) enum GuardRef<C> {
    /// By name: the set's shared guard, declared under `[breakers.NAME]`
    /// (and the others) or named by a policy.
    Named { name: String, at: At, value: Value },
    /// Its settings, inline: the target's own (a route's own budget).
    Own(C),
}

impl<C> GuardRef<C> {
    fn name(&self) -> Option<&str> {
        match self {
            Self::Named { name, .. } => Some(name),
            Self::Own(_) => None,
        }
    }

    fn own(&self) -> Option<&C> {
        match self {
            Self::Named { .. } => None,
            Self::Own(config) => Some(config),
        }
    }
}

/// A target's policy as written.
#[derive(Debug, Clone, Default)]
enum PolicyRef {
    /// None written: [`Policy::DEFAULT`].
    #[default]
    Default,
    /// A policy of the set, by name.
    Named { name: String, at: At, value: Value },
    /// Its settings, inline.
    Own(PolicyConfig),
}

/// One target of a route, read.
#[derive(Debug, Clone, Default)]
struct TargetDoc {
    /// Its place in the route's list.
    index: usize,
    /// Where its name was written, to point at it.
    name: Option<(String, At)>,
    data: Option<String>,
    policy: PolicyRef,
    breaker: Option<GuardRef<BreakerConfig>>,
    cooldown: Option<GuardRef<CooldownConfig>>,
    throttle: Option<GuardRef<ThrottleConfig>>,
    /// By name only: a target has no concurrency limit of its own.
    concurrency: Option<GuardRef<ConcurrencyConfig>>,
    context: Option<u64>,
    silence: Option<u64>,
    learn_silence: Option<u64>,
}

impl TargetDoc {
    fn name(&self) -> &str {
        self.name.as_ref().map_or("", |(name, _)| name)
    }

    /// What two targets of one name must agree on, as the route's table
    /// of target names compares them: their own guards' settings.
    fn guard_settings(&self) -> String {
        let breaker = self.breaker.as_ref().and_then(GuardRef::own).map(|c| {
            let b = c.build();
            (
                b.get_ratio().to_bits(),
                b.get_window(),
                b.get_min_throughput(),
                b.get_open_for(),
                b.get_probes(),
            )
        });
        let cooldown = self
            .cooldown
            .as_ref()
            .and_then(GuardRef::own)
            .map(|c| c.build().get_spacing());
        let throttle = self.throttle.as_ref().and_then(GuardRef::own).map(|c| {
            let t = c.build();
            (
                t.get_probe_first(),
                t.get_min_rate().to_bits(),
                t.get_max_rate().to_bits(),
            )
        });
        format!("{breaker:?} {cooldown:?} {throttle:?}")
    }
}

/// One route of a document, read.
#[derive(Debug, Clone)]
pub(crate) struct RouteDoc {
    name: String,
    deadline: Option<u64>,
    budget: Option<GuardRef<BudgetConfig>>,
    rules: Rules,
    targets: Vec<TargetDoc>,
    /// Whether its list of targets was refused already (too long).
    too_many: bool,
}

impl RouteDoc {
    /// Whether the route or one of its targets names the shared guard
    /// `name` of `kind` (`"breaker"`, …, `"budget"`).
    pub(crate) fn names(&self, kind: &str, name: &str) -> bool {
        let named = |guard: Option<&str>| guard == Some(name);
        match kind {
            "budget" => named(self.budget.as_ref().and_then(GuardRef::name)),
            "breaker" => self
                .targets
                .iter()
                .any(|t| named(t.breaker.as_ref().and_then(GuardRef::name))),
            "cooldown" => self
                .targets
                .iter()
                .any(|t| named(t.cooldown.as_ref().and_then(GuardRef::name))),
            "throttle" => self
                .targets
                .iter()
                .any(|t| named(t.throttle.as_ref().and_then(GuardRef::name))),
            "concurrency" => self
                .targets
                .iter()
                .any(|t| named(t.concurrency.as_ref().and_then(GuardRef::name))),
            _ => false,
        }
    }
}

/// A route of a set, ready to build: its targets' policies carry the
/// set's shared guards they name; their own guards are settings, built by
/// value each time the route is.
#[derive(Debug, Clone)]
pub(crate) struct RouteSpec {
    deadline: Option<Duration>,
    budget: Option<BudgetConfig>,
    rules: Rules,
    targets: Vec<TargetSpec>,
}

#[derive(Debug, Clone)]
struct TargetSpec {
    name: String,
    data: String,
    policy: Policy,
    breaker: Option<BreakerConfig>,
    cooldown: Option<CooldownConfig>,
    throttle: Option<ThrottleConfig>,
    context: Option<u64>,
    silence: Option<Duration>,
    learn_silence: Option<Duration>,
}
