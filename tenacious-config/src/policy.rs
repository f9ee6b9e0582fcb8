//! [`PolicyConfig`]: one policy's settings as a config gives them.
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use super::document::policy;
use super::error::{ConfigError, Problem};
use super::read::{At, Reader};
use super::value::Value;
use tenacious_runtime::store::hooks::saturating_nanos;
use tenacious_runtime::{Jitter, Nested, Policy, RetryOn};
use tenacious_syntax::rules::{self, Setting};

/// One policy's settings, read from a config: each one it sets, and
/// nothing for those it leaves to the [`Policy`] it is applied to.
///
/// Deserialize it (serde: TOML, JSON, …) with the keys and values
/// `#[retry]` takes, in a config's spelling:
///
/// | key | value | `Policy` builder |
/// |---|---|---|
/// | `max` | total attempts, the first included, ≥ 1 | [`max`](Policy::max) |
/// | `base`, `cap` | durations like `"200ms"`, `"1.5s"`, `"2m"`, `"1m30s"`; `cap` ≥ `base` | [`base`](Policy::base), [`cap`](Policy::cap) |
/// | `jitter` | `"full"`, `"equal"`, `"decorrelated"` or `"none"` | [`jitter`](Policy::jitter) |
/// | `on` | a list of `"Transient"`, `"RateLimited"` (never `"Invalid"` or `"Fatal"`) | [`on`](Policy::on) |
/// | `max_retry_after`, `timeout`, `deadline` | durations; `timeout` ≤ `deadline` | [`max_retry_after`](Policy::max_retry_after), [`timeout`](Policy::timeout), [`deadline`](Policy::deadline) |
/// | `first_item`, `idle` | durations, each ≤ `deadline` | [`first_item`](Policy::first_item), [`idle`](Policy::idle) |
/// | `resume` | `true` or `false` | [`resume`](Policy::resume) |
/// | `nested` | `"once"` or `"retry"` | [`nested`](Policy::nested) |
///
/// Every key is optional; the defaults are [`Policy::DEFAULT`]'s (3
/// attempts, base 200 ms, cap 20 s, full jitter, `Transient |
/// RateLimited`, hints up to 120 s, no timeout or deadline). What
/// `#[retry]` refuses at compile time is refused here, in its words: an
/// unknown key (with the list of keys), a zero duration, `max = 0`, `cap`
/// below `base`, `timeout` longer than `deadline`, `Invalid` in `on`.
/// The shared guards (`budget`, `breaker`, `cooldown`, `throttle`,
/// `concurrency`) are
/// named only in a set of policies, [`Policies`](super::Policies), which
/// declares them; a policy on its own gets them in code, from its
/// builders.
///
/// ```
/// use std::time::Duration;
/// use tenacious::config::PolicyConfig;
/// use tenacious::{Jitter, Policy, RetryOn};
///
/// let config: PolicyConfig = serde_json::from_str(
///     r#"{ "max": 5, "base": "100ms", "jitter": "equal", "on": ["Transient"] }"#,
/// )
/// .unwrap();
/// let policy = config.into_policy();
/// assert_eq!(policy.get_max(), 5);
/// assert_eq!(policy.get_base(), Duration::from_millis(100));
/// assert_eq!(policy.get_cap(), Duration::from_secs(20)); // the default
/// assert_eq!(policy.get_jitter(), Jitter::Equal);
/// assert_eq!(policy.get_on(), RetryOn::TRANSIENT);
///
/// let bad = serde_json::from_str::<PolicyConfig>(r#"{ "max": 0 }"#).unwrap_err();
/// assert!(bad.to_string().starts_with("max: 0: `max` counts every attempt, the first included"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PolicyConfig {
    pub(crate) max: Option<u32>,
    pub(crate) base: Option<u64>,
    pub(crate) cap: Option<u64>,
    pub(crate) jitter: Option<Jitter>,
    pub(crate) on: Option<RetryOn>,
    pub(crate) max_retry_after: Option<u64>,
    pub(crate) timeout: Option<u64>,
    pub(crate) deadline: Option<u64>,
    pub(crate) first_item: Option<u64>,
    pub(crate) idle: Option<u64>,
    pub(crate) resume: Option<bool>,
    pub(crate) nested: Option<Nested>,
}

