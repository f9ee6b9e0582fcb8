//! Why a store could not connect or bind.
use std::fmt;

use ::redis as rs;

#[cfg(doc)]
use crate::Store;

/// Why [`Store::connect`] failed: the URL is not one redis-rs can use.
/// (An unreachable server is no error: the guards decide in process until
/// it answers.)
///
/// ```
/// use tenacious::redis::Store;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let error = Store::connect("not a url").await.unwrap_err();
/// assert!(error.to_string().starts_with("cannot use this Redis URL"));
/// # }
/// ```
#[derive(Debug)]
pub struct StoreError(pub(crate) rs::RedisError);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot use this Redis URL: {}", self.0)
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Why [`Store::bind`] refused a guard.
///
/// ```no_run
/// use tenacious::redis::{BindError, Store};
/// use tenacious::RetryBudget;
///
/// static BUDGET: RetryBudget = RetryBudget::new();
///
/// # async fn start(store: &Store) {
/// assert!(matches!(store.bind(&BUDGET, "a{b}"), Err(BindError::BadName(_))));
/// store.bind(&BUDGET, "search").unwrap();
/// assert_eq!(store.bind(&BUDGET, "search"), Err(BindError::AlreadyBound));
///
/// // One name, one set of settings: 10 tokens where 500 are bound.
/// static SMALL: RetryBudget = RetryBudget::with_capacity(10);
/// assert!(matches!(
///     store.bind(&SMALL, "search"),
///     Err(BindError::OtherSettings { kind: "budget", .. })
/// ));
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BindError {
    /// The guard is bound already (to this store or another): a guard is
    /// bound once, at start-up, for the life of the process.
    AlreadyBound,
    /// The name is empty, longer than 200 bytes, or holds a brace (it is
    /// the key's hash tag). A config's guard names are held to the same
    /// rule (`tenacious::config`, feature `config`).
    BadName(String),
    /// A guard of the same kind is bound to this name in this store with
    /// other settings: the guards bound to one name share one state, so
    /// they take one set of settings (see [Settings](crate#settings)).
    /// Bind guards with the same settings, or give them other names.
    OtherSettings {
        /// The name both were bound to.
        name: String,
        /// `budget`, `cooldown`, `throttle` or `breaker`.
        kind: &'static str,
        /// The settings bound to it first, as `capacity 1000`.
        bound: String,
        /// This guard's.
        given: String,
    },
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AlreadyBound => f.write_str("this guard is bound to a store already"),
            Self::BadName(name) => {
                write!(f, "{name:?} {}", tenacious_runtime::store::hooks::REFUSED)
            }
            Self::OtherSettings {
                name,
                kind,
                bound,
                given,
            } => write!(
                f,
                "a {kind} bound to {name:?} in this store has other settings ({bound}) than \
                 this one ({given}): the guards bound to one name share one state, so give \
                 them the same settings or other names"
            ),
        }
    }
}

impl std::error::Error for BindError {}
