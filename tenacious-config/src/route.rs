//! Routes declared in a set: `[routes.NAME]`, its targets, deadline,
//! budget and rules, read and checked with the rest of the document, and
//! built into a [`Route<String>`] by [`Policies::route`].
//!
//! A route is kept as its settings, not as a built [`Route`]: building
//! one puts its targets' guards in the process-wide table of target names
//! (`tenacious::route`), which a set does only when asked for the route.
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::Duration;

use tenacious_runtime::route::{MAX_TARGETS, Route, RouteError, Rules, Target, Then};
use tenacious_runtime::store::hooks::check_name;
use tenacious_runtime::{Breaker, Cooldown, ErrorClass, Policy, StopReason, Throttle};
use tenacious_syntax::duration::display;

use crate::document::{Document, GuardNames, guard_name, plural, policy};
use crate::guards::{BreakerConfig, BudgetConfig, CooldownConfig, ThrottleConfig};
use crate::guards::{breaker, budget, cooldown, throttle};
use crate::policy::PolicyConfig;
use crate::read::{At, POLICY_KEYS, Reader, as_text, closest, entries, integer, segment};
use crate::read::{table, unknown_key};
use crate::set::Policies;
use crate::settings::duration;
use crate::value::{Entry, Table, Value, quoted};

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
    "context",
    "silence",
    "learn_silence",
];

