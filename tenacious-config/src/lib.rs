//! Named, reusable policies from a config file or the environment (feature
//! `config`): `tenacious::config`.
//!
//! A set of policies is read once, at start-up, from TOML, JSON or
//! environment variables, and each policy is then found by its name:
//!
//! ```toml
//! [policies.openai]
//! max = 5
//! base = "500ms"
//! cap = "30s"
//! jitter = "full"
//! on = ["Transient", "RateLimited"]
//! timeout = "60s"
//! deadline = "3m"
//! cooldown = "openai"       # shared guards, by name
//! breaker = "openai"
//! budget = "fleet"
//!
//! [policies.search]
//! max = 3
//! base = "100ms"
//! on = ["Transient"]
//! budget = "fleet"
//!
//! [breakers.openai]         # a guard's settings; leave it out for the defaults
//! open_for = "30s"
//!
//! [budgets.fleet]
//! capacity = 1000
//! ```
//!
//! ```
//! use std::time::Duration;
//! use tenacious::config::Policies;
//!
//! # let text = "[policies.openai]\nmax = 5\nbreaker = \"openai\"\nbudget = \"fleet\"\n\
//! #     [policies.search]\nbudget = \"fleet\"\n[breakers.openai]\nopen_for = \"30s\"\n";
//! # let retry_toml = std::env::temp_dir().join(format!("retry-{}.toml", std::process::id()));
//! # std::fs::write(&retry_toml, text).unwrap();
//! let policies = Policies::from_toml_file(&retry_toml)?;
//! # std::fs::remove_file(&retry_toml).unwrap();
//! let openai = policies.require("openai")?;
//! assert_eq!(openai.get_max(), 5);
//! assert_eq!(openai.get_breaker().unwrap().get_open_for(), Duration::from_secs(30));
//! // Both policies name the budget "fleet": they share one.
//! let search = policies.get("search").unwrap();
//! assert!(std::ptr::eq(openai.get_budget().unwrap(), search.get_budget().unwrap()));
//!
//! let answer = openai.retry_blocking(|| Ok::<_, std::io::Error>("done"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The format
//!
//! A policy's keys are `#[retry]`'s, with its values and defaults (see
//! [`PolicyConfig`]): `max`, `base`, `cap`, `jitter`, `on` (a list of
//! class names), `max_retry_after`, `timeout`, `deadline`, `first_item`,
//! `idle`, `resume`, `nested`, and the shared guards it names: `budget`,
//! `breaker`, `cooldown`, `throttle`. Durations are written as in
//! `#[retry]`: `"200ms"`, `"1.5s"`, `"2m"`, `"1m30s"` (units `h`, `m`, `s`,
//! `ms`, `us`, `ns`). The same document in JSON is
//! `{"policies": {"openai": {"max": 5, …}}, "breakers": {…}}`.
//!
//! A guard is shared by every policy naming it, and by every call of
//! theirs: `cooldown = "openai"` in two policies is one cooldown. Its
//! settings go under `[budgets.NAME]`, `[cooldowns.NAME]`,
//! `[throttles.NAME]` or `[breakers.NAME]` (see [`BudgetConfig`],
//! [`CooldownConfig`], [`ThrottleConfig`], [`BreakerConfig`]); a name
//! with no table of settings gets the defaults, and a table no policy
//! names is an error (a misspelt name would leave its settings unused).
//! The guard is named after it in [`stats`](tenacious_runtime::stats) (its `name`).
//! A guard's name is the one a store binds it by (feature `redis`,
//! `Store::bind`): 1 to 200 bytes, no braces; another is refused here in
//! the words the store would refuse it with.
//!
//! # Errors
//!
//! Every mistake is found, not just the first, and each names the file,
//! the key and the value, and says what to write, in the words
//! `#[retry]` uses at compile time for the same mistake:
//!
//! ```text
//! retry.toml: policies.openai.base: "200 ms": invalid duration: unknown unit ` ms`; write a number and a unit, like "200ms", "1.5s", "2m" or "1m30s" (units: h, m, s, ms, us, ns)
//! retry.toml: policies.openai.on: "Fatal": `Fatal` errors are never retried: a human must fix the cause; classify the variant `transient` if a retry can succeed (`when` can only narrow `on`, not widen it)
//! retry.toml: policies.openai.maxx: unknown key `maxx`; did you mean `max`? the keys are: max, base, cap, jitter, on, max_retry_after, timeout, deadline, first_item, idle, resume, budget, breaker, cooldown, throttle, nested
//! ```
//!
//! Refused as `#[retry]` refuses them: an unknown key, a zero duration
//! (`base`, `cap`, `timeout`, `deadline`, …), `max = 0`, `cap` below
//! `base`, `timeout`, `first_item` or `idle` longer than `deadline`,
//! `Invalid` or `Fatal` in `on`, an unknown jitter or class. No input
//! makes the reading panic: a number too large for its setting, a
//! duration past `u64` nanoseconds (about 584 years), a file or a variable
//! that is not UTF-8 are each a [`Problem`].
//!
//! # Environment variables
//!
//! [`Policies::from_env`] reads `{PREFIX}_{KIND}_{NAME}_{KEY}=value`, where
//! `KIND` is `POLICY`, `BUDGET`, `COOLDOWN`, `THROTTLE` or `BREAKER`:
//!
//! ```sh
//! TENACIOUS_POLICY_OPENAI_MAX=5
//! TENACIOUS_POLICY_OPENAI_MAX_RETRY_AFTER=60s
//! TENACIOUS_POLICY_OPENAI_ON=Transient,RateLimited
//! TENACIOUS_POLICY_OPENAI_BREAKER=openai
//! TENACIOUS_BREAKER_OPENAI_OPEN_FOR=30s
//! ```
//!
//! The key is the longest of the kind's keys the variable ends with, and
//! the name is what comes between: `OPEN_AI_MAX_RETRY_AFTER` is the key
//! `max_retry_after` of the policy `open_ai`. Names and keys are read in
//! lower case. A list is written with `,` (or `|`) between its items.
//! Every variable under the prefix is read, so give the policies a prefix
//! of their own: one that does not fit the scheme is an error, as an
//! unknown key in a file is.
//!
//! # Binding by name
//!
//! [`load`] keeps one set for the whole process, and [`policy`] or
//! [`require`] finds a policy of it by name from anywhere:
//!
//! ```
//! use tenacious::config::{self, Policies};
//!
//! // At start-up, once.
//! config::load(Policies::from_toml_str("[policies.openai]\nmax = 5\n")?)?;
//!
//! // Anywhere after.
//! let openai = config::require("openai")?;
//! assert_eq!(openai.get_max(), 5);
//! assert!(config::policy("anthropic").is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A [`Policies`] of its own, without [`load`], is for tests and for a
//! second set.
//!
//! # Bound to `#[retry]` by name
//!
//! `#[retry(policy = "openai")]` runs the loaded policy `openai`, looked
//! up at run time, with the keys written beside the name overriding its
//! fields. Until a loaded set has the name, a call runs the defaults with
//! those keys, and [`missing`] lists the name (see it for the whole
//! behaviour and an example). A policy's name is what `#[retry]` names:
//! not empty, no whitespace, no control character.
//!
//! # What a set costs
//!
//! A [`Policy`] names its guards by `&'static` reference, so reading a set
//! creates each guard it names once and leaks it (a few hundred bytes, a
//! `Box::leak` at reading): read a set once, at start-up, not per call.
//! The policies themselves are values, copied out of the set.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use serde::{Deserialize, Deserializer};
use tenacious_runtime::registry::{self, PolicySet};
use tenacious_runtime::{Breaker, Cooldown, Policy, RetryBudget, Throttle};

