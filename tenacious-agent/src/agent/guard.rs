//! The task guard: a verdict after every round of the Thought → Action →
//! Observation loop.
use std::collections::HashMap;
use std::hash::Hash;
use std::time::Duration;

use tokio::time::Instant;

use super::{Cost, Fingerprint, Repeat, TaskGuardConfig, TaskLimit, Verdict};
use tenacious_runtime::{Classify, ErrorClass, Failure, StopReason};

/// A run of failures the guard counts; `tool` is the first field of both so
/// a success can clear every run of its tool.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Run {
    Class(String, ErrorClass),
    Call(String, Fingerprint),
}

impl Run {
    fn tool(&self) -> &str {
        match self {
            Self::Class(tool, _) | Self::Call(tool, _) => tool,
        }
    }
}

/// Watches one task's Thought → Action → Observation loop and gives a
/// [`Verdict`] after every round.
///
/// Report each round's outcome with [`succeeded`](TaskGuard::succeeded),
/// [`failed`](TaskGuard::failed) or [`record`](TaskGuard::record) — or,
/// for a call that returned a [`Failure`], [`failed_call`](TaskGuard::failed_call)
/// or [`record_call`](TaskGuard::record_call), which also read why it
/// stopped — and charge what it cost with [`charge`](TaskGuard::charge).
/// The verdict of a failed round is, first match wins:
///
/// 1. `Escalate` if the error is `Fatal` (and for every round after);
/// 2. `OutOfBudget` if the rounds, time, tokens or money are used up;
/// 3. `SwitchDirection` with [`Repeat::CircuitOpen`] if the call stopped
///    because its provider's circuit [`Breaker`](tenacious_runtime::Breaker) is open
///    ([`StopReason::CircuitOpen`], seen by `failed_call`): the provider
///    is failing for everyone, so the model should take another route at
///    once;
/// 4. `SwitchDirection` if the same call (tool and [`Fingerprint`]) or the
///    same tool with the same class has now failed
///    [`switch_after`](TaskGuardConfig::switch_after) times with no success of
///    that tool in between; the count for that tool then starts over;
/// 5. `Reflect` otherwise.
///
/// A `Reflect` or `SwitchDirection` carries how long to wait before calling
/// the tool again when the failure said ([`Verdict::retry_in`]): the
/// server's hint of a call that gave up on a rate limit or a shared
/// cooldown.
///
/// Arguments given as a `serde_json::Value` (which is not `Hash`) are
/// fingerprinted through [`CanonicalJson`](super::CanonicalJson), key order
/// aside.
///
/// A successful round gets `OutOfBudget` or `Continue`, and clears that
/// tool's failure counts. Failures of *other* tools do not clear them, so a
/// model flip-flopping between two failing approaches is caught too.
///
/// Time is read from tokio's clock ([`tokio::time::Instant`]), which tests
/// pause and advance; the guard itself never sleeps.
///
/// ```
/// use tenacious::agent::{TaskGuardConfig, Repeat, TaskGuard, Verdict};
/// use tenacious::ErrorClass;
///
/// let timeout = std::io::Error::from(std::io::ErrorKind::TimedOut);
/// let mut guard = TaskGuard::new(TaskGuardConfig::new());
/// let args = r#"{"query":"weather in Paris"}"#;
///
/// assert!(matches!(guard.failed("search", args, &timeout), Verdict::Reflect { failures: 1, .. }));
/// assert!(matches!(guard.failed("search", args, &timeout), Verdict::Reflect { failures: 2, .. }));
/// // The third identical failure: tell the model to change approach.
/// let verdict = guard.failed("search", args, &timeout);
/// assert!(matches!(verdict, Verdict::SwitchDirection { repeat: Repeat::SameCall(_), failures: 3, .. }));
/// assert_eq!(guard.switches(), 1);
/// assert_eq!(guard.rounds(), 3);
/// ```
#[derive(Debug)]
pub struct TaskGuard {
    config: TaskGuardConfig,
    started: Instant,
    rounds: u32,
    spent: Cost,
    switches: u32,
    escalated: Option<Verdict>,
    runs: HashMap<Run, u32>,
}