/// What a rule's value names, and what each does.
const THEN: [(&str, Then, &str); 3] = [
    ("next", Then::Next, "try the next target"),
    (
        "larger",
        Then::Larger,
        "the next target with a larger `context`",
    ),
    ("stop", Then::Stop, "stop the route"),
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

/// `value`, a table, with each of its keys labelled by its path under
/// `path`: what a list's item needs, whose place the tree's paths cannot
/// say (`routes.chat.targets[1].silence`).
fn labelled(value: &Value, path: &str) -> Value {
    match value {
        Value::Table(table) => Value::Table(Table {
            entries: table
                .entries
                .iter()
                .map(|entry| Entry {
                    label: Some(format!("{path}.{}", segment(&entry.key))),
                    ..entry.clone()
                })
                .collect(),
        }),
        other => other.clone(),
    }
}

/// Why `name` cannot name a route or a target, if it cannot: it names
/// their guards, statistics and budget process-wide.
fn bad_name(name: &str, what: &str) -> Option<String> {
    if check_name(name).is_err() || name.chars().any(char::is_control) {
        return Some(format!(
            "a {what}'s name names its guards and statistics process-wide: 1 to 200 bytes, no \
             braces, no control character; name it after a model or provider, like `gpt-4o`"
        ));
    }
    None
}

/// Reads `[routes]`: each `[routes.NAME]`.
pub(crate) fn routes(r: &mut Reader<'_>, at: &At, value: &Value) -> Vec<RouteDoc> {
    let mut routes = Vec::new();
    let Some(named) = table(
        r,
        at,
        value,
        "`routes` takes a table of named routes, like `[routes.chat]`",
    ) else {
        return routes;
    };
    for (at, entry) in entries(r, at, named) {
        if let Some(why) = bad_name(&entry.key, "route") {
            r.problem(&at, None, why);
            continue;
        }
        routes.push(route(r, &at, &entry.key, &entry.value));
    }
    // Each route within the bound, the names of all of them may not be.
    if routes.iter().all(|route| !route.too_many) {
        let mut names: Vec<&str> = routes
            .iter()
            .flat_map(|route| route.targets.iter().map(TargetDoc::name))
            .filter(|name| !name.is_empty())
            .collect();
        names.sort_unstable();
        names.dedup();
        if names.len() > MAX_TARGETS {
            r.problem(
                at,
                None,
                format!(
                    "the routes name {} targets: a process keeps at most {MAX_TARGETS} target \
                     names (`tenacious::route::MAX_TARGETS`); name targets after models or \
                     providers, not requests",
                    names.len()
                ),
            );
        }
    }
    routes
}

fn route(r: &mut Reader<'_>, at: &At, name: &str, value: &Value) -> RouteDoc {
    let path = format!("routes.{}", segment(name));
    let mut doc = RouteDoc {
        name: name.to_owned(),
        deadline: None,
        budget: None,
        rules: Rules::new(),
        targets: Vec::new(),
        too_many: false,
    };
    let expected = format!(
        "a route takes a table of settings, with its targets: `targets = [{TARGET_EXAMPLE}]`"
    );
    let Some(table) = table(r, at, value, &expected) else {
        return doc;
    };
    let mut listed = false;
    for (at, entry) in entries(r, at, table) {
        let value = &entry.value;
        match entry.key.as_str() {
            "deadline" => doc.deadline = duration(r, &at, "deadline", value),
            "budget" => doc.budget = guard_ref(r, &at, "budget", value, budget),
            "targets" => {
                listed = true;
                (doc.targets, doc.too_many) = targets(r, &at, &path, value);
            }
            "on_class" => {
                let classes = ErrorClass::ALL.map(|class| (format!("{class:?}"), class));
                for (class, then) in
                    rule_table(r, &at, "on_class", ("class", "classes"), &classes, value)
                {
                    doc.rules = doc.rules.on_class(class, then);
                }
            }
            "on_stop" => {
                let reasons = StopReason::ALL.map(|reason| (format!("{reason:?}"), reason));
                let what = ("stop reason", "stop reasons");
                for (reason, then) in rule_table(r, &at, "on_stop", what, &reasons, value) {
                    doc.rules = doc.rules.on_stop(reason, then);
                }
            }
            "on_silence" => {
                if let Some(then) = then(r, &at, "on_silence", value) {
                    doc.rules = doc.rules.on_silence(then);
                }
            }
            other => r.problem(&at, None, unknown_route_key(other)),
        }
    }
    if !listed {
        r.problem(
            at,
            None,
            format!("a route needs at least one target: `targets = [{TARGET_EXAMPLE}]`"),
        );
    }
    doc
}

fn unknown_route_key(key: &str) -> String {
    if key == "rules" {
        return "unknown key `rules`: the rules are keys of the route itself, `on_class`, \
                `on_stop` and `on_silence`, like `on_class = { Fatal = \"stop\" }`"
            .to_owned();
    }
    if TARGET_KEYS.contains(&key) && !ROUTE_KEYS.contains(&key) {
        return format!(
            "unknown key `{key}`: `{key}` is a key of each target, in `targets = [{{ … }}]`; the \
             keys of a route are: {}",
            ROUTE_KEYS.join(", ")
        );
    }
    if POLICY_KEYS.contains(&key) {
        return format!(
            "unknown key `{key}`: `{key}` is a key of a target's policy, in `targets = [{{ \
             name = \"gpt-4o\", policy = {{ {key} = … }} }}]`; the keys of a route are: {}",
            ROUTE_KEYS.join(", ")
        );
    }
    unknown_key(key, ROUTE_KEYS, false)
}

/// A guard (or a budget) written by name or inline: `breaker = "openai"`,
/// `breaker = { open_for = "30s" }`.
fn guard_ref<C>(
    r: &mut Reader<'_>,
    at: &At,
    kind: &str,
    value: &Value,
    read: fn(&mut Reader<'_>, &At, &Value) -> C,
) -> Option<GuardRef<C>> {
    match value {
        Value::Table(_) => Some(GuardRef::Own(read(r, at, value))),
        _ if as_text(value).is_some_and(|name| !name.is_empty()) => guard_name(r, at, kind, value)
            .map(|name| GuardRef::Named {
                name,
                at: at.clone(),
                value: value.clone(),
            }),
        _ => {
            let (name, example) = match kind {
                "budget" => ("fleet", "capacity = 500"),
                "cooldown" => ("openai", "spacing = \"10ms\""),
                "throttle" => ("openai", "max_rate = 50"),
                _ => ("openai", "open_for = \"30s\""),
            };
            r.problem(
                at,
                Some(value),
                format!(
                    "`{kind}` takes the name of a shared {kind} of the set, `{kind} = \
                     \"{name}\"` (declared under `[{}.{name}]`), or its own settings, `{kind} = \
                     {{ {example} }}`",
                    plural(kind)
                ),
            );
            None
        }
    }
}

/// A rule's value: `"next"`, `"larger"` or `"stop"`.
fn then(r: &mut Reader<'_>, at: &At, key: &str, value: &Value) -> Option<Then> {
    let expected = THEN
        .iter()
        .map(|(name, _, what)| format!("\"{name}\" ({what})"))
        .collect::<Vec<_>>();
    let expected = format!(
        "`{key}` takes {}, {} or {}",
        expected[0], expected[1], expected[2]
    );
    let Some(text) = as_text(value) else {
        r.problem(at, Some(value), expected);
        return None;
    };
    if let Some((_, then, _)) = THEN.iter().find(|(name, ..)| *name == text) {
        return Some(*then);
    }
    let message = match closest(text, THEN.iter().map(|(name, ..)| *name)) {
        Some(guess) => format!(
            "unknown rule {}; did you mean \"{guess}\"? {expected}",
            quoted(text)
        ),
        None => format!("unknown rule {}; {expected}", quoted(text)),
    };
    r.problem(at, Some(value), message);
    None
}

/// `on_class = { Fatal = "stop" }`: each name one of `names`, each value
/// a rule.
fn rule_table<T: Copy>(
    r: &mut Reader<'_>,
    at: &At,
    key: &str,
    (what, whats): (&str, &str),
    names: &[(String, T)],
    value: &Value,
) -> Vec<(T, Then)> {
    let listed = names
        .iter()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let expected = format!(
        "`{key}` takes a table of {whats}, each to \"next\", \"larger\" or \"stop\": `{key} = {{ \
         {} = \"stop\" }}`",
        names[names.len() - 1].0
    );
    let Some(table) = table(r, at, value, &expected) else {
        return Vec::new();
    };
    let mut rules = Vec::new();
    for (at, entry) in entries(r, at, table) {
        let name = entry.key.as_str();
        let Some((_, item)) = names.iter().find(|(known, _)| known == name) else {
            let shown = if name.len() > 64 {
                quoted(name)
            } else {
                format!("`{name}`")
            };
            let message = match closest(name, names.iter().map(|(name, _)| name.as_str())) {
                Some(guess) => format!(
                    "unknown {what} {shown} in `{key}`; did you mean `{guess}`? the {whats} are: \
                     {listed}"
                ),
                None => format!("unknown {what} {shown} in `{key}`; the {whats} are: {listed}"),
            };
            r.problem(&at, None, message);
            continue;
        };
        if let Some(then) = then(r, &at, key, &entry.value) {
            rules.push((*item, then));
        }
    }
    rules
}

/// The route's `targets`, and whether there are too many.
fn targets(r: &mut Reader<'_>, at: &At, path: &str, value: &Value) -> (Vec<TargetDoc>, bool) {
    let Value::List(items) = value else {
        r.problem(
            at,
            Some(value),
            format!(
                "`targets` takes a list of targets, tried in order: `targets = \
                 [{TARGET_EXAMPLE}]`, or a `[[{path}.targets]]` table each"
            ),
        );
        return (Vec::new(), false);
    };
    if items.is_empty() {
        r.problem(
            at,
            Some(value),
            format!("a route needs at least one target: `targets = [{TARGET_EXAMPLE}]`"),
        );
    }
    let too_many = items.len() > MAX_TARGETS;
    if too_many {
        r.problem(
            at,
            None,
            format!(
                "the route lists {} targets: a route holds at most {MAX_TARGETS}, the target \
                 names a process keeps (`tenacious::route::MAX_TARGETS`); name targets after \
                 models or providers, not requests",
                items.len()
            ),
        );
    }
    let targets = items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| target(r, index, &format!("{path}.targets[{index}]"), item))
        .collect();
    (targets, too_many)
}

fn target(r: &mut Reader<'_>, index: usize, path: &str, value: &Value) -> Option<TargetDoc> {
    let at = At::var(path);
    if !matches!(value, Value::Table(_)) {
        r.problem(
            &at,
            Some(value),
            format!("a target takes a table of settings: `{TARGET_EXAMPLE}`"),
        );
        return None;
    }
    let value = labelled(value, path);
    let Value::Table(table) = &value else {
        return None;
    };
    let mut doc = TargetDoc {
        index,
        ..TargetDoc::default()
    };
    let mut silence_at = None;
    for (at, entry) in entries(r, &at, table) {
        let key = entry.key.as_str();
        let inner = labelled(&entry.value, &format!("{path}.{}", segment(key)));
        let value = &inner;
        match key {
            "name" => {
                let Some(name) = text(r, &at, key, value, "`name = \"gpt-4o\"`") else {
                    continue;
                };
                if let Some(why) = bad_name(name, "target") {
                    r.problem(&at, Some(value), why);
                    continue;
                }
                doc.name = Some((name.to_owned(), at.clone()));
            }
            "data" => {
                let example = "`data = \"https://api.openai.com/v1\"` (a base URL) or `data = \
                               \"gpt-4o-2024-08-06\"` (a model id)";
                doc.data = text(r, &at, key, value, example).map(str::to_owned);
            }
            "policy" => doc.policy = target_policy(r, &at, path, value),
            "breaker" => doc.breaker = guard_ref(r, &at, key, value, breaker),
            "cooldown" => doc.cooldown = guard_ref(r, &at, key, value, cooldown),
            "throttle" => doc.throttle = guard_ref(r, &at, key, value, throttle),
            "context" => doc.context = context(r, &at, value),
            "silence" => {
                doc.silence = silence(r, &at, key, value);
                silence_at = Some(at.clone());
            }
            "learn_silence" => doc.learn_silence = silence(r, &at, key, value),
            other => r.problem(&at, None, unknown_target_key(other)),
        }
    }
    if doc.name.is_none() && !table.entries.iter().any(|e| e.key == "name") {
        r.problem(
            &at,
            None,
            "a target needs a `name`, the model or deployment results and statistics call it: \
             `name = \"gpt-4o\"`",
        );
    }
    if doc.data.is_none() && !table.entries.iter().any(|e| e.key == "data") {
        r.problem(
            &at,
            None,
            "a target needs `data`, what the call needs to reach it: a base URL, `data = \
             \"https://api.openai.com/v1\"`, or a model id",
        );
    }
    if let (Some(limit), Some(floor), Some(at)) = (doc.silence, doc.learn_silence, &silence_at)
        && floor > limit
    {
        r.problem(
            at,
            None,
            format!(
                "`learn_silence` ({}) is above `silence` ({}): the floor wins, so the limit \
                 written never holds; lower `learn_silence` or raise `silence`",
                display(floor),
                display(limit)
            ),
        );
    }
    Some(doc)
}

fn unknown_target_key(key: &str) -> String {
    if POLICY_KEYS.contains(&key) {
        return format!(
            "unknown key `{key}`: `{key}` is a key of the target's policy: `policy = {{ {key} \
             = … }}`, or name a policy of the set, `policy = \"openai\"`; the keys of a target \
             are: {}",
            TARGET_KEYS.join(", ")
        );
    }
    if ROUTE_KEYS.contains(&key) {
        return format!(
            "unknown key `{key}`: `{key}` is a key of the route, under `[routes.NAME]`; the keys \
             of a target are: {}",
            TARGET_KEYS.join(", ")
        );
    }
    unknown_key(key, TARGET_KEYS, false)
}

/// A string, not empty.
fn text<'v>(
    r: &mut Reader<'_>,
    at: &At,
    key: &str,
    value: &'v Value,
    example: &str,
) -> Option<&'v str> {
    match as_text(value) {
        Some(text) if !text.is_empty() => Some(text),
        Some(_) => {
            r.problem(
                at,
                Some(value),
                format!("`{key}` takes a string, not an empty one: {example}"),
            );
            None
        }
        None => {
            r.problem(
                at,
                Some(value),
                format!("`{key}` takes a string: {example}"),
            );
            None
        }
    }
}

