//! The settings read out of a document's tree: every key checked against
//! its closed list, every value against what `#[retry]` accepts, with the
//! macro's words where they fit; every mistake kept, none stops the
//! reading.
use super::duration;
use super::error::{ConfigError, Problem};
use super::guards::{BreakerConfig, BudgetConfig, CooldownConfig, ThrottleConfig};
use super::policy::PolicyConfig;
use super::value::{Entry, Table, Value, quoted};
use tenacious_runtime::store::hooks::check_name;
use tenacious_runtime::{Jitter, Nested, Policy, RetryOn};

/// Collects the problems of one document.
pub(crate) struct Reader<'s> {
    source: &'s str,
    problems: Vec<Problem>,
}

impl<'s> Reader<'s> {
    pub(crate) fn new(source: &'s str) -> Self {
        Self {
            source,
            problems: Vec::new(),
        }
    }

    pub(crate) fn problem(&mut self, at: &At, value: Option<&Value>, message: impl Into<String>) {
        self.problems.push(Problem::new(
            self.source,
            at.key(),
            value.and_then(Value::shown),
            message.into(),
        ));
    }

    pub(crate) fn finish(self) -> Result<(), ConfigError> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(ConfigError::new(self.problems))
        }
    }
}

/// Where a value sits: its path from the document's root, and the
/// environment variable that set it, if one did.
#[derive(Debug, Clone, Default)]
pub(crate) struct At {
    path: String,
    label: Option<String>,
}

impl At {
    pub(crate) fn root() -> Self {
        Self::default()
    }

    /// An environment variable, before it is read into the tree.
    pub(crate) fn var(name: &str) -> Self {
        Self {
            path: String::new(),
            label: Some(name.to_owned()),
        }
    }

    pub(crate) fn child(&self, entry: &Entry) -> Self {
        let segment = segment(&entry.key);
        Self {
            path: if self.path.is_empty() {
                segment
            } else {
                format!("{}.{segment}", self.path)
            },
            label: entry.label.clone(),
        }
    }

    /// What a message names: the variable, else the path.
    fn key(&self) -> String {
        self.label.clone().unwrap_or_else(|| self.path.clone())
    }
}

/// A key as a path shows it: bare if TOML would take it bare, else quoted.
fn segment(key: &str) -> String {
    // A hostile key of a megabyte is cut, as a value is.
    let bare = !key.is_empty()
        && key.len() <= 64
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { key.to_owned() } else { quoted(key) }
}

/// One kind of named table a set of policies holds.
pub(crate) struct Kind {
    /// As a policy's key names one (`breaker`), and the environment (`BREAKER`).
    pub(crate) singular: &'static str,
    /// As the document's key holding them (`breakers`).
    pub(crate) plural: &'static str,
    pub(crate) keys: &'static [&'static str],
}

/// The settings of a policy, in the order `#[retry]` documents its keys.
pub(crate) const POLICY_KEYS: &[&str] = &[
    "max",
    "base",
    "cap",
    "jitter",
    "on",
    "max_retry_after",
    "timeout",
    "deadline",
    "first_item",
    "idle",
    "resume",
    "budget",
    "breaker",
    "cooldown",
    "throttle",
    "nested",
];

/// The keys of [`POLICY_KEYS`] that name a shared guard.
const GUARD_KEYS: &[&str] = &["budget", "breaker", "cooldown", "throttle"];

pub(crate) const POLICIES: Kind = Kind {
    singular: "policy",
    plural: "policies",
    keys: POLICY_KEYS,
};
pub(crate) const BUDGETS: Kind = Kind {
    singular: "budget",
    plural: "budgets",
    keys: &["capacity"],
};
pub(crate) const COOLDOWNS: Kind = Kind {
    singular: "cooldown",
    plural: "cooldowns",
    keys: &["spacing"],
};
pub(crate) const THROTTLES: Kind = Kind {
    singular: "throttle",
    plural: "throttles",
    keys: &["min_rate", "max_rate", "probe_first"],
};
pub(crate) const BREAKERS: Kind = Kind {
    singular: "breaker",
    plural: "breakers",
    keys: &["ratio", "window", "min_throughput", "open_for", "probes"],
};

/// Every kind, in the order the document lists them.
pub(crate) const KINDS: [&Kind; 5] = [&POLICIES, &BUDGETS, &COOLDOWNS, &THROTTLES, &BREAKERS];

