//! The reading of a document's tree: where each value sits, the problems
//! found (every mistake kept, none stops the reading), the kinds of named
//! tables a set holds and their keys, and the values' shapes. Every key
//! is checked against its closed list, every value against what
//! `#[retry]` accepts, with the macro's words where they fit: a policy's
//! settings in `settings.rs`, its table and the whole set in
//! `document.rs`, the guards' tables in `guards.rs` (a concurrency limit's
//! in `guards/concurrency.rs`).
use tenacious_syntax::keys;

use crate::error::{ConfigError, Problem};
use crate::value::{Entry, Table, Value, quoted};

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
pub(crate) fn segment(key: &str) -> String {
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

/// The settings of a policy, in the order `#[retry]` documents its keys
/// (`tenacious-syntax`'s table, which the attribute reads too).
pub(crate) const POLICY_KEYS: &[&str] = &keys::CONFIG_KEYS;

/// The keys of [`POLICY_KEYS`] that name a shared guard.
pub(crate) const GUARD_KEYS: &[&str] = &keys::GUARD_KEYS;

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

pub(crate) const CONCURRENCIES: Kind = Kind {
    singular: "concurrency",
    plural: "concurrencies",
    keys: &["limit", "max_wait"],
};

/// Every kind, in the order the document lists them.
pub(crate) const KINDS: [&Kind; 6] = [
    &POLICIES,
    &BUDGETS,
    &COOLDOWNS,
    &THROTTLES,
    &BREAKERS,
    &CONCURRENCIES,
];

/// Keys other retry libraries use (`tenacious-syntax`, shared by the
/// attribute and the config files).
use tenacious_syntax::KEY_ALIASES as ALIASES;

/// The candidate a word is most likely a typo of, as `#[retry]` suggests
/// it (`tenacious-syntax`).
pub(crate) use tenacious_syntax::closest;

/// `a, b or c`.
pub(crate) fn or_list(items: impl IntoIterator<Item = String>) -> String {
    let mut items: Vec<String> = items.into_iter().collect();
    match items.pop() {
        None => String::new(),
        Some(last) if items.is_empty() => last,
        Some(last) => format!("{} or {last}", items.join(", ")),
    }
}

/// "unknown key `name`; did you mean `key`? the keys are: …".
pub(crate) fn unknown_key(name: &str, keys: &[&str], aliases: bool) -> String {
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
pub(crate) fn table<'v>(
    r: &mut Reader<'_>,
    at: &At,
    value: &'v Value,
    expected: &str,
) -> Option<&'v Table> {
    if let Value::Table(table) = value {
        return Some(table);
    }
    r.problem(at, Some(value), format!("{expected}, not {}", value.kind()));
    None
}

/// Each entry of `table` with where it is; a repeated key is a problem.
pub(crate) fn entries<'t>(r: &mut Reader<'_>, at: &At, table: &'t Table) -> Vec<(At, &'t Entry)> {
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
pub(crate) fn integer(value: &Value) -> Option<i128> {
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
pub(crate) fn number(value: &Value) -> Option<f64> {
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

pub(crate) fn as_text(value: &Value) -> Option<&str> {
    match value {
        Value::Str(text) | Value::Env(text) => Some(text),
        _ => None,
    }
}

pub(crate) fn flag(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(flag) => Some(*flag),
        Value::Env(text) if text == "true" => Some(true),
        Value::Env(text) if text == "false" => Some(false),
        _ => None,
    }
}

/// A `u32` in `least..=u32::MAX`, else `refuse(too_small)`.
pub(crate) fn count(
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