/// `policy = "openai"` or `policy = { max = 3 }`.
fn target_policy(r: &mut Reader<'_>, at: &At, path: &str, value: &Value) -> PolicyRef {
    match value {
        Value::Table(_) => {
            let (config, guards) = policy(r, at, value, true);
            refuse_guards(r, path, &guards);
            PolicyRef::Own(config)
        }
        _ => match as_text(value) {
            Some(name) if !name.is_empty() => PolicyRef::Named {
                name: name.to_owned(),
                at: at.clone(),
                value: value.clone(),
            },
            _ => {
                r.problem(
                    at,
                    Some(value),
                    "`policy` takes the name of a policy of the set, `policy = \"openai\"`, or \
                     its settings, `policy = { max = 3, base = \"200ms\" }`",
                );
                PolicyRef::Default
            }
        },
    }
}

/// A target's inline policy names no guard: the target's are keys of the
/// target, the route's budget a key of the route.
fn refuse_guards(r: &mut Reader<'_>, path: &str, guards: &GuardNames) {
    for kind in ["budget", "breaker", "cooldown", "throttle"] {
        let Some(name) = guards.get(kind) else {
            continue;
        };
        let at = At::var(&format!("{path}.policy.{kind}"));
        let message = if kind == "budget" {
            format!(
                "a target's policy names no budget: the route's budget is a key of the route, \
                 `budget = {}`, which every target's retries draw from",
                quoted(name)
            )
        } else {
            format!(
                "a target's policy names no {kind}: the target's guards are keys of the target, \
                 beside `policy`: `{kind} = {}`",
                quoted(name)
            )
        };
        r.problem(&at, Some(&Value::Str(name.to_owned())), message);
    }
}

