//! The settings of a policy, each read and checked as `#[retry]` reads
//! the same key: `max`, the durations, `jitter`, `nested`, `on`, `resume`.
use tenacious_runtime::{Jitter, Nested, RetryOn};
use tenacious_syntax::{keys, rules};

use crate::duration;
use crate::read::{At, Reader, as_text, closest, count, flag, or_list};
use crate::value::{Value, quoted};

pub(crate) fn max(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<u32> {
    count(
        r,
        at,
        value,
        1,
        "`max` takes an integer, the total number of attempts: `max = 3`",
        "`max` counts every attempt, the first included, so it is at least 1; write \
         `max = 1` for a single attempt without retries",
        "`max` must fit a `u32`: write a number of attempts up to 4294967295",
    )
}

/// An example of `key` written right, for messages.
pub(crate) fn example(key: &str) -> &'static str {
    if let Some(key) = keys::find(key) {
        return key.example;
    }
    match key {
        "spacing" => "spacing = \"10ms\"",
        "probe_first" => "probe_first = \"2s\"",
        "window" => "window = \"30s\"",
        "open_for" => "open_for = \"15s\"",
        "max_wait" => "max_wait = \"30s\"",
        _ => "key = \"1s\"",
    }
}

/// A duration string, in nanoseconds.
pub(crate) fn duration(r: &mut Reader<'_>, at: &At, key: &str, value: &Value) -> Option<u64> {
    let Some(text) = as_text(value) else {
        r.problem(
            at,
            Some(value),
            format!(
                "`{key}` takes a duration string with a unit: `{}`",
                example(key)
            ),
        );
        return None;
    };
    match duration::parse(text) {
        Ok(nanos) => {
            if nanos == 0
                && let Some(why) = rules::zero_duration(key)
            {
                r.problem(at, Some(value), why);
                return None;
            }
            Some(nanos)
        }
        Err(why) => {
            r.problem(
                at,
                Some(value),
                format!("invalid duration: {why}; {}", duration::FORMAT),
            );
            None
        }
    }
}

/// The jitter names, as `#[retry]` spells them.
pub(crate) const JITTERS: [Jitter; 4] = [
    Jitter::Full,
    Jitter::Equal,
    Jitter::Decorrelated,
    Jitter::None,
];

pub(crate) fn jitter(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<Jitter> {
    let expected = format!(
        "expected one of {}",
        JITTERS
            .iter()
            .map(|jitter| format!("\"{}\"", jitter.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let Some(text) = as_text(value) else {
        r.problem(
            at,
            Some(value),
            format!("`jitter` takes a string; {expected}"),
        );
        return None;
    };
    if let Some(jitter) = JITTERS.iter().find(|jitter| jitter.as_str() == text) {
        return Some(*jitter);
    }
    let shown = quoted(text);
    let message = match closest(text, JITTERS.iter().map(|jitter| jitter.as_str())) {
        Some(guess) => format!("unknown jitter {shown}; did you mean \"{guess}\"? {expected}"),
        None => format!("unknown jitter {shown}; {expected}"),
    };
    r.problem(at, Some(value), message);
    None
}

/// The values `nested` takes, each with what it means (the macro's words).
pub(crate) const NESTED: [(Nested, &str); 2] = [
    (
        Nested::Once,
        "the default: one attempt inside another retried call",
    ),
    (Nested::Retry, "retry as configured even there"),
];

pub(crate) fn nested(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<Nested> {
    let expected = format!(
        "expected {}",
        or_list(
            NESTED
                .iter()
                .map(|(nested, about)| format!("\"{}\" ({about})", nested.as_str()))
        )
    );
    let Some(text) = as_text(value) else {
        r.problem(
            at,
            Some(value),
            format!("`nested` takes a string; {expected}"),
        );
        return None;
    };
    if let Some((nested, _)) = NESTED.iter().find(|(nested, _)| nested.as_str() == text) {
        return Some(*nested);
    }
    let shown = quoted(text);
    let message = match closest(text, NESTED.iter().map(|(nested, _)| nested.as_str())) {
        Some(guess) => {
            format!("unknown `nested` value {shown}; did you mean \"{guess}\"? {expected}")
        }
        None => format!("unknown `nested` value {shown}; {expected}"),
    };
    r.problem(at, Some(value), message);
    None
}

/// The classes `on` takes, and those it refuses with why (the macro's words).
pub(crate) const RETRIED: [(&str, RetryOn); 2] = [
    ("Transient", RetryOn::TRANSIENT),
    ("RateLimited", RetryOn::RATE_LIMITED),
];
pub(crate) const NEVER_RETRIED: [(&str, &str); 2] = [
    (
        "Invalid",
        "`Invalid` errors are never retried: the same request fails the same way; return \
         the error so the caller (or the model) can fix the input, or classify the variant \
         `transient` if a retry can succeed (`when` can only narrow `on`, not widen it)",
    ),
    (
        "Fatal",
        "`Fatal` errors are never retried: a human must fix the cause; classify the \
         variant `transient` if a retry can succeed (`when` can only narrow `on`, not \
         widen it)",
    ),
];
pub(crate) const ON_FORM: &str = "`on` takes a list of the classes retried, `Transient`, `RateLimited` \
     or both: `on = [\"Transient\", \"RateLimited\"]`";

pub(crate) fn on(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<RetryOn> {
    let items: Vec<Value> = match value {
        Value::List(items) => items.clone(),
        // The environment has no lists: `Transient,RateLimited` (or `|`).
        Value::Env(text) => text
            .split([',', '|'])
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(|name| Value::Env(name.to_owned()))
            .collect(),
        _ => {
            r.problem(at, Some(value), ON_FORM);
            return None;
        }
    };
    let mut on: Option<RetryOn> = None;
    let mut ok = true;
    for item in &items {
        let Some(name) = as_text(item) else {
            r.problem(at, Some(item), ON_FORM);
            ok = false;
            continue;
        };
        let Some((_, class)) = RETRIED.iter().find(|(known, _)| *known == name) else {
            ok = false;
            if let Some((_, why)) = NEVER_RETRIED.iter().find(|(known, _)| *known == name) {
                r.problem(at, Some(item), *why);
                continue;
            }
            let names = RETRIED
                .iter()
                .map(|(name, _)| *name)
                .chain(NEVER_RETRIED.iter().map(|(name, _)| *name));
            let shown = if name.len() > 64 {
                quoted(name)
            } else {
                format!("`{name}`")
            };
            let message = match closest(name, names) {
                Some(guess) if RETRIED.iter().any(|(known, _)| *known == guess) => {
                    format!("unknown class {shown} in `on`; did you mean `{guess}`? {ON_FORM}")
                }
                _ => format!("unknown class {shown} in `on`; {ON_FORM}"),
            };
            r.problem(at, Some(item), message);
            continue;
        };
        match on {
            Some(set) if set.union(*class) == set => {
                r.problem(
                    at,
                    Some(item),
                    format!("`{name}` is listed twice in `on`; list it once"),
                );
                ok = false;
            }
            Some(set) => on = Some(set.union(*class)),
            None => on = Some(*class),
        }
    }
    if items.is_empty() {
        r.problem(
            at,
            Some(value),
            "`on` lists no class, so no error would be retried; list `Transient`, \
             `RateLimited` or both, or write `max = 1` for a single attempt",
        );
        return None;
    }
    if ok { on } else { None }
}

pub(crate) fn resume(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<bool> {
    let flag = flag(value);
    if flag.is_none() {
        r.problem(
            at,
            Some(value),
            "`resume` takes `true` or `false`: `resume = true`",
        );
    }
    flag
}
