//! A policy's table, and a whole set of policies: `[policies.NAME]` and
//! the shared guards they name, each declared guard named by a policy.
use tenacious_runtime::Policy;
use tenacious_runtime::store::hooks::check_name;
use tenacious_syntax::keys::{self, InConfig};
use tenacious_syntax::rules;

use crate::guards::{BreakerConfig, BudgetConfig, ConcurrencyConfig, CooldownConfig};
use crate::guards::{ThrottleConfig, breaker, budget, concurrency, cooldown, throttle};
use crate::policy::PolicyConfig;
use crate::read::{
    At, GUARD_KEYS, KINDS, POLICY_KEYS, Reader, as_text, closest, entries, segment, table,
    unknown_key,
};
use crate::settings::{duration, jitter, max, nested, on, resume};
use crate::value::{Value, quoted};

/// The names of the shared guards a policy of a set names.
#[derive(Debug, Clone, Default)]
pub(crate) struct GuardNames {
    pub(crate) budget: Option<String>,
    pub(crate) breaker: Option<String>,
    pub(crate) cooldown: Option<String>,
    pub(crate) throttle: Option<String>,
    pub(crate) concurrency: Option<String>,
    /// Where `concurrency` was written: a name the set does not declare
    /// is a problem there (a concurrency limit has no defaults).
    pub(crate) concurrency_at: Option<(At, Value)>,
}

impl GuardNames {
    pub(crate) fn get(&self, kind: &str) -> Option<&str> {
        match kind {
            "budget" => self.budget.as_deref(),
            "breaker" => self.breaker.as_deref(),
            "cooldown" => self.cooldown.as_deref(),
            "throttle" => self.throttle.as_deref(),
            "concurrency" => self.concurrency.as_deref(),
            _ => None,
        }
    }

    fn set(&mut self, kind: &str, name: String, at: &At, value: &Value) {
        let slot = match kind {
            "budget" => &mut self.budget,
            "breaker" => &mut self.breaker,
            "cooldown" => &mut self.cooldown,
            "throttle" => &mut self.throttle,
            _ => {
                self.concurrency_at = Some((at.clone(), value.clone()));
                &mut self.concurrency
            }
        };
        *slot = Some(name);
    }
}

/// The plural of a guard kind, for the table that declares one.
pub(crate) fn plural(kind: &str) -> &'static str {
    KINDS
        .iter()
        .find(|k| k.singular == kind)
        .map_or("guards", |k| k.plural)
}

pub(crate) fn guard_name(r: &mut Reader<'_>, at: &At, kind: &str, value: &Value) -> Option<String> {
    match as_text(value) {
        Some(name) if !name.is_empty() => {
            // Bound to a store by this name, it must be one the store takes.
            if let Err(why) = check_name(name) {
                r.problem(at, Some(value), why);
                return None;
            }
            Some(name.to_owned())
        }
        _ if kind == "concurrency" => {
            r.problem(
                at,
                Some(value),
                "`concurrency` takes the name of a shared concurrency limit: `concurrency = \
                 \"gpu\"` (declared under `[concurrencies.gpu]`, with its `limit`)",
            );
            None
        }
        _ => {
            r.problem(
                at,
                Some(value),
                format!(
                    "`{kind}` takes the name of a shared {kind}: `{kind} = \"openai\"` (its \
                     settings, if not the defaults, under `[{}.openai]`)",
                    plural(kind)
                ),
            );
            None
        }
    }
}