/// `context = 128000`: tokens, at least 1.
fn context(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<u64> {
    let form = "`context` takes the target's context window in tokens, a whole number: \
                `context = 128000`";
    let Some(tokens) = integer(value) else {
        r.problem(at, Some(value), form);
        return None;
    };
    if tokens <= 0 {
        r.problem(
            at,
            Some(value),
            "a context window of no tokens fits no request; give the target's window, \
             `context = 128000`, or remove the key",
        );
        return None;
    }
    match u64::try_from(tokens) {
        Ok(tokens) => Some(tokens),
        Err(_) => {
            r.problem(
                at,
                Some(value),
                "`context` must fit a `u64`: write a number of tokens up to \
                 18446744073709551615",
            );
            None
        }
    }
}

/// `silence = "30s"`, `learn_silence = "1s"`: durations, not zero.
fn silence(r: &mut Reader<'_>, at: &At, key: &str, value: &Value) -> Option<u64> {
    let example = if key == "silence" {
        "silence = \"30s\""
    } else {
        "learn_silence = \"1s\""
    };
    if as_text(value).is_none() {
        r.problem(
            at,
            Some(value),
            format!("`{key}` takes a duration string with a unit: `{example}`"),
        );
        return None;
    }
    let nanos = duration(r, at, key, value)?;
    if nanos == 0 {
        let why = if key == "silence" {
            "a zero `silence` takes every attempt for silent before its answer can come, so the \
             target never serves"
        } else {
            "a zero `learn_silence` floor lets the learnt limit fall to the target's fastest \
             answers, so one slower answer is taken for silence"
        };
        r.problem(
            at,
            Some(value),
            format!("{why}; give a positive duration, like `{example}`, or remove the key"),
        );
        return None;
    }
    Some(nanos)
}

/// The names of the shared guards of `kind` the document has: declared,
/// or named by a policy.
fn known_guards<'d>(document: &'d Document, kind: &str) -> Vec<&'d str> {
    let declared: Vec<&str> = match kind {
        "budget" => document.budgets.iter().map(|(n, _)| n.as_str()).collect(),
        "breaker" => document.breakers.iter().map(|(n, _)| n.as_str()).collect(),
        "cooldown" => document.cooldowns.iter().map(|(n, _)| n.as_str()).collect(),
        _ => document.throttles.iter().map(|(n, _)| n.as_str()).collect(),
    };
    let mut known: Vec<&str> = declared
        .into_iter()
        .chain(
            document
                .policies
                .iter()
                .filter_map(|(_, _, guards)| guards.get(kind)),
        )
        .collect();
    known.sort_unstable();
    known.dedup();
    known
}

