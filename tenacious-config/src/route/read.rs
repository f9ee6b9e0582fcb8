//! Reading a document's `[routes]`: each route's table, its rules, and
//! the bound on the target names all routes keep; its targets are read in
//! [`target`](super::target).
use tenacious_runtime::route::{MAX_TARGETS, Rules, Then};
use tenacious_runtime::{ErrorClass, StopReason};

use super::target::{bad_name, guard_ref, targets};
use super::{ROUTE_KEYS, RouteDoc, TARGET_EXAMPLE, TARGET_KEYS, TargetDoc};
use crate::guards::budget;
use crate::read::{
    At, POLICY_KEYS, Reader, as_text, closest, entries, segment, table, unknown_key,
};
use crate::settings::duration;
use crate::value::{Value, quoted};

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
