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
//! `breaker`, `cooldown`, `throttle`, `concurrency`. Durations are written as in
//! `#[retry]`: `"200ms"`, `"1.5s"`, `"2m"`, `"1m30s"` (units `h`, `m`, `s`,
//! `ms`, `us`, `ns`). The same document in JSON is
//! `{"policies": {"openai": {"max": 5, …}}, "breakers": {…}}`.
//!
//! A guard is shared by every policy naming it, and by every call of
//! theirs: `cooldown = "openai"` in two policies is one cooldown. Its
//! settings go under `[budgets.NAME]`, `[cooldowns.NAME]`,
//! `[throttles.NAME]`, `[breakers.NAME]` or `[concurrencies.NAME]` (see
//! [`BudgetConfig`], [`CooldownConfig`], [`ThrottleConfig`],
//! [`BreakerConfig`], [`ConcurrencyConfig`]); a name with no table of
//! settings gets the defaults, and a table no policy names is an error (a
//! misspelt name would leave its settings unused).
//!
//! A concurrency limit ([`Concurrency`](tenacious_runtime::Concurrency):
//! at most `limit` attempts in flight at once among every call of every
//! policy naming it) has no defaults: a name is one declared, with its
//! `limit`, and `concurrency = "gpu"` with no `[concurrencies.gpu]` is an
//! error that lists the names there are:
//!
//! ```toml
//! [policies.embed]
//! concurrency = "gpu"
//!
//! [policies.rerank]
//! concurrency = "gpu"       # the same 4 permits as `embed`
//!
//! [concurrencies.gpu]
//! limit = 4                 # needed, at least 1
//! max_wait = "30s"          # the longest wait for a permit; "0s" refuses at once
//! ```
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
//! retry.toml: policies.openai.maxx: unknown key `maxx`; did you mean `max`? the keys are: max, base, cap, jitter, on, max_retry_after, timeout, deadline, first_item, idle, resume, budget, breaker, cooldown, throttle, concurrency, nested
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
//! `KIND` is `POLICY`, `BUDGET`, `COOLDOWN`, `THROTTLE`, `BREAKER` or
//! `CONCURRENCY`:
//!
//! ```sh
//! TENACIOUS_POLICY_OPENAI_MAX=5
//! TENACIOUS_POLICY_OPENAI_MAX_RETRY_AFTER=60s
//! TENACIOUS_POLICY_OPENAI_ON=Transient,RateLimited
//! TENACIOUS_POLICY_OPENAI_BREAKER=openai
//! TENACIOUS_BREAKER_OPENAI_OPEN_FOR=30s
//! TENACIOUS_POLICY_EMBED_CONCURRENCY=gpu
//! TENACIOUS_CONCURRENCY_GPU_LIMIT=4
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
//! # Routes
//!
//! A set declares [routes](tenacious_runtime::route) too: when one model,
//! deployment or provider cannot serve a request, the next one does. Each
//! is under `[routes.NAME]`, and [`Policies::route`] builds it (or
//! [`route`], for the loaded set) into a `Route<String>`, each target's
//! `data` the string written:
//!
//! ```toml
//! [routes.chat]
//! deadline = "2m"                  # over the whole route
//! budget = "fleet"                 # the set's shared budget, or the route's own: { capacity = 200 }
//! on_class = { Fatal = "stop" }    # the rules: "next", "larger" or "stop"
//! on_stop = { Exhausted = "next" }
//! on_silence = "next"
//! targets = [
//!     { name = "gpt-4o", data = "https://api.openai.com/v1", policy = "openai", breaker = "openai", context = 128000, silence = "30s", learn_silence = "1s" },
//!     { name = "claude-sonnet", data = "https://api.anthropic.com/v1", policy = { max = 2 }, breaker = { open_for = "30s" }, context = 200000 },
//! ]
//! ```
//!
//! A route's keys: `targets`, tried in order (at least one, at most
//! [`MAX_TARGETS`](tenacious_runtime::route::MAX_TARGETS), each name
//! once; `[[routes.chat.targets]]` tables are the same list), `deadline`,
//! `budget`, and its [rules](tenacious_runtime::route::Rules), each
//! `"next"`, `"larger"` or `"stop"`: `on_class`, a table of
//! [`ErrorClass`](tenacious_runtime::ErrorClass) names (`Transient`,
//! `RateLimited`, `Invalid`, `Fatal`); `on_stop`, a table of
//! [`StopReason`](tenacious_runtime::StopReason) names (`Exhausted`,
//! `NotRetryable`, `HintTooLong`, `CircuitOpen`, …); `on_silence`.
//!
//! A target's keys: `name` and `data` (both needed: the model or
//! deployment, and a base URL or a model id), `policy` (a policy of the
//! set by name, or a policy's keys inline, `policy = { max = 2 }`; the
//! defaults without it), `breaker`, `cooldown`, `throttle`, `concurrency`
//! (by name only: a concurrency limit of the set), `context` (its window
//! in tokens), `silence` and `learn_silence` (durations, not zero).
//!
//! A guard or budget written by name is the set's shared one, as a
//! policy's is: declared under `[breakers.NAME]` (…) or named by a policy,
//! one for every policy and target naming it, and found by
//! [`Policies::breaker`] (…); a name the set has not is an error. Written
//! inline (`breaker = { open_for = "30s" }`, `{}` for the defaults), it
//! is the target's own, which `tenacious::route` keeps by the target's
//! name, process-wide: every route with a target of that name shares it,
//! and two targets of one name must give the same settings. A route's
//! own budget is kept by the route's name. A policy named by a target
//! brings its own shared guards, unless the target gives one of that
//! kind. Routes are read from TOML and JSON, not from the environment.
//!
//! ```
//! use std::time::Duration;
//! use tenacious::config::Policies;
//!
//! let set = Policies::from_toml_str(
//!     r#"
//!     [policies.openai]
//!     max = 3
//!     [breakers.openai]
//!     open_for = "30s"
//!
//!     [routes.chat]
//!     deadline = "2m"
//!     on_class = { Fatal = "stop" }
//!     targets = [
//!         { name = "gpt-4o", data = "https://api.openai.com/v1", policy = "openai", breaker = "openai" },
//!         { name = "claude-sonnet", data = "https://api.anthropic.com/v1", breaker = { open_for = "10s" } },
//!     ]
//!     "#,
//! )?;
//! let route = set.route("chat")?;
//! let [gpt, claude] = route.targets() else { unreachable!() };
//! assert_eq!(gpt.data(), "https://api.openai.com/v1");
//! // By name: the set's breaker. Inline: the target's own.
//! assert!(std::ptr::eq(gpt.get_policy().get_breaker().unwrap(), set.breaker("openai").unwrap()));
//! assert_eq!(claude.get_breaker().unwrap().get_open_for(), Duration::from_secs(10));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Each mistake is a [`Problem`] naming the route, the target's place and
//! the key:
//!
//! ```text
//! retry.toml: routes.chat.targets[1].silence: "30 s": invalid duration: unknown unit ` s`; write a number and a unit, like "200ms", "1.5s", "2m" or "1m30s" (units: h, m, s, ms, us, ns)
//! retry.toml: routes.chat.targets[0].breaker: "opnai": no breaker named "opnai": a name here is a shared breaker of the set, declared under `[breakers.NAME]` or named by a policy; did you mean "openai"? the breakers are: openai
//! ```
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

