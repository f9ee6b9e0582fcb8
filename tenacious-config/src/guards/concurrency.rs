//! A [`Concurrency`] limit's settings as a config gives them: its `limit`,
//! which it needs (a limit has no default), and its `max_wait`.
use std::num::NonZeroU32;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use tenacious_runtime::Concurrency;

use super::guard_table;
use crate::document::Document;
use crate::read::{At, CONCURRENCIES, Reader, count};
use crate::set::Policies;
use crate::settings::duration;
use crate::value::Value;

/// A [`Concurrency`] limit's settings, under `[concurrencies.NAME]` in a
/// set of policies, or deserialized on its own.
///
/// | key | value | default |
/// |---|---|---|
/// | `limit` | the most attempts in flight at once, a whole number ≥ 1 | none: needed, a limit has no default |
/// | `max_wait` | a duration: the longest a call waits for a permit (`"0s"`: refused at once when none is free) | the policy's `max_retry_after`, 120 s unless set |
///
/// Unlike the other guards, a concurrency limit has no default settings:
/// a set's policy can name only one declared under `[concurrencies.NAME]`,
/// with its `limit`.
///
/// ```
/// use std::time::Duration;
/// use tenacious::config::ConcurrencyConfig;
///
/// let config: ConcurrencyConfig =
///     serde_json::from_str(r#"{ "limit": 4, "max_wait": "30s" }"#).unwrap();
/// let gpu = config.build();
/// assert_eq!(gpu.limit(), 4);
/// assert_eq!(gpu.get_max_wait(), Some(Duration::from_secs(30)));
///
/// let bad = serde_json::from_str::<ConcurrencyConfig>(r#"{ "max_wait": "1s" }"#).unwrap_err();
/// assert!(bad.to_string().starts_with("a concurrency limit needs its `limit`"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConcurrencyConfig {
    pub(crate) limit: NonZeroU32,
    pub(crate) max_wait: Option<u64>,
}

impl ConcurrencyConfig {
    /// A new limit, no attempt in flight, with these settings (see
    /// [`BudgetConfig::build`](super::BudgetConfig::build) on making it
    /// `'static`; name it with [`Concurrency::name`]).
    #[must_use]
    pub fn build(self) -> Concurrency {
        let concurrency = Concurrency::new(self.limit.get());
        match self.max_wait {
            Some(wait) => concurrency.max_wait(Duration::from_nanos(wait)),
            None => concurrency,
        }
    }

    /// The most attempts in flight at once.
    #[must_use]
    pub const fn get_limit(&self) -> u32 {
        self.limit.get()
    }

    /// The longest wait for a permit, if set.
    #[must_use]
    pub fn get_max_wait(&self) -> Option<Duration> {
        self.max_wait.map(Duration::from_nanos)
    }
}

deserialize_through!(ConcurrencyConfig, concurrency);

pub(crate) fn concurrency(r: &mut Reader<'_>, at: &At, value: &Value) -> ConcurrencyConfig {
    // Without a `limit` read, the problem says so and the config is never
    // built: the placeholder stands for nothing.
    let mut config = ConcurrencyConfig {
        limit: NonZeroU32::MIN,
        max_wait: None,
    };
    let mut limit_given = false;
    guard_table(r, at, value, &CONCURRENCIES, |r, at, key, value| {
        match key {
            "limit" => {
                limit_given = true;
                let form = "`limit` takes the most attempts in flight at once, a whole number \
                            at least 1: `limit = 4`";
                let limit = count(
                    r,
                    at,
                    value,
                    1,
                    form,
                    "a `limit` below 1 admits no attempt, so every call naming it would be \
                     refused; give the most attempts in flight at once, at least 1, like \
                     `limit = 4`",
                    "`limit` must fit a `u32`: write a number of attempts up to 4294967295",
                );
                if let Some(limit) = limit.and_then(NonZeroU32::new) {
                    config.limit = limit;
                }
            }
            "max_wait" => config.max_wait = duration(r, at, key, value),
            _ => return false,
        }
        true
    });
    if !limit_given && matches!(value, Value::Table(_)) {
        r.problem(
            at,
            None,
            "a concurrency limit needs its `limit`, the most attempts in flight at once: \
             `limit = 4` (it has no default)",
        );
    }
    config
}

impl Policies {
    /// The shared concurrency limit `name` of `document`, made once and
    /// named after it; `None` if `document` does not declare it (a checked
    /// one does).
    pub(crate) fn concurrency_named(
        &mut self,
        document: &Document,
        name: &str,
    ) -> Option<&'static Concurrency> {
        if let Some(made) = self.concurrencies.get(name) {
            return Some(made);
        }
        let (_, config) = document.concurrencies.iter().find(|(n, _)| n == name)?;
        let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
        let made: &'static Concurrency = Box::leak(Box::new(config.build().name(leaked)));
        self.concurrencies.insert(name.to_owned(), made);
        Some(made)
    }
}