/// A name of a guard of `kind` the document has, or a problem.
fn check_guard<C>(
    r: &mut Reader<'_>,
    document: &Document,
    kind: &str,
    guard: Option<&GuardRef<C>>,
) {
    let Some(GuardRef::Named { name, at, value }) = guard else {
        return;
    };
    let known = known_guards(document, kind);
    if known.contains(&name.as_str()) {
        return;
    }
    let plural = plural(kind);
    let shown = quoted(name);
    let message = if known.is_empty() {
        format!(
            "no {kind} named {shown}: the set declares none; declare it under `[{plural}.{}]` \
             (an empty table for the defaults), or give the settings here, like `{kind} = {{}}`",
            segment(name)
        )
    } else {
        let guess = closest(name, known.iter().copied())
            .map(|guess| format!(" did you mean {}?", quoted(guess)))
            .unwrap_or_default();
        format!(
            "no {kind} named {shown}: a name here is a shared {kind} of the set, declared under \
             `[{plural}.NAME]` or named by a policy;{guess} the {plural} are: {}",
            known.join(", ")
        )
    };
    r.problem(at, Some(value), message);
}

/// What a route names, checked against the whole document: its policies
/// and guards exist, each target's name is once in its route, and a name
/// has one set of guards across routes.
pub(crate) fn check(r: &mut Reader<'_>, document: &Document) {
    let policies: Vec<&str> = document
        .policies
        .iter()
        .map(|(name, ..)| name.as_str())
        .collect();
    // A target name's own guards, where first given.
    let mut first: HashMap<&str, (&str, usize, String)> = HashMap::new();
    for route in &document.routes {
        check_guard(r, document, "budget", route.budget.as_ref());
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for target in &route.targets {
            if let PolicyRef::Named { name, at, value } = &target.policy
                && !policies.contains(&name.as_str())
            {
                let shown = quoted(name);
                let message = if policies.is_empty() {
                    format!(
                        "no policy named {shown}: the set declares none; declare it under \
                         `[policies.{}]`, or give the settings here, like `policy = {{ max = 3 }}`",
                        segment(name)
                    )
                } else {
                    let guess = closest(name, policies.iter().copied())
                        .map(|guess| format!(" did you mean {}?", quoted(guess)))
                        .unwrap_or_default();
                    format!(
                        "no policy named {shown} in the set;{guess} the policies are: {}",
                        policies.join(", ")
                    )
                };
                r.problem(at, Some(value), message);
            }
            check_guard(r, document, "breaker", target.breaker.as_ref());
            check_guard(r, document, "cooldown", target.cooldown.as_ref());
            check_guard(r, document, "throttle", target.throttle.as_ref());
            let Some((name, at)) = &target.name else {
                continue;
            };
            if let Some(before) = seen.insert(name, target.index) {
                r.problem(
                    at,
                    Some(&Value::Str(name.clone())),
                    format!(
                        "the route lists target {} twice (targets[{before}] and targets[{}]): \
                         results and statistics could not tell them apart; give each its own \
                         name",
                        quoted(name),
                        target.index
                    ),
                );
                continue;
            }
            let settings = target.guard_settings();
            match first.get(name.as_str()) {
                Some((other, index, theirs)) if *theirs != settings => r.problem(
                    at,
                    Some(&Value::Str(name.clone())),
                    format!(
                        "target {} has other guards in route {} (targets[{index}]): a target \
                         name's guards are shared by every route of the process \
                         (`tenacious::route`), so give it the same guards and settings, or \
                         another name",
                        quoted(name),
                        quoted(other)
                    ),
                ),
                Some(_) => {}
                None => {
                    first.insert(name, (&route.name, target.index, settings));
                }
            }
        }
    }
}