/// Reads a policy's table. `in_set`: the policy belongs to a set of
/// policies, so it may name the set's shared guards.
pub(crate) fn policy(
    r: &mut Reader<'_>,
    at: &At,
    value: &Value,
    in_set: bool,
) -> (PolicyConfig, GuardNames) {
    let mut config = PolicyConfig::default();
    let mut guards = GuardNames::default();
    let Some(table) = table(
        r,
        at,
        value,
        "a policy takes a table of settings, like `max = 3`",
    ) else {
        return (config, guards);
    };
    let known: Vec<&str> = POLICY_KEYS
        .iter()
        .copied()
        .filter(|key| in_set || !GUARD_KEYS.contains(key))
        .collect();
    // Where each setting was read, for the checks across keys.
    let mut spots: Vec<(&str, At, &Value)> = Vec::new();
    for (at, entry) in entries(r, at, table) {
        let value = &entry.value;
        let key = entry.key.as_str();
        match key {
            "max" => config.max = max(r, &at, value),
            "base" => config.base = duration(r, &at, key, value),
            "cap" => config.cap = duration(r, &at, key, value),
            "max_retry_after" => config.max_retry_after = duration(r, &at, key, value),
            "timeout" => config.timeout = duration(r, &at, key, value),
            "deadline" => config.deadline = duration(r, &at, key, value),
            "first_item" => config.first_item = duration(r, &at, key, value),
            "idle" => config.idle = duration(r, &at, key, value),
            "jitter" => config.jitter = jitter(r, &at, value),
            "on" => config.on = on(r, &at, value),
            "resume" => config.resume = resume(r, &at, value),
            "nested" => config.nested = nested(r, &at, value),
            kind if GUARD_KEYS.contains(&kind) => {
                if in_set {
                    if let Some(name) = guard_name(r, &at, kind, value) {
                        guards.set(kind, name, &at, value);
                    }
                } else {
                    r.problem(
                        &at,
                        Some(value),
                        format!(
                            "`{kind}` names a shared {kind}, which only a set of policies \
                             declares (`tenacious::config::Policies`, under `[{}.NAME]`); for \
                             a policy on its own, add it in code with `Policy::{kind}`",
                            plural(kind)
                        ),
                    );
                }
            }
            other => {
                let message = match keys::find(other).map(|key| key.config) {
                    Some(InConfig::CodeOnly(why)) => why.to_owned(),
                    _ => unknown_key(other, &known, true),
                };
                r.problem(&at, None, message);
            }
        }
        if let Some(known) = POLICY_KEYS.iter().find(|known| **known == key) {
            spots.push((*known, at, value));
        }
    }
    for (key, message) in config.conflicts(&Policy::DEFAULT, true) {
        let spot = spots.iter().rev().find(|(known, ..)| *known == key);
        match spot {
            Some((_, at, value)) => r.problem(at, Some(value), message),
            None => r.problem(at, None, message),
        }
    }
    (config, guards)
}

/// Everything a set of policies declares, read and checked.
#[derive(Debug, Default)]
pub(crate) struct Document {
    pub(crate) policies: Vec<(String, PolicyConfig, GuardNames)>,
    pub(crate) budgets: Vec<(String, BudgetConfig)>,
    pub(crate) cooldowns: Vec<(String, CooldownConfig)>,
    pub(crate) throttles: Vec<(String, ThrottleConfig)>,
    pub(crate) breakers: Vec<(String, BreakerConfig)>,
    pub(crate) concurrencies: Vec<(String, ConcurrencyConfig)>,
    pub(crate) routes: Vec<crate::route::RouteDoc>,
}