/// Keys other retry libraries use (`tenacious-syntax`, shared by the
/// attribute and the config files).
use tenacious_syntax::KEY_ALIASES as ALIASES;

/// The keys of `#[retry]` a config cannot hold, each with why and where
/// to set it instead.
const CODE_ONLY: &[(&str, &str)] = &[
    (
        "when",
        "`when` names a fn, which a config cannot hold; pass the predicate in code, to \
         `Policy::retry_with` (or `#[retry(when = ...)]`)",
    ),
    (
        "notify",
        "`notify` names a fn, which a config cannot hold; pass it in code, to \
         `Policy::retry_with` (or `#[retry(notify = ...)]`)",
    ),
    (
        "guard",
        "`guard` names a `static` of a type of your own, which a config cannot create; \
         add it in code with `Policy::guard`",
    ),
    (
        "key",
        "`key` is an expression over a fn's arguments; set it on the `#[retry]` fn",
    ),
    (
        "stats",
        "`stats` names a `static CallStats`, which a config cannot create; add one in \
         code with `Policy::stats` (a `#[retry]` fn has its own)",
    ),
    (
        "crate",
        "`crate` is a path for the code `#[retry]` generates; a config has no use for it",
    ),
];

/// The candidate a word is most likely a typo of, as `#[retry]` suggests
/// it (`tenacious-syntax`).
pub(crate) use tenacious_syntax::closest;

/// `a, b or c`.
fn or_list(items: impl IntoIterator<Item = String>) -> String {
    let mut items: Vec<String> = items.into_iter().collect();
    match items.pop() {
        None => String::new(),
        Some(last) if items.is_empty() => last,
        Some(last) => format!("{} or {last}", items.join(", ")),
    }
}

/// "unknown key `name`; did you mean `key`? the keys are: …".
fn unknown_key(name: &str, keys: &[&str], aliases: bool) -> String {
    let listed = keys.join(", ");
    let shown = if name.len() > 64 {
        quoted(name)
    } else {
        format!("`{name}`")
    };
    if aliases
        && let Some((_, key, why)) = ALIASES
            .iter()
            .find(|(names, key, _)| names.contains(&name) && keys.contains(key))
    {
        return format!(
            "unknown key {shown}; did you mean `{key}`? ({why}); the keys are: {listed}"
        );
    }
    match closest(name, keys.iter().copied()) {
        Some(key) => format!("unknown key {shown}; did you mean `{key}`? the keys are: {listed}"),
        None => format!("unknown key {shown}; the keys are: {listed}"),
    }
}

/// The table `value` is, or a problem saying what was expected.
fn table<'v>(r: &mut Reader<'_>, at: &At, value: &'v Value, expected: &str) -> Option<&'v Table> {
    if let Value::Table(table) = value {
        return Some(table);
    }
    r.problem(at, Some(value), format!("{expected}, not {}", value.kind()));
    None
}

/// Each entry of `table` with where it is; a repeated key is a problem.
fn entries<'t>(r: &mut Reader<'_>, at: &At, table: &'t Table) -> Vec<(At, &'t Entry)> {
    table
        .entries
        .iter()
        .map(|entry| {
            let at = at.child(entry);
            if entry.repeated {
                r.problem(
                    &at,
                    None,
                    format!("`{}` is given twice; give it once", entry.key),
                );
            }
            (at, entry)
        })
        .collect()
}

/// An integer, as written or as an environment variable's text.
fn integer(value: &Value) -> Option<i128> {
    match value {
        Value::Int(n) => Some(*n),
        // Digits past `i128` are a number too large, not "not a number".
        Value::Env(text) => text.parse().ok().or_else(|| {
            let digits = text.strip_prefix('-').unwrap_or(text);
            let all_digits = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
            all_digits.then(|| {
                if text.starts_with('-') {
                    i128::MIN
                } else {
                    i128::MAX
                }
            })
        }),
        _ => None,
    }
}

/// A number, as written (an integer too) or as an environment variable's
/// text.
fn number(value: &Value) -> Option<f64> {
    match value {
        // Exact for every integer a setting can mean; a rate of 2^53 + 1
        // read as 2^53 is still a rate.
        #[allow(clippy::cast_precision_loss)]
        Value::Int(n) => Some(*n as f64),
        Value::Float(x) => Some(*x),
        Value::Env(text) => text.parse().ok(),
        _ => None,
    }
}

