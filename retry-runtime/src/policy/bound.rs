//! `#[retry(policy = "name")]`: a fn's policy found by name, at run time,
//! in the set registered here (by `tenacious::config::load`, feature
//! `config`).
//!
//! Each such fn has one [`BoundPolicy`], a `static` of its expansion: the
//! name, the policy the fn runs while the name is not loaded (the
//! defaults with the attribute's keys, built at compile time), and the
//! same keys as a fn applied onto the loaded policy. The first call that
//! finds the name builds the bound policy once and keeps it, so every
//! later call costs one atomic load. A call that does not find it runs the
//! fallback, keeps nothing (a later `load` is picked up by the next call),
//! and is reported: listed by `config::missing`, and with feature
//! `tracing` a `WARN` event, once per fn and cause.
//!
//! The registry the names are looked up in lives here too, always
//! compiled: the set of named policies, which the config crate
//! (`tenacious-config`) parses and registers (`register`), and the fns
//! that asked for a name it lacks (`missing`). The config crate calls into
//! it through the hidden `registry` module, so binding a fn by name needs
//! no parsing. Without the facade's feature `config`, nothing registers a
//! set, and a `policy = "name"` is refused by [`policy_name`] (one error);
//! with it, the facade's `__private::policy_name` is the config crate's.
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::Policy;

/// Implemented by nothing: what refuses `#[retry(policy = "name")]`
/// without the facade's feature `config` (with it, the facade's
/// `__private::policy_name` is `tenacious-config`'s, without this bound).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`#[retry(policy = \"...\")]` looks the policy up in the set `tenacious::config::load` keeps, which needs `tenacious`'s feature `config`",
    label = "a policy named in a config",
    note = "enable it in Cargo.toml: `tenacious = {{ version = \"...\", features = [\"config\"] }}`; or give the path of a `const Policy` instead: `policy = OPENAI`"
)]
pub trait ConfigFeature {}