impl TaskGuard {
    /// Starts guarding a task: the time limit counts from now.
    ///
    /// ```
    /// use tenacious::agent::{Cost, TaskGuardConfig, TaskGuard};
    ///
    /// let guard = TaskGuard::new(TaskGuardConfig::new());
    /// assert_eq!(guard.rounds(), 0);
    /// assert_eq!(guard.spent(), Cost::ZERO);
    /// assert_eq!(guard.limit_reached(), None);
    /// ```
    #[must_use]
    pub fn new(config: TaskGuardConfig) -> Self {
        Self {
            config,
            started: Instant::now(),
            rounds: 0,
            spent: Cost::ZERO,
            switches: 0,
            escalated: None,
            runs: HashMap::new(),
        }
    }

    /// Adds what a round (or a model call between rounds) cost. Reaching a
    /// limit shows in the next verdict and in [`limit_reached`](TaskGuard::limit_reached).
    ///
    /// ```
    /// use tenacious::agent::{Cost, TaskLimit, TaskGuardConfig, TaskGuard, Verdict};
    ///
    /// let mut guard = TaskGuard::new(TaskGuardConfig::new().max_tokens(1_000));
    /// guard.charge(Cost::tokens(600));
    /// assert!(matches!(guard.succeeded("plan"), Verdict::Continue { .. }));
    /// guard.charge(Cost::tokens(600));
    /// assert_eq!(
    ///     guard.succeeded("plan"),
    ///     Verdict::OutOfBudget(TaskLimit::Tokens { limit: 1_000, spent: 1_200 })
    /// );
    /// ```
    pub fn charge(&mut self, cost: Cost) {
        self.spent += cost;
    }

    /// Records a successful round of `tool`.
    ///
    /// ```
    /// use tenacious::agent::{TaskLimit, TaskGuardConfig, TaskGuard, Verdict};
    ///
    /// let mut guard = TaskGuard::new(TaskGuardConfig::new().max_rounds(2));
    /// assert_eq!(guard.succeeded("search"), Verdict::Continue { rounds_left: 1 });
    /// assert_eq!(guard.succeeded("fetch"), Verdict::OutOfBudget(TaskLimit::Rounds { max: 2 }));
    /// ```
    pub fn succeeded(&mut self, tool: &str) -> Verdict {
        self.rounds = self.rounds.saturating_add(1);
        if let Some(escalated) = &self.escalated {
            return escalated.clone();
        }
        self.runs.retain(|run, _| run.tool() != tool);
        match self.limit_reached() {
            Some(exhausted) => Verdict::OutOfBudget(exhausted),
            None => Verdict::Continue {
                rounds_left: self.config.get_max_rounds().saturating_sub(self.rounds),
            },
        }
    }

    /// Records a failed round: `tool` called with `args` (anything `Hash`,
    /// see [`Fingerprint`]) failed with `error`, after whatever retries the
    /// call layer made. The verdict follows the order on [`TaskGuard`].
    ///
    /// ```
    /// use tenacious::agent::{TaskGuardConfig, TaskGuard, Verdict};
    ///
    /// let mut guard = TaskGuard::new(TaskGuardConfig::new());
    /// let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
    /// let verdict = guard.failed("deploy", "prod", &denied);
    /// assert!(matches!(verdict, Verdict::Escalate { variant: "PermissionDenied", .. }));
    /// assert!(verdict.is_final());
    /// // Final: a later success does not undo it.
    /// assert_eq!(guard.succeeded("deploy"), verdict);
    /// ```
    pub fn failed<A, E>(&mut self, tool: &str, args: &A, error: &E) -> Verdict
    where
        A: Hash + ?Sized,
        E: Classify + ?Sized,
    {
        self.judge(tool, args, error, None)
    }

