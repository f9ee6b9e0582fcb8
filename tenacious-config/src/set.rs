//! [`Policies`]: a set of named policies and the shared guards they name,
//! read from TOML, JSON, the environment or what serde gives.
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use serde::{Deserialize, Deserializer};
use tenacious_runtime::registry::PolicySet;
use tenacious_runtime::{Breaker, Concurrency, Cooldown, Policy, RetryBudget, Throttle};

use crate::document::{self, Document};
use crate::env;
use crate::error::{ConfigError, MissingPolicy};
use crate::read::Reader;
use crate::value::Value;

/// A set of named policies and the shared guards they name, read from a
/// config (see the [module](crate) for the format).
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
    pub(crate) budgets: BTreeMap<String, &'static RetryBudget>,
    pub(crate) cooldowns: BTreeMap<String, &'static Cooldown>,
    pub(crate) throttles: BTreeMap<String, &'static Throttle>,
    pub(crate) breakers: BTreeMap<String, &'static Breaker>,
    pub(crate) concurrencies: BTreeMap<String, &'static Concurrency>,
    /// `[routes.NAME]`, built on demand (`route.rs`).
    pub(crate) routes: BTreeMap<String, crate::route::RouteSpec>,
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
    /// [module](crate#environment-variables) for the scheme); its problems
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
        let document = document::document(&mut reader, tree);
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
            if let Some(guard) = &guards.concurrency {
                // Declared, or the reader refused the set: no defaults.
                if let Some(concurrency) = set.concurrency_named(&document, guard) {
                    policy = policy.concurrency(concurrency);
                }
            }
            set.policies.insert(name.clone(), policy);
        }
        crate::route::build(&mut set, &document);
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

    /// The shared concurrency limit named `name` by the set's policies or
    /// routes, if any.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::config::Policies;
    ///
    /// let policies = Policies::from_toml_str(
    ///     "[policies.a]\nconcurrency = \"gpu\"\n[concurrencies.gpu]\nlimit = 4\nmax_wait = \"30s\"\n",
    /// )?;
    /// let gpu = policies.concurrency("gpu").unwrap();
    /// assert_eq!((gpu.get_name(), gpu.limit()), ("gpu", 4));
    /// assert_eq!(gpu.get_max_wait(), Some(Duration::from_secs(30)));
    /// assert!(std::ptr::eq(policies.get("a").unwrap().get_concurrency().unwrap(), gpu));
    /// # Ok::<(), tenacious::config::ConfigError>(())
    /// ```
    #[must_use]
    pub fn concurrency(&self, name: &str) -> Option<&'static Concurrency> {
        self.concurrencies.get(name).copied()
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
