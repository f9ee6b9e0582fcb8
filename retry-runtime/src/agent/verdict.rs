//! [`Verdict`]: what the agent loop should do after a round and why, with
//! what repeated itself ([`Repeat`]) and which limit ran out
//! ([`TaskLimit`]).
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use super::Fingerprint;
use crate::ErrorClass;

/// What repeated itself, in a [`Verdict::SwitchDirection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repeat {
    /// The tool kept failing with this class, whatever the arguments.
    SameClass(ErrorClass),
    /// The model kept making the very same call (same tool, same
    /// arguments).
    SameCall(Fingerprint),
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
    },
    /// The same failure keeps repeating: tell the model to change approach
    /// (another tool, other arguments, another plan).
    SwitchDirection {
        /// The tool that keeps failing.
        tool: String,
        /// What repeated.
        repeat: Repeat,
        /// How many times in a row.
        failures: u32,
    },
    /// A `Fatal` error: stop at once, a human must fix it. Final: every
    /// later round gets the same verdict.
    Escalate {
        /// The tool that failed.
        tool: String,
        /// The error's variant ([`Classify::variant`](crate::Classify::variant)).
        variant: &'static str,
        /// The error's advice ([`Classify::hint`](crate::Classify::hint)), if it has any.
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
            } => write!(
                f,
                "`{tool}` failed ({class}, {failures} in a row): hand the observation to the model"
            ),
            Self::SwitchDirection {
                tool,
                repeat: Repeat::SameClass(class),
                failures,
            } => write!(
                f,
                "`{tool}` failed {failures} times in a row with {class} errors: change approach, use another tool or other arguments"
            ),
            Self::SwitchDirection {
                tool,
                repeat: Repeat::SameCall(_),
                failures,
            } => write!(
                f,
                "the same `{tool}` call failed {failures} times in a row: change approach, do not repeat it"
            ),
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