impl PolicyConfig {
    /// A config that sets nothing: applied, it changes nothing.
    ///
    /// ```
    /// use tenacious::Policy;
    /// use tenacious::config::PolicyConfig;
    ///
    /// assert_eq!(PolicyConfig::new().into_policy(), Policy::DEFAULT);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self {
            max: None,
            base: None,
            cap: None,
            jitter: None,
            on: None,
            max_retry_after: None,
            timeout: None,
            deadline: None,
            first_item: None,
            idle: None,
            resume: None,
            nested: None,
        }
    }

    /// The settings on top of [`Policy::DEFAULT`]. Never fails: reading
    /// the config checked them against the defaults already.
    #[must_use]
    pub fn into_policy(self) -> Policy {
        self.apply_unchecked(Policy::DEFAULT)
    }

    /// The settings on top of `base`, a policy built in code (its guards,
    /// statistics record, and every setting the config leaves out stay).
    /// Fails, with the macro's words, where a setting clashes with one of
    /// `base`'s: a `cap` below its `base`, a `timeout` longer than its
    /// `deadline`, and so on.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::config::PolicyConfig;
    /// use tenacious::{Cooldown, Policy};
    ///
    /// static OPENAI: Cooldown = Cooldown::new();
    /// const BASE: Policy = Policy::new().deadline(Duration::from_secs(10)).cooldown(&OPENAI);
    ///
    /// let config: PolicyConfig = serde_json::from_str(r#"{ "max": 6 }"#).unwrap();
    /// let policy = config.apply(BASE).unwrap();
    /// assert_eq!(policy.get_max(), 6);
    /// assert_eq!(policy.get_deadline(), Some(Duration::from_secs(10)));
    /// assert!(policy.get_cooldown().is_some());
    ///
    /// let late: PolicyConfig = serde_json::from_str(r#"{ "timeout": "30s" }"#).unwrap();
    /// assert_eq!(
    ///     late.apply(BASE).unwrap_err().to_string(),
    ///     "timeout: `timeout` (30s) is longer than the base policy's `deadline` (10s): no \
    ///      attempt can run longer than the whole call; lower `timeout` or raise `deadline`",
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming each setting that clashes with `base`.
    pub fn apply(self, base: Policy) -> Result<Policy, ConfigError> {
        let problems: Vec<Problem> = self
            .conflicts(&base, false)
            .into_iter()
            .map(|(key, message)| Problem::new("", key.to_owned(), None, message))
            .collect();
        if problems.is_empty() {
            Ok(self.apply_unchecked(base))
        } else {
            Err(ConfigError::new(problems))
        }
    }

    fn apply_unchecked(self, mut policy: Policy) -> Policy {
        let nanos = Duration::from_nanos;
        if let Some(max) = self.max {
            policy = policy.max(max);
        }
        if let Some(base) = self.base {
            policy = policy.base(nanos(base));
        }
        if let Some(cap) = self.cap {
            policy = policy.cap(nanos(cap));
        }
        if let Some(jitter) = self.jitter {
            policy = policy.jitter(jitter);
        }
        if let Some(on) = self.on {
            policy = policy.on(on);
        }
        if let Some(limit) = self.max_retry_after {
            policy = policy.max_retry_after(nanos(limit));
        }
        if let Some(timeout) = self.timeout {
            policy = policy.timeout(nanos(timeout));
        }
        if let Some(deadline) = self.deadline {
            policy = policy.deadline(nanos(deadline));
        }
        if let Some(first_item) = self.first_item {
            policy = policy.first_item(nanos(first_item));
        }
        if let Some(idle) = self.idle {
            policy = policy.idle(nanos(idle));
        }
        if let Some(resume) = self.resume {
            policy = policy.resume(resume);
        }
        if let Some(nested) = self.nested {
            policy = policy.nested(nested);
        }
        policy
    }

    /// The settings that clash once applied to `base`, each with the key
    /// to blame and why: the rules `#[retry]` checks, and their words
    /// (`tenacious_syntax::rules`). `default`: `base` is
    /// [`Policy::DEFAULT`], as the messages then say.
    pub(crate) fn conflicts(&self, base: &Policy, default: bool) -> Vec<(&'static str, String)> {
        let theirs = if default {
            "the default"
        } else {
            "the base policy's"
        };
        let nanos = |duration: Option<Duration>| duration.map(saturating_nanos);
        let mut out = Vec::new();
        out.extend(rules::backoff(
            Setting::or(self.base, nanos(Some(base.get_base()))),
            Setting::or(self.cap, nanos(Some(base.get_cap()))),
            theirs,
        ));
        let deadline = Setting::or(self.deadline, nanos(base.get_deadline()));
        let limits = [
            (self.timeout, base.get_timeout()),
            (self.first_item, base.get_first_item()),
            (self.idle, base.get_idle()),
        ];
        for ((key, _), (own, inherited)) in rules::DEADLINE_BOUNDED.into_iter().zip(limits) {
            let limit = Setting::or(own, nanos(inherited));
            out.extend(rules::within_deadline(key, limit, deadline, theirs));
        }
        out.into_iter()
            .map(|broken| (broken.key, broken.message))
            .collect()
    }

    /// Total attempts, if set.
    #[must_use]
    pub const fn get_max(&self) -> Option<u32> {
        self.max
    }

    /// The first backoff ceiling, if set.
    #[must_use]
    pub fn get_base(&self) -> Option<Duration> {
        self.base.map(Duration::from_nanos)
    }

    /// The ceiling of any backoff, if set.
    #[must_use]
    pub fn get_cap(&self) -> Option<Duration> {
        self.cap.map(Duration::from_nanos)
    }

    /// The jitter, if set.
    #[must_use]
    pub const fn get_jitter(&self) -> Option<Jitter> {
        self.jitter
    }

    /// The classes retried, if set.
    #[must_use]
    pub const fn get_on(&self) -> Option<RetryOn> {
        self.on
    }

    /// The longest server hint honoured, if set.
    #[must_use]
    pub fn get_max_retry_after(&self) -> Option<Duration> {
        self.max_retry_after.map(Duration::from_nanos)
    }

    /// The per-attempt timeout, if set.
    #[must_use]
    pub fn get_timeout(&self) -> Option<Duration> {
        self.timeout.map(Duration::from_nanos)
    }

    /// The whole-call deadline, if set.
    #[must_use]
    pub fn get_deadline(&self) -> Option<Duration> {
        self.deadline.map(Duration::from_nanos)
    }

    /// A stream's time to its first content item, if set.
    #[must_use]
    pub fn get_first_item(&self) -> Option<Duration> {
        self.first_item.map(Duration::from_nanos)
    }

    /// A stream's idle limit, if set.
    #[must_use]
    pub fn get_idle(&self) -> Option<Duration> {
        self.idle.map(Duration::from_nanos)
    }

    /// Whether a stream resumes after it committed, if set.
    #[must_use]
    pub const fn get_resume(&self) -> Option<bool> {
        self.resume
    }

    /// What a call does inside another retried call, if set.
    #[must_use]
    pub const fn get_nested(&self) -> Option<Nested> {
        self.nested
    }
}