/// The name of a `policy = "name"`, through the check that feature
/// `config` is on (the expansion spans this call on the literal): without
/// it, an error.
#[doc(hidden)]
#[must_use]
pub const fn policy_name<T: ConfigFeature + ?Sized>(name: &'static T) -> &'static T {
    name
}

/// The policy of one `#[retry(policy = "name")]` fn: looked up in the
/// loaded set on its first call after `config::load`, then kept (see the
/// module's docs in the source, `bound.rs`).
#[doc(hidden)]
pub struct BoundPolicy {
    name: &'static str,
    /// The fn's path, as events and statistics name it.
    site: &'static str,
    /// The defaults with the attribute's keys and statistics record: what
    /// a call runs while the name is not loaded.
    fallback: &'static Policy,
    /// The attribute's keys and statistics record, applied onto the
    /// loaded policy.
    apply: fn(Policy) -> Policy,
    bound: OnceLock<Policy>,
    /// `LISTED`, `WARNED_UNLOADED`, `WARNED_MISSING`.
    reported: AtomicU8,
}

/// The fn is in the list `config::missing` reads.
const LISTED: u8 = 1;
/// The fn warned that it was called before any set was loaded.
const WARNED_UNLOADED: u8 = 2;
/// The fn warned that the loaded set has no policy of its name.
const WARNED_MISSING: u8 = 4;

impl BoundPolicy {
    /// The policy named `name` for the fn at `site`, `fallback` until it
    /// is loaded, with `apply` applied onto the loaded one.
    #[must_use]
    pub const fn new(
        name: &'static str,
        site: &'static str,
        fallback: &'static Policy,
        apply: fn(Policy) -> Policy,
    ) -> Self {
        Self {
            name,
            site,
            fallback,
            apply,
            bound: OnceLock::new(),
            reported: AtomicU8::new(0),
        }
    }

    /// The policy this call runs: the bound one once built (one atomic
    /// load), else [`bind`](Self::bind)'s answer.
    #[inline]
    pub fn policy(&'static self) -> &'static Policy {
        match self.bound.get() {
            Some(policy) => policy,
            None => self.bind(),
        }
    }

    /// The name the fn asks for.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The loaded policy of the name with the attribute's keys, built and
    /// kept the first time it is found; the fallback, reported, while it
    /// is not.
    #[cold]
    #[inline(never)]
    fn bind(&'static self) -> &'static Policy {
        if let Some(loaded) = policy(self.name) {
            return self.bound.get_or_init(|| (self.apply)(*loaded));
        }
        self.report();
        self.fallback
    }

    /// Lists the fn for `config::missing` and, with feature `tracing`,
    /// warns: once while nothing is loaded, once when the loaded set lacks
    /// the name.
    fn report(&'static self) {
        let loaded = registered();
        let warned = if loaded.is_some() {
            WARNED_MISSING
        } else {
            WARNED_UNLOADED
        };
        let before = self.reported.fetch_or(LISTED | warned, Ordering::Relaxed);
        if before & LISTED == 0 {
            listed::add(self);
        }
        if before & warned == 0 {
            self.warn(loaded);
        }
    }

    #[cfg(feature = "tracing")]
    fn warn(&self, loaded: Option<&dyn PolicySet>) {
        match loaded {
            None => ::tracing::warn!(
                target: "tenacious",
                policy = self.name,
                r#fn = self.site,
                "no policies are loaded: running the fn's fallback (the defaults and the \
                 keys of its #[retry]) until tenacious::config::load is called",
            ),
            Some(set) => ::tracing::warn!(
                target: "tenacious",
                policy = self.name,
                r#fn = self.site,
                loaded = set.names().join(", "),
                source = set.source(),
                "the loaded policies have none of this name: running the fn's fallback \
                 (the defaults and the keys of its #[retry])",
            ),
        }
    }

    #[cfg(not(feature = "tracing"))]
    fn warn(&self, _: Option<&dyn PolicySet>) {
        let _ = self.site;
    }
}

impl std::fmt::Debug for BoundPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundPolicy")
            .field("name", &self.name)
            .field("site", &self.site)
            .field("bound", &self.bound.get().is_some())
            .finish_non_exhaustive()
    }
}

/// A set of named policies as the registry keeps it: what the config
/// crate parses (its `Policies`) and [`register`]s.
pub trait PolicySet: std::any::Any + Send + Sync {
    /// The policy named `name`, if the set has one.
    fn policy(&self, name: &str) -> Option<&Policy>;

    /// The names of its policies, in order: what the warning of a fn
    /// whose name it lacks lists (feature `tracing`).
    fn names(&self) -> Vec<&str>;

    /// Where it was read from, for the same warning.
    fn source(&self) -> &str;
}

/// The set [`register`] keeps.
static REGISTERED: OnceLock<Box<dyn PolicySet>> = OnceLock::new();

/// Keeps `set` for the whole process, where every fn bound by name finds
/// its policy. Once: a second set is handed back, and the set registered
/// first stays (a policy handed out is never taken back).
pub fn register(set: Box<dyn PolicySet>) -> Result<(), Box<dyn PolicySet>> {
    REGISTERED.set(set)
}

/// The set [`register`] keeps, if one was registered.
pub fn registered() -> Option<&'static dyn PolicySet> {
    REGISTERED.get().map(|set| &**set)
}

/// The registered policy named `name`: `None` if there is none, or if no
/// set was registered.
pub fn policy(name: &str) -> Option<&'static Policy> {
    registered()?.policy(name)
}

/// The names of the fns that asked for a name they did not find and that
/// the registered set (if any) still lacks, sorted, each once.
pub fn missing() -> Vec<&'static str> {
    listed::names()
}

/// The fns that asked for a name they did not find, for [`missing`].
mod listed {
    use std::sync::{Mutex, PoisonError};

    use super::BoundPolicy;

    static LISTED: Mutex<Vec<&'static BoundPolicy>> = Mutex::new(Vec::new());

    pub(super) fn add(site: &'static BoundPolicy) {
        LISTED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(site);
    }

    /// The names of the listed fns that the registered set (if any) still
    /// lacks, sorted, each once.
    pub(super) fn names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = LISTED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|site| site.name)
            .filter(|name| super::policy(name).is_none())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}