mod duration;
mod env;
mod error;
mod guards;
mod policy;
mod read;
mod value;

pub use error::{AlreadyLoaded, ConfigError, MissingPolicy, Problem};
pub use guards::{BreakerConfig, BudgetConfig, CooldownConfig, ThrottleConfig};
pub use policy::{PolicyConfig, deserialize_policy};

use read::{Document, Reader};

/// Not a stable API: what the code `#[retry(policy = "name")]` generates
/// needs of this crate.
#[doc(hidden)]
pub mod __private {
    /// The name of a `policy = "name"`: with this crate, a name is looked
    /// up at run time in the set [`load`](crate::load) keeps. The facade
    /// re-exports it over the core's, which refuses the name when the
    /// feature `config` is off.
    #[must_use]
    pub const fn policy_name(name: &'static str) -> &'static str {
        name
    }
}

/// The README's examples, compiled and run as the docs' are.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
use value::Value;

/// A set of named policies and the shared guards they name, read from a
/// config (see the [module](self) for the format).
///
/// ```
/// use std::time::Duration;
/// use tenacious::config::Policies;
///
/// let policies = Policies::from_json_str(
///     r#"{ "policies": { "search": { "max": 4, "cooldown": "search" } } }"#,
/// )?;
/// let search = policies.require("search")?;
/// assert_eq!(search.get_max(), 4);
/// assert!(std::ptr::eq(search.get_cooldown().unwrap(), policies.cooldown("search").unwrap()));
/// assert_eq!(policies.names().collect::<Vec<_>>(), ["search"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Policies {
    source: String,
    policies: BTreeMap<String, Policy>,
    budgets: BTreeMap<String, &'static RetryBudget>,
    cooldowns: BTreeMap<String, &'static Cooldown>,
    throttles: BTreeMap<String, &'static Throttle>,
    breakers: BTreeMap<String, &'static Breaker>,
}