/// `set`'s routes from a checked `document`: each target's policy with
/// the set's shared guards it and its route name, made once per name.
pub(crate) fn build(set: &mut Policies, document: &Document) {
    fn shared<T, C: Copy + Default>(
        made: &mut BTreeMap<String, &'static T>,
        declared: &[(String, C)],
        name: &str,
        make: impl FnOnce(C, &'static str) -> T,
    ) -> &'static T {
        made.entry(name.to_owned()).or_insert_with(|| {
            let config = declared
                .iter()
                .find(|(declared, _)| declared == name)
                .map_or_else(C::default, |(_, config)| *config);
            let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
            Box::leak(Box::new(make(config, name)))
        })
    }
    for route in &document.routes {
        let budget = match &route.budget {
            Some(GuardRef::Named { name, .. }) => Some(shared(
                &mut set.budgets,
                &document.budgets,
                name,
                |config, _| config.build(),
            )),
            _ => None,
        };
        let mut targets = Vec::with_capacity(route.targets.len());
        for target in &route.targets {
            let mut policy = match &target.policy {
                PolicyRef::Default => Policy::DEFAULT,
                PolicyRef::Named { name, .. } => set.get(name).copied().unwrap_or(Policy::DEFAULT),
                PolicyRef::Own(config) => config.into_policy(),
            };
            if let Some(GuardRef::Named { name, .. }) = &target.breaker {
                policy = policy.breaker(shared(
                    &mut set.breakers,
                    &document.breakers,
                    name,
                    |config, name| config.apply(Breaker::new().name(name)),
                ));
            }
            if let Some(GuardRef::Named { name, .. }) = &target.cooldown {
                policy = policy.cooldown(shared(
                    &mut set.cooldowns,
                    &document.cooldowns,
                    name,
                    |config, name| config.apply(Cooldown::new().name(name)),
                ));
            }
            if let Some(GuardRef::Named { name, .. }) = &target.throttle {
                policy = policy.throttle(shared(
                    &mut set.throttles,
                    &document.throttles,
                    name,
                    |config, name| config.apply(Throttle::new().name(name)),
                ));
            }
            if let Some(budget) = budget {
                policy = policy.budget(budget);
            }
            targets.push(TargetSpec {
                name: target.name().to_owned(),
                data: target.data.clone().unwrap_or_default(),
                policy,
                breaker: target.breaker.as_ref().and_then(GuardRef::own).copied(),
                cooldown: target.cooldown.as_ref().and_then(GuardRef::own).copied(),
                throttle: target.throttle.as_ref().and_then(GuardRef::own).copied(),
                context: target.context,
                silence: target.silence.map(Duration::from_nanos),
                learn_silence: target.learn_silence.map(Duration::from_nanos),
            });
        }
        set.routes.insert(
            route.name.clone(),
            RouteSpec {
                deadline: route.deadline.map(Duration::from_nanos),
                budget: route.budget.as_ref().and_then(GuardRef::own).copied(),
                rules: route.rules,
                targets,
            },
        );
    }
}

