//! [`Verdict`]: what the agent loop should do after a round and why, with
//! what repeated itself ([`Repeat`]) and which limit ran out
//! ([`TaskLimit`]).
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use super::Fingerprint;
use tenacious_runtime::ErrorClass;

/// What repeated itself, in a [`Verdict::SwitchDirection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repeat {
    /// The tool kept failing with this class, whatever the arguments.
    SameClass(ErrorClass),
    /// The model kept making the very same call (same tool, same
    /// arguments).
    SameCall(Fingerprint),
    /// The tool's provider kept failing, for this task and others, until
    /// its circuit [`Breaker`](tenacious_runtime::Breaker) opened: the call stopped
    /// with [`StopReason::CircuitOpen`](tenacious_runtime::StopReason::CircuitOpen)
    /// without trying. Switched at the first such failure.
    CircuitOpen,
}

/// Which limit a task ran into, in a [`Verdict::OutOfBudget`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskLimit {
    /// Every allowed round was used.
    Rounds {
        /// The limit.
        max: u32,
    },
    /// The wall-time limit passed.
    Time {
        /// The limit.
        limit: Duration,
        /// Time since the task started.
        elapsed: Duration,
    },
    /// The token limit was reached.
    Tokens {
        /// The limit.
        limit: u64,
        /// Tokens charged so far.
        spent: u64,
    },
    /// The money limit was reached.
    Money {
        /// The limit, in millionths.
        limit_micros: u64,
        /// Money charged so far, in millionths.
        spent_micros: u64,
    },
}

impl fmt::Display for TaskLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Rounds { max } => write!(f, "all {max} rounds used"),
            Self::Time { limit, elapsed } => {
                write!(f, "{elapsed:?} elapsed of a {limit:?} time limit")
            }
            Self::Tokens { limit, spent } => write!(f, "{spent} of {limit} tokens spent"),
            Self::Money {
                limit_micros,
                spent_micros,
            } => write!(
                f,
                "{spent_micros} of {limit_micros} millionths of the money limit spent"
            ),
        }
    }
}

/// What the agent loop should do after a round, and why.
///
/// The fields are the structured reason; `Display` (and
/// [`reason`](Verdict::reason)) writes it for a person or a model.
///
/// ```
/// use tenacious::agent::{TaskGuardConfig, TaskGuard, Verdict};
///
/// let mut guard = TaskGuard::new(TaskGuardConfig::new().max_rounds(3));
/// let verdict = guard.succeeded("search");
/// assert_eq!(verdict, Verdict::Continue { rounds_left: 2 });
/// assert_eq!(verdict.to_string(), "round succeeded; 2 rounds left");
/// assert!(!verdict.is_final());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// The round succeeded: go on.
    Continue {
        /// Rounds the task may still make.
        rounds_left: u32,
    },
    /// The round failed: hand the observation to the model so it can
    /// correct course.
    Reflect {
        /// The tool that failed.
        tool: String,
        /// The failure's class.
        class: ErrorClass,
        /// Failures of this tool with this class in a row (see
        /// [`TaskGuard::failed`](super::TaskGuard::failed)).
        failures: u32,
        /// How long to wait before calling the tool again, when the
        /// failure said (see [`Verdict::retry_in`]).
        retry_in: Option<Duration>,
    },
    /// The same failure keeps repeating: tell the model to change approach
    /// (another tool, other arguments, another plan).
    SwitchDirection {
        /// The tool that keeps failing.
        tool: String,
        /// What repeated.
        repeat: Repeat,
        /// How many times in a row (for [`Repeat::CircuitOpen`], the
        /// failures of this tool with this class, this one included).
        failures: u32,
        /// How long before the failing route may be tried again, when
        /// known (see [`Verdict::retry_in`]).
        retry_in: Option<Duration>,
    },
    /// A `Fatal` error: stop at once, a human must fix it. Final: every
    /// later round gets the same verdict.
    Escalate {
        /// The tool that failed.
        tool: String,
        /// The error's variant ([`Classify::variant`](tenacious_runtime::Classify::variant)).
        variant: &'static str,
        /// The error's advice ([`Classify::hint`](tenacious_runtime::Classify::hint)), if it has any.
        hint: Option<Cow<'static, str>>,
    },
    /// A limit was reached: stop, no further round may start.
    OutOfBudget(TaskLimit),
}

impl Verdict {
    /// Whether the task must stop: `Escalate` or `OutOfBudget`.
    ///
    /// ```
    /// use tenacious::agent::{TaskLimit, Verdict};
    ///
    /// assert!(Verdict::OutOfBudget(TaskLimit::Rounds { max: 10 }).is_final());
    /// assert!(!Verdict::Continue { rounds_left: 1 }.is_final());
    /// ```
    #[must_use]
    pub const fn is_final(&self) -> bool {
        matches!(self, Self::Escalate { .. } | Self::OutOfBudget(_))
    }

