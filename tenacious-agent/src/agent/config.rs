//! [`TaskGuardConfig`]: the limits a [`TaskGuard`](super::TaskGuard) enforces.
use std::time::Duration;

/// The limits a [`TaskGuard`](super::TaskGuard) enforces.
///
/// | setting | builder | default |
/// |---|---|---|
/// | rounds (tool calls) per task | [`max_rounds`](TaskGuardConfig::max_rounds) | 10 |
/// | failures in a row before a direction switch | [`switch_after`](TaskGuardConfig::switch_after) | 3 |
/// | wall time per task | [`max_time`](TaskGuardConfig::max_time) | unlimited |
/// | tokens per task | [`max_tokens`](TaskGuardConfig::max_tokens) | unlimited |
/// | money per task, in millionths | [`max_money_micros`](TaskGuardConfig::max_money_micros) | unlimited |
///
/// ```
/// use std::time::Duration;
/// use tenacious::agent::TaskGuardConfig;
///
/// const GUARD: TaskGuardConfig = TaskGuardConfig::new()
///     .max_rounds(20)
///     .switch_after(2)
///     .max_time(Duration::from_secs(120))
///     .max_tokens(50_000);
/// assert_eq!(GUARD.get_max_rounds(), 20);
/// assert_eq!(TaskGuardConfig::default(), TaskGuardConfig::DEFAULT);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TaskGuardConfig {
    max_rounds: u32,
    switch_after: u32,
    max_time: Option<Duration>,
    max_tokens: Option<u64>,
    max_money_micros: Option<u64>,
}

impl TaskGuardConfig {
    /// The defaults: 10 rounds, a direction switch after 3 failures in a
    /// row, no time or cost limit.
    pub const DEFAULT: Self = Self {
        max_rounds: 10,
        switch_after: 3,
        max_time: None,
        max_tokens: None,
        max_money_micros: None,
    };

    /// The defaults, [`TaskGuardConfig::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// Rounds (tool calls) a task may make. Default: 10. `0` is taken as 1.
    ///
    /// ```
    /// use tenacious::agent::TaskGuardConfig;
    ///
    /// assert_eq!(TaskGuardConfig::new().max_rounds(0).get_max_rounds(), 1);
    /// ```
    #[must_use]
    pub const fn max_rounds(self, rounds: u32) -> Self {
        Self {
            max_rounds: if rounds == 0 { 1 } else { rounds },
            ..self
        }
    }

    /// Failures in a row — of one tool with one class, or of one identical
    /// call — after which the model is told to change approach. Default: 3.
    /// `0` is taken as 1 (switch after every failure).
    ///
    /// ```
    /// use tenacious::agent::TaskGuardConfig;
    ///
    /// assert_eq!(TaskGuardConfig::new().switch_after(5).get_switch_after(), 5);
    /// ```
    #[must_use]
    pub const fn switch_after(self, failures: u32) -> Self {
        Self {
            switch_after: if failures == 0 { 1 } else { failures },
            ..self
        }
    }

    /// Wall time a task may take, from [`TaskGuard::new`](super::TaskGuard::new). Default:
    /// unlimited. Measured on tokio's clock, so a paused test clock
    /// controls it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::agent::TaskGuardConfig;
    ///
    /// let config = TaskGuardConfig::new().max_time(Duration::from_secs(60));
    /// assert_eq!(config.get_max_time(), Some(Duration::from_secs(60)));
    /// ```
    #[must_use]
    pub const fn max_time(self, limit: Duration) -> Self {
        Self {
            max_time: Some(limit),
            ..self
        }
    }

    /// Tokens a task may spend, as charged with [`TaskGuard::charge`](super::TaskGuard::charge).
    /// Default: unlimited.
    ///
    /// ```
    /// use tenacious::agent::TaskGuardConfig;
    ///
    /// assert_eq!(TaskGuardConfig::new().max_tokens(8_000).get_max_tokens(), Some(8_000));
    /// ```
    #[must_use]
    pub const fn max_tokens(self, limit: u64) -> Self {
        Self {
            max_tokens: Some(limit),
            ..self
        }
    }

    /// Money a task may spend, in millionths of the currency unit, as
    /// charged with [`TaskGuard::charge`](super::TaskGuard::charge). Default: unlimited.
    ///
    /// ```
    /// use tenacious::agent::TaskGuardConfig;
    ///
    /// // 5 cents, in micro-dollars
    /// assert_eq!(TaskGuardConfig::new().max_money_micros(50_000).get_max_money_micros(), Some(50_000));
    /// ```
    #[must_use]
    pub const fn max_money_micros(self, limit: u64) -> Self {
        Self {
            max_money_micros: Some(limit),
            ..self
        }
    }

    /// The rounds limit.
    #[must_use]
    pub const fn get_max_rounds(&self) -> u32 {
        self.max_rounds
    }

    /// The failures in a row that trigger a direction switch.
    #[must_use]
    pub const fn get_switch_after(&self) -> u32 {
        self.switch_after
    }

    /// The wall-time limit, if any.
    #[must_use]
    pub const fn get_max_time(&self) -> Option<Duration> {
        self.max_time
    }

    /// The token limit, if any.
    #[must_use]
    pub const fn get_max_tokens(&self) -> Option<u64> {
        self.max_tokens
    }

    /// The money limit in millionths, if any.
    #[must_use]
    pub const fn get_max_money_micros(&self) -> Option<u64> {
        self.max_money_micros
    }
}

impl Default for TaskGuardConfig {
    /// [`TaskGuardConfig::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}