impl Policies {
    /// The route declared under `[routes.NAME]`, built: its targets in
    /// order, each with its data (a base URL or a model id), policy,
    /// guards, context window and silence limit, and the route's
    /// deadline, budget and rules (see the [module](crate#routes) for the
    /// format).
    ///
    /// Each call builds the route anew, cheaply: the targets' own guards
    /// and statistics belong to their names, process-wide
    /// ([`tenacious::route`](tenacious_runtime::route)), so every route
    /// built with a target name shares them, across calls and across
    /// sets read again.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::config::Policies;
    ///
    /// let set = Policies::from_toml_str(
    ///     r#"
    ///     [policies.model]
    ///     max = 2
    ///
    ///     [routes.docs-chat]
    ///     deadline = "2m"
    ///     targets = [
    ///         { name = "docs-gpt-4o", data = "https://api.openai.com/v1", policy = "model", context = 128000 },
    ///         { name = "docs-claude", data = "https://api.anthropic.com/v1", silence = "30s" },
    ///     ]
    ///     "#,
    /// )?;
    /// let route = set.route("docs-chat")?;
    /// assert_eq!(route.get_deadline(), Some(Duration::from_secs(120)));
    /// let [gpt, claude] = route.targets() else { unreachable!() };
    /// assert_eq!((gpt.name(), gpt.data().as_str()), ("docs-gpt-4o", "https://api.openai.com/v1"));
    /// assert_eq!(gpt.get_policy().get_max(), 2);
    /// assert_eq!(claude.get_silence(), Some(Duration::from_secs(30)));
    ///
    /// let missing = set.route("docs-caht").unwrap_err();
    /// assert_eq!(
    ///     missing.to_string(),
    ///     "no route named \"docs-caht\"; did you mean \"docs-chat\"? the routes are: docs-chat",
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`RouteConfigError`]: the set declares no route of that name, or
    /// the route cannot be built ([`RouteError`]): a target name built
    /// before in this process with other guards, or the process keeps
    /// [`MAX_TARGETS`] target names already.
    pub fn route(&self, name: &str) -> Result<Route<String>, RouteConfigError> {
        let Some(spec) = self.routes.get(name) else {
            return Err(RouteConfigError {
                route: name.to_owned(),
                source: self.source().to_owned(),
                kind: Kind::Missing {
                    known: Some(self.routes.keys().cloned().collect()),
                },
            });
        };
        let mut builder = Route::builder(name).rules(spec.rules);
        if let Some(deadline) = spec.deadline {
            builder = builder.deadline(deadline);
        }
        if let Some(budget) = spec.budget {
            builder = builder.budget(budget.build());
        }
        for t in &spec.targets {
            let mut target = Target::new(t.name.clone(), t.data.clone()).policy(t.policy);
            if let Some(config) = t.breaker {
                target = target.breaker(config.build());
            }
            if let Some(config) = t.cooldown {
                target = target.cooldown(config.build());
            }
            if let Some(config) = t.throttle {
                target = target.throttle(config.build());
            }
            if let Some(tokens) = t.context {
                target = target.context(tokens);
            }
            if let Some(limit) = t.silence {
                target = target.silence(limit);
            }
            if let Some(floor) = t.learn_silence {
                target = target.learn_silence(floor);
            }
            builder = builder.target(target);
        }
        builder.build().map_err(|error| {
            let named = match &error {
                RouteError::Conflict(target) | RouteError::Duplicate(target) => Some(target),
                _ => None,
            };
            let target = named.and_then(|named| {
                let index = spec.targets.iter().position(|t| &t.name == named)?;
                Some((index, named.clone()))
            });
            RouteConfigError {
                route: name.to_owned(),
                source: self.source().to_owned(),
                kind: Kind::Build { target, error },
            }
        })
    }

    /// The names of the routes the set declares, in order.
    ///
    /// ```
    /// use tenacious::config::Policies;
    ///
    /// let set = Policies::from_toml_str(
    ///     "[[routes.docs-names.targets]]\nname = \"docs-names-a\"\ndata = \"a\"\n",
    /// )?;
    /// assert_eq!(set.route_names().collect::<Vec<_>>(), ["docs-names"]);
    /// # Ok::<(), tenacious::config::ConfigError>(())
    /// ```
    pub fn route_names(&self) -> impl Iterator<Item = &str> {
        self.routes.keys().map(String::as_str)
    }
}

