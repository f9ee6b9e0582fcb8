//! The syntax the tenacious retry toolkit's users write in two places, the
//! `#[retry]` attribute (read at compile time by `tenacious-macros`) and
//! the policy files of `tenacious::config` (read at start-up), so the two
//! accept the same text with the same meaning and answer a mistake alike:
//! [`duration`] strings, the [`keys`] and their examples, the [`rules`]
//! across keys with their messages, and the [`closest`] known word to a
//! misspelt one.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod duration;
pub mod keys;
pub mod rules;

/// The candidate `word` is most likely a typo of, if any is close enough
/// (an edit distance of at most a third of the candidate's length, and at
/// least 1). Case and `_` are ignored, so `rate_limited` finds
/// `RateLimited`; a word longer than 64 bytes is no typo of a short name.
///
/// ```
/// use tenacious_syntax::closest;
///
/// assert_eq!(closest("rate_limited", ["Transient", "RateLimited"]), Some("RateLimited"));
/// assert_eq!(closest("jiter", ["jitter", "max"]), Some("jitter"));
/// assert_eq!(closest("Timeout", ["Transient", "RateLimited"]), None);
/// ```
#[must_use]
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if word.len() > 64 {
        return None;
    }
    let fold = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let word = fold(word);
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(&word, &fold(candidate)), candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Keys other retry libraries use, each group mapped to the key that means
/// it here, with a word on the difference: `#[retry]` reads them all, a
/// config file those whose key it has.
///
/// ```
/// use tenacious_syntax::KEY_ALIASES;
///
/// let (_, key, why) = KEY_ALIASES.iter().find(|(names, _, _)| names.contains(&"retries")).unwrap();
/// assert_eq!(*key, "max");
/// assert!(why.contains("`retries = 2` is `max = 3`"));
/// ```
pub const KEY_ALIASES: &[(&[&str], &str, &str)] = &[
    (
        &["retries"],
        "max",
        "`max` counts every attempt, the first included: `retries = 2` is `max = 3`",
    ),
    (
        &["max_retries"],
        "max",
        "`max` counts every attempt, the first included: `max_retries = 2` is `max = 3`",
    ),
    (
        &["attempts", "max_attempts", "tries"],
        "max",
        "`max` counts every attempt, the first included",
    ),
    (
        &["delay", "backoff", "initial_delay", "min_delay"],
        "base",
        "`base` is the first backoff ceiling",
    ),
    (
        &["max_delay", "max_backoff"],
        "cap",
        "`cap` is the ceiling of any backoff",
    ),
    (
        &["retry_on", "classes"],
        "on",
        "`on` lists the retried classes",
    ),
    (
        &["retry_if", "predicate", "filter"],
        "when",
        "`when` is an extra predicate, AND-ed with `on`",
    ),
    (
        &["on_retry", "callback"],
        "notify",
        "`notify` is called before each sleep",
    ),
    (
        &["krate"],
        "crate",
        "`crate` is the path to the `tenacious` crate",
    ),
    (
        &["attempt_timeout", "per_attempt_timeout"],
        "timeout",
        "`timeout` bounds each attempt",
    ),
    (
        &["total_timeout", "max_elapsed", "max_elapsed_time"],
        "deadline",
        "`deadline` bounds the whole call, attempts and sleeps",
    ),
    (
        &["first_token", "time_to_first_token", "ttft", "first_chunk"],
        "first_item",
        "`first_item` bounds a stream's wait for its first content item",
    ),
    (
        &[
            "idle_timeout",
            "stall_timeout",
            "read_timeout",
            "chunk_timeout",
        ],
        "idle",
        "`idle` bounds a stream's time without progress between items",
    ),
    (
        &["resumable", "reconnect"],
        "resume",
        "`resume = true` reconnects a stream from where it stopped",
    ),
    (
        &["retry_if_result", "validate", "accept"],
        "check",
        "`check` names a `fn(&T) -> Result<(), E>` that turns a bad `Ok` into a classified error",
    ),
    (
        &["on_give_up", "on_failure", "default", "or_else"],
        "fallback",
        "`fallback` names a fn that answers a give-up: `fn(Failure<E>) -> R` or `fn(E) -> R`",
    ),
    (
        &["retry_budget"],
        "budget",
        "`budget` names a shared retry budget",
    ),
    (
        &["circuit_breaker", "circuit"],
        "breaker",
        "`breaker` names the circuit breaker shared by every call to one provider",
    ),
    (
        &["rate_limiter", "rate_limit", "limiter"],
        "throttle",
        "`throttle` names the client-side rate shared by every call to one provider",
    ),
    (
        &[
            "bulkhead",
            "semaphore",
            "max_concurrency",
            "max_in_flight",
            "in_flight",
            "concurrency_limit",
        ],
        "concurrency",
        "`concurrency` names the limit of attempts in flight shared by every call to one provider",
    ),
    (
        &["idempotency_key"],
        "key",
        "`key` names the call's idempotency key from its arguments",
    ),
];

/// Levenshtein distance.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}