fn as_text(value: &Value) -> Option<&str> {
    match value {
        Value::Str(text) | Value::Env(text) => Some(text),
        _ => None,
    }
}

fn flag(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(flag) => Some(*flag),
        Value::Env(text) if text == "true" => Some(true),
        Value::Env(text) if text == "false" => Some(false),
        _ => None,
    }
}

/// A `u32` in `least..=u32::MAX`, else `refuse(too_small)`.
fn count(
    r: &mut Reader<'_>,
    at: &At,
    value: &Value,
    least: u32,
    not_a_count: &str,
    too_small: &str,
    too_large: &str,
) -> Option<u32> {
    let Some(n) = integer(value) else {
        r.problem(at, Some(value), not_a_count);
        return None;
    };
    match u32::try_from(n) {
        Ok(n) if n >= least => Some(n),
        Ok(_) => {
            r.problem(at, Some(value), too_small);
            None
        }
        Err(_) if n < i128::from(least) => {
            r.problem(at, Some(value), too_small);
            None
        }
        Err(_) => {
            r.problem(at, Some(value), too_large);
            None
        }
    }
}

fn max(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<u32> {
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

/// Why a zero is refused for a duration key (the macro's words), or
/// `None` where zero means something.
fn zero_duration(key: &str) -> Option<&'static str> {
    Some(match key {
        "base" => {
            "a zero `base` makes every backoff zero, so retries run in a tight loop against a \
             failing service; give a positive duration, like `base = \"200ms\"`"
        }
        "cap" => {
            "a zero `cap` makes every backoff zero, so retries run in a tight loop against a \
             failing service; give a positive duration, like `cap = \"20s\"`"
        }
        "timeout" => {
            "a zero `timeout` times out every attempt before it starts; give the longest one \
             attempt may run, like `timeout = \"10s\"`, or remove the key"
        }
        "deadline" => {
            "a zero `deadline` leaves no time for any attempt; give the longest the whole call \
             may run, like `deadline = \"60s\"`, or remove the key"
        }
        "first_item" => {
            "a zero `first_item` stalls every attempt before its first item can come; give the \
             longest wait for it, like `first_item = \"10s\"`, or remove the key"
        }
        "idle" => {
            "a zero `idle` stalls a stream between any two items; give the longest gap without \
             progress to allow, like `idle = \"30s\"`, or remove the key"
        }
        "max_retry_after" => {
            "a zero `max_retry_after` gives up on every server that asks to wait; give the \
             longest wait to honour, like `max_retry_after = \"120s\"`"
        }
        "window" => {
            "a zero `window` weighs no outcome, so the breaker never opens; give how far back \
             to weigh them, like `window = \"30s\"`"
        }
        "open_for" => {
            "a zero `open_for` lets probes through as soon as the breaker opens, so it holds \
             no call back; give the break, like `open_for = \"15s\"`"
        }
        _ => return None,
    })
}

/// An example of `key` written right, for messages.
fn example(key: &str) -> &'static str {
    match key {
        "base" => "base = \"200ms\"",
        "cap" => "cap = \"20s\"",
        "max_retry_after" => "max_retry_after = \"120s\"",
        "timeout" => "timeout = \"10s\"",
        "deadline" => "deadline = \"60s\"",
        "first_item" => "first_item = \"10s\"",
        "idle" => "idle = \"30s\"",
        "spacing" => "spacing = \"10ms\"",
        "probe_first" => "probe_first = \"2s\"",
        "window" => "window = \"30s\"",
        "open_for" => "open_for = \"15s\"",
        _ => "key = \"1s\"",
    }
}