/// Reads a set of policies: `[policies.NAME]`, and the shared guards they
/// name under `[budgets.NAME]`, `[cooldowns.NAME]`, `[throttles.NAME]`,
/// `[breakers.NAME]`, `[concurrencies.NAME]`, and the routes under
/// `[routes.NAME]`.
pub(crate) fn document(r: &mut Reader<'_>, value: &Value) -> Document {
    let mut document = Document::default();
    let root = At::root();
    let Some(top) = table(
        r,
        &root,
        value,
        "a set of policies takes a table, with each policy under `[policies.NAME]`",
    ) else {
        return document;
    };
    let mut plurals: Vec<&str> = KINDS.iter().map(|kind| kind.plural).collect();
    plurals.push("routes");
    // Where each guard was declared, to find those no policy names.
    let mut declared: Vec<(&str, String, At)> = Vec::new();
    for (at, entry) in entries(r, &root, top) {
        if entry.key == "routes" {
            document.routes = crate::route::routes(r, &at, &entry.value);
            continue;
        }
        let Some(kind) = KINDS.iter().find(|kind| kind.plural == entry.key) else {
            let message = if POLICY_KEYS.contains(&entry.key.as_str()) {
                format!(
                    "unknown key `{}`: a set of policies names each one, with its settings \
                     under `[policies.NAME]`; the keys are: {}",
                    entry.key,
                    plurals.join(", ")
                )
            } else {
                unknown_key(&entry.key, &plurals, false)
            };
            r.problem(&at, None, message);
            continue;
        };
        let expected = format!(
            "`{}` takes a table of named {}, like `[{}.openai]`",
            kind.plural, kind.plural, kind.plural
        );
        let Some(named) = table(r, &at, &entry.value, &expected) else {
            continue;
        };
        for (at, entry) in entries(r, &at, named) {
            let name = entry.key.clone();
            if name.is_empty() {
                r.problem(
                    &at,
                    None,
                    format!("a {} needs a name, not an empty string", kind.singular),
                );
                continue;
            }
            if kind.singular == "policy"
                && let Some(bad) = name.chars().find(|c| !rules::policy_name_char(*c))
            {
                r.problem(
                    &at,
                    None,
                    format!(
                        "a policy's name has no whitespace or control character ({bad:?} \
                         here): `#[retry(policy = \"name\")]` names it as written; name it \
                         like `[policies.openai]`"
                    ),
                );
                continue;
            }
            if kind.singular != "policy"
                && let Err(why) = check_name(&name)
            {
                r.problem(&at, None, why);
                continue;
            }
            let value = &entry.value;
            match kind.singular {
                "policy" => {
                    let (config, guards) = policy(r, &at, value, true);
                    document.policies.push((name, config, guards));
                    continue;
                }
                "budget" => document.budgets.push((name.clone(), budget(r, &at, value))),
                "cooldown" => document
                    .cooldowns
                    .push((name.clone(), cooldown(r, &at, value))),
                "throttle" => document
                    .throttles
                    .push((name.clone(), throttle(r, &at, value))),
                "breaker" => document
                    .breakers
                    .push((name.clone(), breaker(r, &at, value))),
                _ => document
                    .concurrencies
                    .push((name.clone(), concurrency(r, &at, value))),
            }
            declared.push((kind.singular, name, at));
        }
    }
    for (kind, name, at) in declared {
        let named = document
            .policies
            .iter()
            .any(|(_, _, guards)| guards.get(kind) == Some(name.as_str()))
            || document.routes.iter().any(|route| route.names(kind, &name));
        if !named {
            r.problem(
                &at,
                None,
                format!(
                    "no policy names this {kind}; name it in one, like `{kind} = {}`, or remove it",
                    quoted(&name)
                ),
            );
        }
    }
    // A concurrency limit has no defaults: a name must be declared.
    let known = document.concurrency_names();
    for (_, _, guards) in &document.policies {
        if let (Some(name), Some((at, value))) = (&guards.concurrency, &guards.concurrency_at)
            && !known.contains(&name.as_str())
        {
            r.problem(at, Some(value), no_concurrency(name, &known));
        }
    }
    crate::route::check(r, &document);
    document
}

impl Document {
    /// The names of the concurrency limits declared, in order.
    pub(crate) fn concurrency_names(&self) -> Vec<&str> {
        let mut known: Vec<&str> = self.concurrencies.iter().map(|(n, _)| n.as_str()).collect();
        known.sort_unstable();
        known
    }
}

/// Why `name` names no concurrency limit of a set that declares `known`.
pub(crate) fn no_concurrency(name: &str, known: &[&str]) -> String {
    let shown = quoted(name);
    if known.is_empty() {
        return format!(
            "no concurrency named {shown}: the set declares none; declare it under \
             `[concurrencies.{}]` with its `limit`, like `limit = 4` (a concurrency limit has \
             no default)",
            segment(name)
        );
    }
    let guess = closest(name, known.iter().copied())
        .map(|guess| format!(" did you mean {}?", quoted(guess)))
        .unwrap_or_default();
    format!(
        "no concurrency named {shown}: a name here is a shared concurrency limit of the set, \
         declared under `[concurrencies.NAME]` with its `limit`;{guess} the concurrencies are: \
         {}",
        known.join(", ")
    )
}