impl Policies {
    /// Reads a set from TOML text. Its problems name no file (see
    /// [`from_toml_file`](Policies::from_toml_file)).
    ///
    /// ```
    /// use tenacious::config::Policies;
    ///
    /// let policies = Policies::from_toml_str("[policies.search]\nmax = 4\n").unwrap();
    /// assert_eq!(policies.get("search").unwrap().get_max(), 4);
    ///
    /// let err = Policies::from_toml_str("[policies.search]\nbase = \"0ms\"\n").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "policies.search.base: \"0ms\": a zero `base` makes every backoff zero, so retries \
    ///      run in a tight loop against a failing service; give a positive duration, like \
    ///      `base = \"200ms\"`",
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] with every problem found: the text is not TOML, or
    /// its settings are not a set of policies.
    pub fn from_toml_str(text: &str) -> Result<Self, ConfigError> {
        Self::toml("", text)
    }

    /// Reads a set from a TOML file; its problems start with the path as
    /// given.
    ///
    /// ```
    /// use tenacious::config::Policies;
    ///
    /// let err = Policies::from_toml_file("no-such-retry.toml").unwrap_err();
    /// assert!(err.to_string().starts_with("no-such-retry.toml: cannot read it: "));
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`]: the file cannot be read, is not UTF-8 or not TOML,
    /// or its settings are not a set of policies.
    pub fn from_toml_file(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let (source, text) = read_file(path.as_ref())?;
        Self::toml(&source, &text)
    }

    /// Reads a set from JSON text, the same document as TOML's:
    /// `{"policies": {"NAME": {…}}, "breakers": {…}, …}`.
    ///
    /// ```
    /// use tenacious::config::Policies;
    ///
    /// let err = Policies::from_json_str(r#"{"policies": {"a": {"on": ["Invalid"]}}}"#)
    ///     .unwrap_err();
    /// assert!(err.to_string().starts_with(
    ///     "policies.a.on: \"Invalid\": `Invalid` errors are never retried"
    /// ));
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`]: the text is not JSON, or its settings are not a
    /// set of policies.
    pub fn from_json_str(text: &str) -> Result<Self, ConfigError> {
        Self::json("", text)
    }

    /// Reads a set from a JSON file; its problems start with the path as
    /// given.
    ///
    /// ```
    /// use tenacious::config::Policies;
    ///
    /// let path = std::env::temp_dir().join(format!("retry-{}.json", std::process::id()));
    /// std::fs::write(&path, r#"{"policies": {"search": {"max": "3"}}}"#)?;
    /// let err = Policies::from_json_file(&path).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     format!(
    ///         "{}: policies.search.max: \"3\": `max` takes an integer, the total number of \
    ///          attempts: `max = 3`",
    ///         path.display(),
    ///     ),
    /// );
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`]: the file cannot be read, is not UTF-8 or not JSON,
    /// or its settings are not a set of policies.
    pub fn from_json_file(path: impl AsRef<Path>) -> Result<Self, ConfigError> {
        let (source, text) = read_file(path.as_ref())?;
        Self::json(&source, &text)
    }

    /// Reads a set from this process's environment variables under
    /// `prefix` (`"TENACIOUS"` reads `TENACIOUS_POLICY_OPENAI_MAX`; see the
    /// [module](self#environment-variables) for the scheme); its problems
    /// start with `environment` and name the variable.
    ///
    /// ```
    /// use tenacious::config::Policies;
    ///
    /// // Set by the deployment, e.g. `RETRY_DOCS_POLICY_SEARCH_MAX=4`; none here.
    /// let policies = Policies::from_env("RETRY_DOCS")?;
    /// assert!(policies.is_empty());
    /// assert_eq!(policies.source(), "environment");
    /// # Ok::<(), tenacious::config::ConfigError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`]: a variable under the prefix fits no kind or key,
    /// is not UTF-8, or its value is not what its key takes.
    pub fn from_env(prefix: &str) -> Result<Self, ConfigError> {
        Self::from_vars(prefix, std::env::vars_os())
    }

    /// Reads a set from `vars` as [`from_env`](Policies::from_env) reads
    /// the environment: for tests, and for variables from elsewhere (a
    /// `.env` file, a secret store).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::config::Policies;
    ///
    /// let policies = Policies::from_vars(
    ///     "APP",
    ///     [
    ///         ("APP_POLICY_OPENAI_MAX", "5"),
    ///         ("APP_POLICY_OPENAI_MAX_RETRY_AFTER", "1m"),
    ///         ("APP_POLICY_OPENAI_ON", "Transient,RateLimited"),
    ///         ("OTHER_VARIABLE", "not read"),
    ///     ],
    /// )?;
    /// let openai = policies.require("openai")?;
    /// assert_eq!(openai.get_max_retry_after(), Duration::from_secs(60));
    ///
    /// let err = Policies::from_vars("APP", [("APP_POLICY_OPENAI_MAX", "five")]).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "environment: APP_POLICY_OPENAI_MAX: \"five\": `max` takes an integer, the total \
    ///      number of attempts: `max = 3`",
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`from_env`](Policies::from_env).
    pub fn from_vars<I, K, V>(prefix: &str, vars: I) -> Result<Self, ConfigError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        let source = "environment";
        let vars = vars
            .into_iter()
            .map(|(name, value)| (name.into(), value.into()))
            .collect();
        let mut reader = Reader::new(source);
        let tree = env::tree(&mut reader, prefix, vars);
        Self::read(source, reader, &tree)
    }

    fn toml(source: &str, text: &str) -> Result<Self, ConfigError> {
        let tree: Value = toml::from_str(text).map_err(|err| {
            let place = err.span().map_or_else(String::new, |span| {
                let before = text.get(..span.start).unwrap_or(text);
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                format!(" at line {line}, column {column}")
            });
            ConfigError::whole(
                source,
                format!("invalid TOML{place}: {}", err.message().trim_end()),
            )
        })?;
        Self::read(source, Reader::new(source), &tree)
    }

    fn json(source: &str, text: &str) -> Result<Self, ConfigError> {
        let tree: Value = serde_json::from_str(text)
            .map_err(|err| ConfigError::whole(source, format!("invalid JSON: {err}")))?;
        Self::read(source, Reader::new(source), &tree)
    }

    fn read(source: &str, mut reader: Reader<'_>, tree: &Value) -> Result<Self, ConfigError> {
        let document = read::document(&mut reader, tree);
        reader.finish()?;
        Ok(Self::build(source, document))
    }

    /// The set a checked document declares: each guard a policy names
    /// built once, with its settings or the defaults, and leaked.
    fn build(source: &str, document: Document) -> Self {
        fn leak<T>(guard: T) -> &'static T {
            Box::leak(Box::new(guard))
        }
        fn leak_name(name: &str) -> &'static str {
            Box::leak(name.to_owned().into_boxed_str())
        }
        fn settings<C: Copy + Default>(declared: &[(String, C)], name: &str) -> C {
            declared
                .iter()
                .find(|(declared, _)| declared == name)
                .map_or_else(C::default, |(_, config)| *config)
        }
        let mut set = Self {
            source: source.to_owned(),
            ..Self::default()
        };
        for (name, config, guards) in &document.policies {
            let mut policy = config.into_policy();
            if let Some(guard) = &guards.budget {
                let budget = *set
                    .budgets
                    .entry(guard.clone())
                    .or_insert_with(|| leak(settings(&document.budgets, guard).build()));
                policy = policy.budget(budget);
            }
            if let Some(guard) = &guards.breaker {
                let breaker = *set.breakers.entry(guard.clone()).or_insert_with(|| {
                    let config = settings(&document.breakers, guard);
                    leak(config.apply(Breaker::new().name(leak_name(guard))))
                });
                policy = policy.breaker(breaker);
            }
            if let Some(guard) = &guards.cooldown {
                let cooldown = *set.cooldowns.entry(guard.clone()).or_insert_with(|| {
                    let config = settings(&document.cooldowns, guard);
                    leak(config.apply(Cooldown::new().name(leak_name(guard))))
                });
                policy = policy.cooldown(cooldown);
            }
            if let Some(guard) = &guards.throttle {
                let throttle = *set.throttles.entry(guard.clone()).or_insert_with(|| {
                    let config = settings(&document.throttles, guard);
                    leak(config.apply(Throttle::new().name(leak_name(guard))))
                });
                policy = policy.throttle(throttle);
            }
            set.policies.insert(name.clone(), policy);
        }
        set
    }

    /// The policy named `name`, if the set has one.
    ///
    /// ```
    /// use tenacious::config::Policies;
    ///
    /// let policies = Policies::from_toml_str("[policies.search]\nmax = 2\n")?;
    /// assert_eq!(policies.get("search").map(|p| p.get_max()), Some(2));
    /// assert!(policies.get("openai").is_none());
    /// # Ok::<(), tenacious::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&Policy> {
        self.policies.get(name)
    }

    /// The policy named `name`, or an error that says which names there
    /// are (and the closest one).
    ///
    /// # Errors
    ///
    /// [`MissingPolicy`] if the set has no policy of that name.
    pub fn require(&self, name: &str) -> Result<&Policy, MissingPolicy> {
        self.policies.get(name).ok_or_else(|| MissingPolicy {
            name: name.to_owned(),
            source: self.source.clone(),
            known: Some(self.policies.keys().cloned().collect()),
        })
    }

    /// The policies' names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.policies.keys().map(String::as_str)
    }

    /// Each policy with its name, in the names' order.
    ///
    /// ```
    /// use tenacious::config::Policies;
    ///
    /// let policies = Policies::from_toml_str("[policies.b]\nmax = 2\n[policies.a]\n")?;
    /// for (name, policy) in policies.iter() {
    ///     println!("{name}:\n{}", policy.explain());
    /// }
    /// assert_eq!(policies.len(), 2);
    /// # Ok::<(), tenacious::config::ConfigError>(())
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Policy)> {
        self.policies
            .iter()
            .map(|(name, policy)| (name.as_str(), policy))
    }

    /// How many policies the set has.
    #[must_use]
    pub fn len(&self) -> usize {
        self.policies.len()
    }

    /// Whether the set has no policy.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.policies.is_empty()
    }

    /// Where it was read from: the file as given, `environment`, or empty
    /// for a string.
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The shared budget named `name` by the set's policies, if any: to
    /// read its balance, or to bind it to a store (feature `redis`).
    ///
    /// ```
    /// use tenacious::config::Policies;
    ///
    /// let policies = Policies::from_toml_str(
    ///     "[policies.a]\nbudget = \"fleet\"\nbreaker = \"openai\"\n[budgets.fleet]\ncapacity = 50\n",
    /// )?;
    /// assert_eq!(policies.budget("fleet").unwrap().balance(), 50);
    /// assert_eq!(policies.breaker("openai").unwrap().get_name(), "openai");
    /// assert!(policies.cooldown("openai").is_none());
    /// # Ok::<(), tenacious::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn budget(&self, name: &str) -> Option<&'static RetryBudget> {
        self.budgets.get(name).copied()
    }

    /// The shared cooldown named `name` by the set's policies, if any.
    #[must_use]
    pub fn cooldown(&self, name: &str) -> Option<&'static Cooldown> {
        self.cooldowns.get(name).copied()
    }

    /// The shared throttle named `name` by the set's policies, if any.
    #[must_use]
    pub fn throttle(&self, name: &str) -> Option<&'static Throttle> {
        self.throttles.get(name).copied()
    }

    /// The shared breaker named `name` by the set's policies, if any.
    #[must_use]
    pub fn breaker(&self, name: &str) -> Option<&'static Breaker> {
        self.breakers.get(name).copied()
    }
}

