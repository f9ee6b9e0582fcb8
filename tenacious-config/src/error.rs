//! What a bad config, a second load and a missing name say.
use std::fmt;

/// Why a config was refused: every mistake found in it, each naming where
/// it is, the value and what to write instead.
///
/// Its `Display` prints one [`Problem`] a line:
///
/// ```text
/// retry.toml: policies.openai.base: "200 ms": invalid duration: unknown unit ` ms`; write a number and a unit, like "200ms", "1.5s", "2m" or "1m30s" (units: h, m, s, ms, us, ns)
/// retry.toml: policies.openai.maxx: unknown key `maxx`; did you mean `max`? the keys are: max, base, cap, jitter, on, max_retry_after, timeout, deadline, first_item, idle, resume, budget, breaker, cooldown, throttle, concurrency, nested
/// ```
///
/// ```
/// use tenacious::config::Policies;
///
/// let err = Policies::from_toml_str("[policies.openai]\nmax = 0\n").unwrap_err();
/// assert_eq!(err.problems().len(), 1);
/// assert_eq!(err.problems()[0].key(), "policies.openai.max");
/// assert_eq!(err.problems()[0].value(), Some("0"));
/// assert!(err.to_string().starts_with("policies.openai.max: 0: `max` counts every attempt"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    problems: Vec<Problem>,
}

/// One mistake in a config: where (the file, the key's path or the
/// environment variable), the value, and what is wrong with it.
///
/// `Display`: `source: key: value: message`, leaving out the parts it does
/// not have (a string read with [`Policies::from_toml_str`] has no source;
/// a missing file has no key).
///
/// ```
/// use tenacious::config::Policies;
///
/// let err = Policies::from_vars("APP", [("APP_POLICY_SEARCH_JITTER", "ful")]).unwrap_err();
/// let problem = &err.problems()[0];
/// assert_eq!(problem.source(), "environment");
/// assert_eq!(problem.key(), "APP_POLICY_SEARCH_JITTER");
/// assert_eq!(problem.value(), Some("\"ful\""));
/// assert!(problem.message().starts_with("unknown jitter \"ful\"; did you mean \"full\"?"));
/// ```
///
/// [`Policies::from_toml_str`]: super::Policies::from_toml_str
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    source: String,
    key: String,
    value: Option<String>,
    message: String,
}

impl Problem {
    pub(crate) fn new(source: &str, key: String, value: Option<String>, message: String) -> Self {
        Self {
            source: source.to_owned(),
            key,
            value,
            message,
        }
    }

    /// The file read (as given), `"environment"`, or empty for a string.
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Where in it: the key's path, like `policies.openai.base`, or the
    /// environment variable, like `TENACIOUS_POLICY_OPENAI_BASE`; empty for
    /// a problem with the whole document (it cannot be read or parsed).
    #[must_use]
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The value refused, as the document wrote it (a string quoted, a
    /// long one cut), if the problem is with one value.
    #[must_use]
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// What is wrong, and what to write instead.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for part in [Some(&self.source), Some(&self.key), self.value.as_ref()]
            .into_iter()
            .flatten()
        {
            if !part.is_empty() {
                write!(f, "{part}: ")?;
            }
        }
        f.write_str(&self.message)
    }
}

impl ConfigError {
    pub(crate) fn new(problems: Vec<Problem>) -> Self {
        debug_assert!(!problems.is_empty());
        Self { problems }
    }

    /// One problem with the whole of `source` (it cannot be read or parsed).
    pub(crate) fn whole(source: &str, message: String) -> Self {
        Self::new(vec![Problem::new(source, String::new(), None, message)])
    }

    /// Every problem found (at least one), table by table.
    #[must_use]
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        for problem in &self.problems {
            write!(f, "{sep}{problem}")?;
            sep = "\n";
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// No policy of that name: none was loaded, or the loaded set has none
/// so named.
///
/// ```
/// use tenacious::config::Policies;
///
/// let policies = Policies::from_toml_str("[policies.openai]\n[policies.search]\n").unwrap();
/// let missing = policies.require("opnai").unwrap_err();
/// assert_eq!(missing.name(), "opnai");
/// assert_eq!(
///     missing.to_string(),
///     "no policy named \"opnai\"; did you mean \"openai\"? the policies are: openai, search",
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingPolicy {
    pub(crate) name: String,
    /// The loaded set's source, if it has one.
    pub(crate) source: String,
    /// The names there are; `None` when nothing was loaded.
    pub(crate) known: Option<Vec<String>>,
}

impl MissingPolicy {
    /// The name asked for.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for MissingPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = super::value::quoted(&self.name);
        let Some(known) = &self.known else {
            return write!(
                f,
                "no policy named {name}: no policies are loaded; load them at start-up, \
                 with `tenacious::config::load`"
            );
        };
        write!(f, "no policy named {name}")?;
        if !self.source.is_empty() {
            write!(f, " in {}", self.source)?;
        }
        if known.is_empty() {
            return f.write_str(": it holds no policy");
        }
        match super::read::closest(&self.name, known.iter().map(String::as_str)) {
            Some(guess) => write!(f, "; did you mean {}?", super::value::quoted(guess))?,
            None => f.write_str(";")?,
        }
        write!(f, " the policies are: {}", known.join(", "))
    }
}

impl std::error::Error for MissingPolicy {}

/// [`load`](super::load) was called again: the set loaded first stays.
///
/// ```
/// use tenacious::config::{self, Policies};
///
/// let first = config::load(Policies::from_toml_str("[policies.a]\n").unwrap()).unwrap();
/// assert!(first.get("a").is_some());
/// let again = config::load(Policies::from_toml_str("[policies.b]\n").unwrap());
/// assert!(again.unwrap_err().to_string().starts_with("the policies are loaded already"));
/// assert!(config::policy("b").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlreadyLoaded {
    pub(crate) source: String,
}

impl fmt::Display for AlreadyLoaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the policies are loaded already")?;
        if !self.source.is_empty() {
            write!(f, " (from {})", self.source)?;
        }
        f.write_str(
            ": `tenacious::config::load` takes one set, once, at start-up; merge the \
             policies into one file, or keep a second set as a `Policies` of your own",
        )
    }
}

impl std::error::Error for AlreadyLoaded {}