    /// Records a failed round whose call returned a [`Failure`]: as
    /// [`failed`](TaskGuard::failed) with its last error, reading also why
    /// the call stopped. [`StopReason::CircuitOpen`] switches direction at
    /// once ([`Repeat::CircuitOpen`]); a call that gave up on a rate limit
    /// or on [`StopReason::Cooldown`] (or [`StopReason::HintTooLong`])
    /// carries the server's wait in [`Verdict::retry_in`], and one a guard
    /// refused, the wait until that guard admits again
    /// ([`Failure::retry_in`]).
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::agent::{TaskGuard, TaskGuardConfig, Verdict};
    /// use tenacious::Policy;
    ///
    /// let failure = Policy::new()
    ///     .max(2)
    ///     .base(Duration::ZERO)
    ///     .retry_blocking_failure(|| Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut)))
    ///     .unwrap_err();
    /// let mut guard = TaskGuard::new(TaskGuardConfig::new());
    /// let verdict = guard.failed_call("search", "rust", &failure);
    /// assert!(matches!(verdict, Verdict::Reflect { failures: 1, retry_in: None, .. }));
    /// ```
    pub fn failed_call<A, E>(&mut self, tool: &str, args: &A, failure: &Failure<E>) -> Verdict
    where
        A: Hash + ?Sized,
        E: Classify,
    {
        // The failure itself, classified as its last error, but whose wait
        // is the refusing guard's when one stopped it (`Failure::retry_in`).
        self.judge(tool, args, failure, Some(failure.stop_reason()))
    }

    fn judge<A, E>(&mut self, tool: &str, args: &A, error: &E, stop: Option<StopReason>) -> Verdict
    where
        A: Hash + ?Sized,
        E: Classify + ?Sized,
    {
        self.rounds = self.rounds.saturating_add(1);
        if let Some(escalated) = &self.escalated {
            return escalated.clone();
        }
        let class = error.classify();
        if class == ErrorClass::Fatal {
            let verdict = Verdict::Escalate {
                tool: tool.to_owned(),
                variant: error.variant(),
                hint: error.hint(),
            };
            self.escalated = Some(verdict.clone());
            return verdict;
        }
        let fingerprint = Fingerprint::of(args);
        let same_call = self.bump(Run::Call(tool.to_owned(), fingerprint));
        let same_class = self.bump(Run::Class(tool.to_owned(), class));
        if let Some(exhausted) = self.limit_reached() {
            return Verdict::OutOfBudget(exhausted);
        }
        let retry_in = wait_of(error, class, stop);
        let threshold = self.config.get_switch_after();
        let repeat = if stop == Some(StopReason::CircuitOpen) {
            Some((Repeat::CircuitOpen, same_class))
        } else if same_call >= threshold {
            Some((Repeat::SameCall(fingerprint), same_call))
        } else if same_class >= threshold {
            Some((Repeat::SameClass(class), same_class))
        } else {
            None
        };
        match repeat {
            Some((repeat, failures)) => {
                // The model is told to change approach; give the new
                // approach a fresh count rather than switching again at once.
                self.runs.retain(|run, _| run.tool() != tool);
                self.switches = self.switches.saturating_add(1);
                Verdict::SwitchDirection {
                    tool: tool.to_owned(),
                    repeat,
                    failures,
                    retry_in,
                }
            }
            None => Verdict::Reflect {
                tool: tool.to_owned(),
                class,
                failures: same_class,
                retry_in,
            },
        }
    }

    /// [`succeeded`](TaskGuard::succeeded) or [`failed`](TaskGuard::failed),
    /// by the round's result.
    ///
    /// ```
    /// use tenacious::agent::{TaskGuardConfig, TaskGuard, Verdict};
    ///
    /// let mut guard = TaskGuard::new(TaskGuardConfig::new());
    /// let result: Result<u32, std::io::Error> = Ok(7);
    /// assert!(matches!(guard.record("count", &(), &result), Verdict::Continue { .. }));
    /// ```
    pub fn record<A, T, E>(&mut self, tool: &str, args: &A, result: &Result<T, E>) -> Verdict
    where
        A: Hash + ?Sized,
        E: Classify,
    {
        match result {
            Ok(_) => self.succeeded(tool),
            Err(error) => self.failed(tool, args, error),
        }
    }