    /// How long to wait before calling the failed tool again, if the
    /// failure said: for a `Reflect` or a `SwitchDirection`, the last
    /// error's server hint when the call gave up on a rate limit
    /// (`RateLimited`, [`StopReason::HintTooLong`](tenacious_runtime::StopReason::HintTooLong),
    /// a spent budget), on a shared [`Cooldown`](tenacious_runtime::Cooldown)
    /// ([`StopReason::Cooldown`](tenacious_runtime::StopReason::Cooldown)) or on a
    /// transient error that named a wait (a 503 with `Retry-After`); or the
    /// wait set with [`with_retry_in`](Verdict::with_retry_in). `None`
    /// otherwise, and for the other verdicts.
    ///
    /// An agent loop should not call the tool again before it: tasks that
    /// all come back at once meet the same limit again.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::agent::{TaskGuard, TaskGuardConfig};
    /// use tenacious::{Classify, ErrorClass};
    ///
    /// #[derive(Debug)]
    /// struct TooMany;
    /// impl Classify for TooMany {
    ///     fn classify(&self) -> ErrorClass { ErrorClass::RateLimited }
    ///     fn retry_after(&self) -> Option<Duration> { Some(Duration::from_millis(250)) }
    /// }
    ///
    /// let mut guard = TaskGuard::new(TaskGuardConfig::new());
    /// let verdict = guard.failed("chat", "hello", &TooMany);
    /// assert_eq!(verdict.retry_in(), Some(Duration::from_millis(250)));
    /// ```
    #[must_use]
    pub const fn retry_in(&self) -> Option<Duration> {
        match self {
            Self::Reflect { retry_in, .. } | Self::SwitchDirection { retry_in, .. } => *retry_in,
            _ => None,
        }
    }

    /// The verdict with `wait` as its [`retry_in`](Verdict::retry_in),
    /// for a wait the caller knows better than the error did (a
    /// [`Breaker`](tenacious_runtime::Breaker)'s
    /// [`admits_in`](tenacious_runtime::Breaker::admits_in)); other verdicts are
    /// returned as they are.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::ErrorClass;
    /// use tenacious::agent::Verdict;
    ///
    /// let verdict = Verdict::Reflect {
    ///     tool: "chat".into(),
    ///     class: ErrorClass::Transient,
    ///     failures: 1,
    ///     retry_in: None,
    /// };
    /// let verdict = verdict.with_retry_in(Duration::from_secs(3));
    /// assert_eq!(verdict.retry_in(), Some(Duration::from_secs(3)));
    /// assert_eq!(verdict.to_string(), "`chat` failed (transient, 1 in a row): hand the observation to the model; wait 3s before calling it again");
    /// ```
    #[must_use]
    pub fn with_retry_in(mut self, wait: Duration) -> Self {
        if let Self::Reflect { retry_in, .. } | Self::SwitchDirection { retry_in, .. } = &mut self {
            *retry_in = Some(wait);
        }
        self
    }

    /// The reason, written for a person or a model (the same as `Display`).
    ///
    /// ```
    /// use tenacious::agent::{TaskLimit, Verdict};
    ///
    /// let verdict = Verdict::OutOfBudget(TaskLimit::Tokens { limit: 1000, spent: 1200 });
    /// assert_eq!(verdict.reason(), "out of budget: 1200 of 1000 tokens spent");
    /// ```
    #[must_use]
    pub fn reason(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Continue { rounds_left: 1 } => f.write_str("round succeeded; 1 round left"),
            Self::Continue { rounds_left } => {
                write!(f, "round succeeded; {rounds_left} rounds left")
            }
            Self::Reflect {
                tool,
                class,
                failures,
                retry_in,
            } => {
                write!(
                    f,
                    "`{tool}` failed ({class}, {failures} in a row): hand the observation to the model"
                )?;
                write_wait(f, *retry_in)
            }
            Self::SwitchDirection {
                tool,
                repeat: Repeat::SameClass(class),
                failures,
                retry_in,
            } => {
                write!(
                    f,
                    "`{tool}` failed {failures} times in a row with {class} errors: change approach, use another tool or other arguments"
                )?;
                write_wait(f, *retry_in)
            }
            Self::SwitchDirection {
                tool,
                repeat: Repeat::SameCall(_),
                failures,
                retry_in,
            } => {
                write!(
                    f,
                    "the same `{tool}` call failed {failures} times in a row: change approach, do not repeat it"
                )?;
                write_wait(f, *retry_in)
            }
            Self::SwitchDirection {
                tool,
                repeat: Repeat::CircuitOpen,
                retry_in,
                ..
            } => {
                write!(
                    f,
                    "`{tool}`'s provider is failing and its circuit breaker is open: take another route (another tool or provider), do not call it again now"
                )?;
                write_wait(f, *retry_in)
            }
            Self::Escalate {
                tool,
                variant,
                hint,
            } => {
                write!(
                    f,
                    "`{tool}` failed with a fatal error ({variant}): stop and escalate to a human"
                )?;
                match hint {
                    Some(hint) => write!(f, ": {hint}"),
                    None => Ok(()),
                }
            }
            Self::OutOfBudget(exhausted) => write!(f, "out of budget: {exhausted}"),
        }
    }
}

/// `"; wait 250ms before calling it again"` (rounded up to the
/// millisecond), or nothing.
fn write_wait(f: &mut fmt::Formatter<'_>, retry_in: Option<Duration>) -> fmt::Result {
    match retry_in {
        Some(wait) => write!(
            f,
            "; wait {:?} before calling it again",
            Duration::from_millis(super::observation::ceil_millis(wait))
        ),
        None => Ok(()),
    }
}
