//! The keys of `#[retry]`, once: each with what it looks like written
//! right, and what a config file makes of it. The attribute reads every
//! key of [`KEYS`], in its order; a config's policy reads those it can
//! hold ([`CONFIG_KEYS`]) and says of the others why it cannot.

/// One key of `#[retry]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// As written: `max`.
    pub name: &'static str,
    /// Written right: `max = 3`.
    pub example: &'static str,
    /// What a config file's policy makes of it.
    pub config: InConfig,
}

/// What a config file's policy makes of a key of `#[retry]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InConfig {
    /// A setting it reads, with the attribute's values.
    Setting,
    /// The name of a shared guard, which only a set of policies declares.
    Guard,
    /// Refused, with why and where to set it instead: it names code.
    CodeOnly(&'static str),
    /// Not a key there: an unknown key, as any other.
    Unknown,
}

const fn key(name: &'static str, example: &'static str, config: InConfig) -> Key {
    Key {
        name,
        example,
        config,
    }
}

use InConfig::{CodeOnly, Guard, Setting, Unknown};

/// The keys, in the order the documentation lists them.
pub const KEYS: &[Key] = &[
    key("policy", "policy = OPENAI", Unknown),
    key("max", "max = 3", Setting),
    key("base", "base = \"200ms\"", Setting),
    key("cap", "cap = \"20s\"", Setting),
    key("jitter", "jitter = \"full\"", Setting),
    key("on", "on = Transient | RateLimited", Setting),
    key(
        "when",
        "when = is_retryable",
        CodeOnly(
            "`when` names a fn, which a config cannot hold; pass the predicate in code, to \
             `Policy::retry_with` (or `#[retry(when = ...)]`)",
        ),
    ),
    key("check", "check = is_complete", Unknown),
    key("fallback", "fallback = cached_answer", Unknown),
    key("max_retry_after", "max_retry_after = \"120s\"", Setting),
    key("timeout", "timeout = \"10s\"", Setting),
    key("deadline", "deadline = \"60s\"", Setting),
    key("first_item", "first_item = \"10s\"", Setting),
    key("idle", "idle = \"30s\"", Setting),
    key("resume", "resume = true", Setting),
    key("idempotent", "idempotent = false", Unknown),
    key("budget", "budget = RETRY_BUDGET", Guard),
    key("breaker", "breaker = PROVIDER_BREAKER", Guard),
    key("cooldown", "cooldown = PROVIDER_COOLDOWN", Guard),
    key("throttle", "throttle = PROVIDER_THROTTLE", Guard),
    key("concurrency", "concurrency = PROVIDER_CONCURRENCY", Guard),
    key(
        "guard",
        "guard = PROVIDER_GUARD",
        CodeOnly(
            "`guard` names a `static` of a type of your own, which a config cannot create; \
             add it in code with `Policy::guard`",
        ),
    ),
    key(
        "key",
        "key = order.id",
        CodeOnly("`key` is an expression over a fn's arguments; set it on the `#[retry]` fn"),
    ),
    key("nested", "nested = \"retry\"", Setting),
    key(
        "notify",
        "notify = log_retry",
        CodeOnly(
            "`notify` names a fn, which a config cannot hold; pass it in code, to \
             `Policy::retry_with` (or `#[retry(notify = ...)]`)",
        ),
    ),
    key(
        "stats",
        "stats = false",
        CodeOnly(
            "`stats` names a `static CallStats`, which a config cannot create; add one in \
             code with `Policy::stats` (a `#[retry]` fn has its own)",
        ),
    ),
    key(
        "crate",
        "crate = ::tenacious",
        CodeOnly("`crate` is a path for the code `#[retry]` generates; a config has no use for it"),
    ),
];

/// Whether a config's policy reads `config`'s key: any it reads, or
/// (`guards`) those naming a guard.
const fn read(config: InConfig, guards: bool) -> bool {
    match config {
        Guard => true,
        Setting => !guards,
        CodeOnly(_) | Unknown => false,
    }
}

/// How many keys of [`KEYS`] a config's policy reads (`guards`: of those
/// naming a guard).
const fn count(guards: bool) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < KEYS.len() {
        if read(KEYS[i].config, guards) {
            n += 1;
        }
        i += 1;
    }
    n
}

/// Their names, in order.
const fn names<const N: usize>(guards: bool) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut n, mut i) = (0, 0);
    while i < KEYS.len() {
        if read(KEYS[i].config, guards) {
            out[n] = KEYS[i].name;
            n += 1;
        }
        i += 1;
    }
    out
}

/// The keys a config's policy reads, in [`KEYS`]' order.
///
/// ```
/// use tenacious_syntax::keys::CONFIG_KEYS;
///
/// assert_eq!(CONFIG_KEYS[..3], ["max", "base", "cap"]);
/// assert!(!CONFIG_KEYS.contains(&"when"));
/// ```
pub const CONFIG_KEYS: [&str; count(false)] = names(false);

/// The keys of [`CONFIG_KEYS`] that name a shared guard.
pub const GUARD_KEYS: [&str; count(true)] = names(true);

/// The key named `name`, if `#[retry]` has one.
#[must_use]
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|key| key.name == name)
}

#[cfg(test)]
mod tests {
    use super::{CONFIG_KEYS, GUARD_KEYS, KEYS};

    #[test]
    fn the_derived_lists_are_in_the_tables_order() {
        assert_eq!(
            CONFIG_KEYS,
            [
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
                "concurrency",
                "nested",
            ]
        );
        assert_eq!(
            GUARD_KEYS,
            ["budget", "breaker", "cooldown", "throttle", "concurrency"]
        );
        for key in KEYS {
            assert!(key.example.starts_with(&format!("{} = ", key.name)));
        }
    }
}