/// A set read from what serde gives (a `[retry]` table of a config of
/// yours), checked as a file is; the problems' paths start at that table.
impl<'de> Deserialize<'de> for Policies {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let tree = Value::deserialize(deserializer)?;
        Self::read("", Reader::new(""), &tree).map_err(serde::de::Error::custom)
    }
}

/// What the registry reads of a set it keeps.
impl PolicySet for Policies {
    fn policy(&self, name: &str) -> Option<&Policy> {
        self.get(name)
    }

    fn names(&self) -> Vec<&str> {
        Policies::names(self).collect()
    }

    fn source(&self) -> &str {
        Policies::source(self)
    }
}

/// The file's text, and its path as problems name it.
fn read_file(path: &Path) -> Result<(String, String), ConfigError> {
    let source = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|err| ConfigError::whole(&source, format!("cannot read it: {err}")))?;
    let text = String::from_utf8(bytes).map_err(|err| {
        ConfigError::whole(
            &source,
            format!(
                "it is not UTF-8 (at byte {})",
                err.utf8_error().valid_up_to()
            ),
        )
    })?;
    Ok((source, text))
}

/// Keeps `policies` for the whole process, where [`policy`] and
/// [`require`] find them by name. Once: a second call is refused, and the
/// set loaded first stays (a policy handed out is never taken back).
///
/// ```
/// use tenacious::config::{self, Policies};
///
/// let loaded = config::load(Policies::from_toml_str("[policies.search]\n")?)?;
/// assert!(loaded.get("search").is_some());
/// assert!(config::loaded().is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`AlreadyLoaded`] if a set was loaded before.
pub fn load(policies: Policies) -> Result<&'static Policies, AlreadyLoaded> {
    // The registry of the names `#[retry(policy = "name")]` fns are bound
    // by keeps the set; this module only parses it and registers it there.
    let stored = registry::register(Box::new(policies));
    match (stored, loaded()) {
        (Ok(()), Some(loaded)) => Ok(loaded),
        (_, loaded) => Err(AlreadyLoaded {
            source: loaded.map(|set| set.source.clone()).unwrap_or_default(),
        }),
    }
}