impl RouteConfigError {
    /// No route named `name`: nothing was loaded.
    pub(crate) fn nothing_loaded(name: &str) -> Self {
        Self {
            route: name.to_owned(),
            source: String::new(),
            kind: Kind::Missing { known: None },
        }
    }
}

/// Why [`Policies::route`] returned no route: the set declares none of
/// that name, or it could not be built.
///
/// ```
/// use tenacious::config::Policies;
///
/// let set = Policies::from_toml_str("[policies.a]\n")?;
/// let err = set.route("chat").unwrap_err();
/// assert_eq!(err.route(), "chat");
/// assert!(err.route_error().is_none());
/// assert_eq!(
///     err.to_string(),
///     "no route named \"chat\": the set declares no route; declare it under `[routes.chat]`",
/// );
/// # Ok::<(), tenacious::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteConfigError {
    route: String,
    /// The set's source, if it has one.
    source: String,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// No route of the name; `known`: the names there are, `None` when
    /// nothing was loaded.
    Missing { known: Option<Vec<String>> },
    /// The route's builder refused it; `target`: the target it names.
    Build {
        target: Option<(usize, String)>,
        error: RouteError,
    },
}

impl RouteConfigError {
    /// The route asked for.
    #[must_use]
    pub fn route(&self) -> &str {
        &self.route
    }

    /// The target the builder refused, with its place in the route, if
    /// the refusal names one.
    #[must_use]
    pub fn target(&self) -> Option<(usize, &str)> {
        match &self.kind {
            Kind::Build {
                target: Some((index, name)),
                ..
            } => Some((*index, name)),
            _ => None,
        }
    }

    /// Why the route's builder refused it; `None` when the set has no
    /// route of that name.
    #[must_use]
    pub fn route_error(&self) -> Option<&RouteError> {
        match &self.kind {
            Kind::Build { error, .. } => Some(error),
            Kind::Missing { .. } => None,
        }
    }
}

impl fmt::Display for RouteConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = quoted(&self.route);
        let source = if self.source.is_empty() {
            String::new()
        } else {
            format!(" in {}", self.source)
        };
        match &self.kind {
            Kind::Missing { known: None } => write!(
                f,
                "no route named {name}: no policies are loaded; load them at start-up, with \
                 `tenacious::config::load`"
            ),
            Kind::Missing { known: Some(known) } if known.is_empty() => write!(
                f,
                "no route named {name}{source}: the set declares no route; declare it under \
                 `[routes.{}]`",
                segment(&self.route)
            ),
            Kind::Missing { known: Some(known) } => {
                write!(f, "no route named {name}{source}")?;
                match closest(&self.route, known.iter().map(String::as_str)) {
                    Some(guess) => write!(f, "; did you mean {}?", quoted(guess))?,
                    None => f.write_str(";")?,
                }
                write!(f, " the routes are: {}", known.join(", "))
            }
            Kind::Build {
                target: Some((index, target)),
                error,
            } => write!(
                f,
                "route {name}{source}: targets[{index}] ({}): {error}",
                quoted(target)
            ),
            Kind::Build {
                target: None,
                error,
            } => write!(f, "route {name}{source}: {error}"),
        }
    }
}

impl std::error::Error for RouteConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.route_error()
            .map(|error| error as &(dyn std::error::Error + 'static))
    }
}