use tenacious_runtime::Policy;
use tenacious_runtime::registry;

mod document;
mod duration;
mod env;
mod error;
mod guards;
mod policy;
mod read;
mod route;
mod set;
mod settings;
mod value;

pub use error::{AlreadyLoaded, ConfigError, MissingPolicy, Problem};
pub use guards::{BreakerConfig, BudgetConfig, ConcurrencyConfig, CooldownConfig, ThrottleConfig};
pub use policy::{PolicyConfig, deserialize_policy};
pub use route::RouteConfigError;
pub use set::Policies;

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
            source: loaded
                .map(|set| set.source().to_owned())
                .unwrap_or_default(),
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

/// The route named `name` of the set [`load`] keeps, built
/// ([`Policies::route`]; see [Routes](crate#routes)).
///
/// ```
/// use tenacious::config;
///
/// // Nothing loaded in this program.
/// let missing = config::route("chat").unwrap_err();
/// assert!(missing.to_string().starts_with("no route named \"chat\": no policies are loaded"));
/// ```
///
/// # Errors
///
/// A [`RouteConfigError`]: nothing was loaded, the loaded set has no route
/// of that name, or the route cannot be built.
pub fn route(name: &str) -> Result<tenacious_runtime::route::Route<String>, RouteConfigError> {
    match loaded() {
        Some(set) => set.route(name),
        None => Err(RouteConfigError::nothing_loaded(name)),
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