/// The set [`load`] keeps, if it was called.
#[must_use]
pub fn loaded() -> Option<&'static Policies> {
    // Only this module registers a set, and always a `Policies`.
    let set: &'static dyn std::any::Any = registry::registered()?;
    set.downcast_ref()
}

/// The loaded policy named `name`: `None` if there is none, or if nothing
/// was [`load`]ed. [`require`] says which.
///
/// ```
/// use tenacious::config;
///
/// // Nothing loaded in this program.
/// assert!(config::policy("openai").is_none());
/// ```
#[must_use]
pub fn policy(name: &str) -> Option<&'static Policy> {
    registry::policy(name)
}

/// The loaded policy named `name`, or an error saying that nothing was
/// loaded, or which names there are.
///
/// ```
/// use tenacious::config;
///
/// let missing = config::require("openai").unwrap_err();
/// assert_eq!(
///     missing.to_string(),
///     "no policy named \"openai\": no policies are loaded; load them at start-up, with \
///      `tenacious::config::load`",
/// );
/// ```
///
/// # Errors
///
/// [`MissingPolicy`], saying why.
pub fn require(name: &str) -> Result<&'static Policy, MissingPolicy> {
    match loaded() {
        Some(set) => set.require(name),
        None => Err(MissingPolicy {
            name: name.to_owned(),
            source: String::new(),
            known: None,
        }),
    }
}