    /// [`succeeded`](TaskGuard::succeeded) or
    /// [`failed_call`](TaskGuard::failed_call), by the round's result: what
    /// a `#[retry]` fn returning `Result<T, Failure<E>>` gave.
    ///
    /// ```
    /// use tenacious::agent::{TaskGuardConfig, TaskGuard, Verdict};
    /// use tenacious::Failure;
    ///
    /// let mut guard = TaskGuard::new(TaskGuardConfig::new());
    /// let result: Result<u32, Failure<std::io::Error>> = Ok(7);
    /// assert!(matches!(guard.record_call("count", &(), &result), Verdict::Continue { .. }));
    /// ```
    pub fn record_call<A, T, E>(
        &mut self,
        tool: &str,
        args: &A,
        result: &Result<T, Failure<E>>,
    ) -> Verdict
    where
        A: Hash + ?Sized,
        E: Classify,
    {
        match result {
            Ok(_) => self.succeeded(tool),
            Err(failure) => self.failed_call(tool, args, failure),
        }
    }

    fn bump(&mut self, run: Run) -> u32 {
        let count = self.runs.entry(run).or_insert(0);
        *count = count.saturating_add(1);
        *count
    }

    /// The limit the task has reached, if any: whether another round may
    /// start. Checked in this order: rounds, time, tokens, money.
    ///
    /// ```
    /// use tenacious::agent::{Cost, TaskLimit, TaskGuardConfig, TaskGuard};
    ///
    /// let mut guard = TaskGuard::new(TaskGuardConfig::new().max_money_micros(10_000));
    /// assert_eq!(guard.limit_reached(), None);
    /// guard.charge(Cost::money_micros(10_000));
    /// assert_eq!(
    ///     guard.limit_reached(),
    ///     Some(TaskLimit::Money { limit_micros: 10_000, spent_micros: 10_000 })
    /// );
    /// ```
    #[must_use]
    pub fn limit_reached(&self) -> Option<TaskLimit> {
        let config = &self.config;
        if self.rounds >= config.get_max_rounds() {
            return Some(TaskLimit::Rounds {
                max: config.get_max_rounds(),
            });
        }
        if let Some(limit) = config.get_max_time() {
            let elapsed = self.elapsed();
            if elapsed >= limit {
                return Some(TaskLimit::Time { limit, elapsed });
            }
        }
        if let Some(limit) = config.get_max_tokens()
            && self.spent.tokens >= limit
        {
            return Some(TaskLimit::Tokens {
                limit,
                spent: self.spent.tokens,
            });
        }
        if let Some(limit_micros) = config.get_max_money_micros()
            && self.spent.money_micros >= limit_micros
        {
            return Some(TaskLimit::Money {
                limit_micros,
                spent_micros: self.spent.money_micros,
            });
        }
        None
    }

    /// Rounds recorded so far.
    #[must_use]
    pub const fn rounds(&self) -> u32 {
        self.rounds
    }

    /// `SwitchDirection` verdicts given so far.
    #[must_use]
    pub const fn switches(&self) -> u32 {
        self.switches
    }

    /// What has been charged so far.
    #[must_use]
    pub const fn spent(&self) -> Cost {
        self.spent
    }

    /// Time since the guard was created, on tokio's clock.
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        Instant::now().saturating_duration_since(self.started)
    }

    /// The limits in force.
    #[must_use]
    pub const fn config(&self) -> &TaskGuardConfig {
        &self.config
    }
}

/// The wait a failed round carries: the error's server hint (not zero), for
/// a call that gave up on a rate limit, a shared cooldown or a transient
/// error that named a wait; never for an `Invalid` one (the same call fails
/// the same way however long the model waits).
fn wait_of<E: Classify + ?Sized>(
    error: &E,
    class: ErrorClass,
    stop: Option<StopReason>,
) -> Option<Duration> {
    // A guard's refusal says when it would admit again (the error's, or
    // the `Failure`'s, `retry_after`), whatever the last error's class.
    let waits = class.is_retryable()
        || matches!(
            stop,
            Some(
                StopReason::Cooldown
                    | StopReason::HintTooLong
                    | StopReason::CircuitOpen
                    | StopReason::Guard
            )
        );
    error.retry_after().filter(|hint| waits && !hint.is_zero())
}
