//! A store's settings.
use std::time::Duration;

#[cfg(doc)]
use crate::Store;

/// The settings of a [`Store`].
///
/// ```
/// use std::time::Duration;
/// use tenacious::redis::StoreConfig;
///
/// let config = StoreConfig::new()
///     .prefix("agents")
///     .timeout(Duration::from_millis(20))
///     .refresh(Duration::from_millis(50));
/// assert_eq!(config.get_timeout(), Duration::from_millis(20));
/// assert_eq!(StoreConfig::new().get_prefix(), "tenacious");
/// ```
#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub(crate) prefix: String,
    pub(crate) timeout: Duration,
    pub(crate) refresh: Duration,
}

impl StoreConfig {
    /// The defaults: prefix `tenacious`, [`TIMEOUT`](StoreConfig::TIMEOUT),
    /// [`REFRESH`](StoreConfig::REFRESH).
    #[must_use]
    pub fn new() -> Self {
        Self {
            prefix: "tenacious".to_owned(),
            timeout: Self::TIMEOUT,
            refresh: Self::REFRESH,
        }
    }

    /// The longest a decision waits for Redis: 50 ms.
    pub const TIMEOUT: Duration = Duration::from_millis(50);
    /// How often the mirrors are read and batches sent: 100 ms.
    pub const REFRESH: Duration = Duration::from_millis(100);

    /// The first part of every key. Default `tenacious`.
    #[must_use]
    pub fn prefix(self, prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
            ..self
        }
    }

    /// The longest a decision (or a connection attempt) waits for Redis
    /// before the guard decides in process. Default
    /// [`TIMEOUT`](StoreConfig::TIMEOUT); at least 1 ms.
    #[must_use]
    pub fn timeout(self, timeout: Duration) -> Self {
        Self {
            timeout: timeout.max(Duration::from_millis(1)),
            ..self
        }
    }

    /// How often each guard's mirror is read from Redis and its batch sent
    /// (a budget's refunds, a breaker's outcomes), and how often a store
    /// that is down tries Redis again. Default
    /// [`REFRESH`](StoreConfig::REFRESH); at least 1 ms.
    #[must_use]
    pub fn refresh(self, refresh: Duration) -> Self {
        Self {
            refresh: refresh.max(Duration::from_millis(1)),
            ..self
        }
    }

    /// The prefix set by [`prefix`](StoreConfig::prefix).
    #[must_use]
    pub fn get_prefix(&self) -> &str {
        &self.prefix
    }

    /// The timeout set by [`timeout`](StoreConfig::timeout).
    #[must_use]
    pub const fn get_timeout(&self) -> Duration {
        self.timeout
    }

    /// The period set by [`refresh`](StoreConfig::refresh).
    #[must_use]
    pub const fn get_refresh(&self) -> Duration {
        self.refresh
    }
}

impl Default for StoreConfig {
    /// [`StoreConfig::new`].
    fn default() -> Self {
        Self::new()
    }
}