/// Reads what serde gives through the config's own reader, so a policy
/// embedded in a config of yours is checked as a file's is; every problem
/// found is in the error, one a line, its key's path relative to the
/// policy's table.
impl<'de> Deserialize<'de> for PolicyConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let mut reader = Reader::new("");
        let (config, _) = policy(&mut reader, &At::root(), &value, false);
        reader
            .finish()
            .map(|()| config)
            .map_err(serde::de::Error::custom)
    }
}

/// A policy deserialized, for `#[serde(deserialize_with = "...")]` on a
/// field of type [`Policy`] in a config of yours: a [`PolicyConfig`] on top
/// of [`Policy::DEFAULT`], read and checked as a file's policy is. It names
/// no guard or statistics record, which are `static`s: add them with the
/// builders, or read a set of policies with [`Policies`](super::Policies),
/// which declares its guards.
///
/// ```
/// use std::time::Duration;
/// use tenacious::Policy;
///
/// #[derive(serde::Deserialize)]
/// struct App {
///     #[serde(deserialize_with = "tenacious::config::deserialize_policy")]
///     retry: Policy,
/// }
///
/// let app: App = serde_json::from_str(r#"{ "retry": { "max": 4, "deadline": "30s" } }"#).unwrap();
/// assert_eq!(app.retry, Policy::new().max(4).deadline(Duration::from_secs(30)));
/// ```
///
/// # Errors
///
/// Every problem the policy's table has, one a line, as
/// [`PolicyConfig`]'s `Deserialize` says them.
pub fn deserialize_policy<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Policy, D::Error> {
    PolicyConfig::deserialize(deserializer).map(PolicyConfig::into_policy)
}
