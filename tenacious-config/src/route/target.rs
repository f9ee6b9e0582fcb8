//! Reading a route's `targets`: each target's name, data, policy, guards,
//! context window and silence limits; and the guards (or the route's
//! budget) a route or a target writes by name or inline.
use tenacious_runtime::route::MAX_TARGETS;
use tenacious_runtime::store::hooks::check_name;
use tenacious_syntax::duration::display;

use super::{GuardRef, PolicyRef, ROUTE_KEYS, TARGET_EXAMPLE, TARGET_KEYS, TargetDoc};
use crate::document::{GuardNames, guard_name, plural, policy};
use crate::guards::{breaker, cooldown, throttle};
use crate::read::{At, POLICY_KEYS, Reader, as_text, entries, integer, segment, unknown_key};
use crate::settings::duration;
use crate::value::{Entry, Table, Value, quoted};

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
pub(super) fn bad_name(name: &str, what: &str) -> Option<String> {
    if check_name(name).is_err() || name.chars().any(char::is_control) {
        return Some(format!(
            "a {what}'s name names its guards and statistics process-wide: 1 to 200 bytes, no \
             braces, no control character; name it after a model or provider, like `gpt-4o`"
        ));
    }
    None
}

/// A guard (or a budget) written by name or inline: `breaker = "openai"`,
/// `breaker = { open_for = "30s" }`.
pub(super) fn guard_ref<C>(
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

/// A concurrency limit, by name only: `concurrency = "gpu"`. A target
/// keeps no limit of its own (its own guards are kept by its name,
/// process-wide, and a limit is not one of them): declare it in the set.
fn concurrency_ref<C>(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<GuardRef<C>> {
    if as_text(value).is_some_and(|name| !name.is_empty()) {
        return guard_name(r, at, "concurrency", value).map(|name| GuardRef::Named {
            name,
            at: at.clone(),
            value: value.clone(),
        });
    }
    let inline = if matches!(value, Value::Table(_)) {
        " (a target has no concurrency limit of its own: declare it in the set and name it)"
    } else {
        ""
    };
    r.problem(
        at,
        Some(value),
        format!(
            "`concurrency` takes the name of a shared concurrency limit of the set, \
             `concurrency = \"gpu\"`, declared under `[concurrencies.gpu]` with its \
             `limit`{inline}"
        ),
    );
    None
}

/// The route's `targets`, and whether there are too many.
pub(super) fn targets(
    r: &mut Reader<'_>,
    at: &At,
    path: &str,
    value: &Value,
) -> (Vec<TargetDoc>, bool) {
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
            "concurrency" => doc.concurrency = concurrency_ref(r, &at, value),
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
    for kind in ["budget", "breaker", "cooldown", "throttle", "concurrency"] {
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