/// A duration string, in nanoseconds.
fn duration(r: &mut Reader<'_>, at: &At, key: &str, value: &Value) -> Option<u64> {
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
                && let Some(why) = zero_duration(key)
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
const JITTERS: [Jitter; 4] = [
    Jitter::Full,
    Jitter::Equal,
    Jitter::Decorrelated,
    Jitter::None,
];

fn jitter(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<Jitter> {
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
const NESTED: [(Nested, &str); 2] = [
    (
        Nested::Once,
        "the default: one attempt inside another retried call",
    ),
    (Nested::Retry, "retry as configured even there"),
];

fn nested(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<Nested> {
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
const RETRIED: [(&str, RetryOn); 2] = [
    ("Transient", RetryOn::TRANSIENT),
    ("RateLimited", RetryOn::RATE_LIMITED),
];
const NEVER_RETRIED: [(&str, &str); 2] = [
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
const ON_FORM: &str = "`on` takes a list of the classes retried, `Transient`, `RateLimited` \
     or both: `on = [\"Transient\", \"RateLimited\"]`";

fn on(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<RetryOn> {
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

fn resume(r: &mut Reader<'_>, at: &At, value: &Value) -> Option<bool> {
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

/// The names of the shared guards a policy of a set names.
#[derive(Debug, Clone, Default)]
pub(crate) struct GuardNames {
    pub(crate) budget: Option<String>,
    pub(crate) breaker: Option<String>,
    pub(crate) cooldown: Option<String>,
    pub(crate) throttle: Option<String>,
}

impl GuardNames {
    pub(crate) fn get(&self, kind: &str) -> Option<&str> {
        match kind {
            "budget" => self.budget.as_deref(),
            "breaker" => self.breaker.as_deref(),
            "cooldown" => self.cooldown.as_deref(),
            "throttle" => self.throttle.as_deref(),
            _ => None,
        }
    }

    fn set(&mut self, kind: &str, name: String) {
        let slot = match kind {
            "budget" => &mut self.budget,
            "breaker" => &mut self.breaker,
            "cooldown" => &mut self.cooldown,
            _ => &mut self.throttle,
        };
        *slot = Some(name);
    }
}

/// The plural of a guard kind, for the table that declares one.
fn plural(kind: &str) -> &'static str {
    KINDS
        .iter()
        .find(|k| k.singular == kind)
        .map_or("guards", |k| k.plural)
}

fn guard_name(r: &mut Reader<'_>, at: &At, kind: &str, value: &Value) -> Option<String> {
    match as_text(value) {
        Some(name) if !name.is_empty() => {
            // Bound to a store by this name, it must be one the store takes.
            if let Err(why) = check_name(name) {
                r.problem(at, Some(value), why);
                return None;
            }
            Some(name.to_owned())
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
    let keys: Vec<&str> = POLICY_KEYS
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
                        guards.set(kind, name);
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
                let message = match CODE_ONLY.iter().find(|(name, _)| *name == other) {
                    Some((_, why)) => (*why).to_owned(),
                    None => unknown_key(other, &keys, true),
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

/// Reads a guard's table: each key through `read`, which returns whether
/// it knew the key.
fn guard_table(
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
fn rate(r: &mut Reader<'_>, at: &At, key: &str, value: &Value, example: &str) -> Option<f64> {
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

/// Everything a set of policies declares, read and checked.
#[derive(Debug, Default)]
pub(crate) struct Document {
    pub(crate) policies: Vec<(String, PolicyConfig, GuardNames)>,
    pub(crate) budgets: Vec<(String, BudgetConfig)>,
    pub(crate) cooldowns: Vec<(String, CooldownConfig)>,
    pub(crate) throttles: Vec<(String, ThrottleConfig)>,
    pub(crate) breakers: Vec<(String, BreakerConfig)>,
}

/// Whether `c` may be in a policy's name: not whitespace, not a control
/// character. `#[retry(policy = "name")]` checks its literal by the same
/// rule (`valid_name_char` in `retry-macros/src/retry/args.rs`).
pub(crate) fn valid_name_char(c: char) -> bool {
    !c.is_whitespace() && !c.is_control()
}

/// Reads a set of policies: `[policies.NAME]`, and the shared guards they
/// name under `[budgets.NAME]`, `[cooldowns.NAME]`, `[throttles.NAME]`,
/// `[breakers.NAME]`.
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
    let plurals: Vec<&str> = KINDS.iter().map(|kind| kind.plural).collect();
    // Where each guard was declared, to find those no policy names.
    let mut declared: Vec<(&str, String, At)> = Vec::new();
    for (at, entry) in entries(r, &root, top) {
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
                && let Some(bad) = name.chars().find(|c| !valid_name_char(*c))
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
                _ => document
                    .breakers
                    .push((name.clone(), breaker(r, &at, value))),
            }
            declared.push((kind.singular, name, at));
        }
    }
    for (kind, name, at) in declared {
        let named = document
            .policies
            .iter()
            .any(|(_, _, guards)| guards.get(kind) == Some(name.as_str()));
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
    document
}