/// The names that `#[retry(policy = "name")]` fns asked for and did not
/// find: what a health check reports. Sorted, each once; empty when every
/// fn called so far found its policy.
///
/// A fn is listed from its first call that does not find its name (nothing
/// [`load`]ed yet, or the loaded set has no policy of that name), and
/// leaves the list once a loaded set has the name. Fns not called yet are
/// not known: their names cannot be listed before their first call.
///
/// ```
/// use tenacious::config::{self, Policies};
/// use tenacious::{Classify, Failure, retry};
///
/// #[derive(Debug, Classify)]
/// enum SearchError {
///     #[classify(transient)]
///     Timeout,
/// }
///
/// #[retry(policy = "search", base = "1ms")]
/// fn search() -> Result<(), Failure<SearchError>> {
///     Err(SearchError::Timeout)
/// }
///
/// // Called before the set is loaded: the fn runs on its fallback, the
/// // defaults with the keys beside `policy` (3 attempts)...
/// assert_eq!(search().unwrap_err().attempts().len(), 3);
/// // ...and says so.
/// assert_eq!(config::missing(), ["search"]);
///
/// config::load(Policies::from_toml_str("[policies.search]\nmax = 2\n")?)?;
/// assert!(config::missing().is_empty());
/// assert_eq!(search().unwrap_err().attempts().len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[must_use]
pub fn missing() -> Vec<&'static str> {
    registry::missing()
}
