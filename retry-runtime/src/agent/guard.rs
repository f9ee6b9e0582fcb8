//! The task guard: a verdict after every round of the Thought → Action →
//! Observation loop.
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::{Add, AddAssign};
use std::time::Duration;

use tokio::time::Instant;

use crate::{Classify, ErrorClass};

/// A hash of a tool call's arguments, to recognise the model repeating
/// the very same call.
///
/// Any `Hash` value works: the arguments' JSON text, a struct, a tuple.
/// Two texts that differ only in whitespace or key order are different
/// calls; canonicalise them first if that matters. The hash is the same
/// for equal arguments within one build of the program, which is all the
/// guard needs; do not store it.
///
/// ```
/// use tenacious::agent::Fingerprint;
///
/// let a = Fingerprint::of(r#"{"query":"rust retry"}"#);
/// assert_eq!(a, Fingerprint::of(&String::from(r#"{"query":"rust retry"}"#)));
/// assert_ne!(a, Fingerprint::of(r#"{"query":"rust backoff"}"#));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint(u64);

impl Fingerprint {
    /// The fingerprint of `args`.
    #[must_use]
    pub fn of<A: Hash + ?Sized>(args: &A) -> Self {
        // `DefaultHasher::new()` has fixed keys, unlike `RandomState`, so
        // equal arguments hash alike in every guard of the process.
        let mut hasher = DefaultHasher::new();
        args.hash(&mut hasher);
        Self(hasher.finish())
    }

    /// The hash itself.
    ///
    /// ```
    /// use tenacious::agent::Fingerprint;
    ///
    /// assert_eq!(Fingerprint::of(&42).value(), Fingerprint::of(&42).value());
    /// ```
    #[must_use]
    pub const fn value(self) -> u64 {
        self.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// What a task has spent, or may spend, in the units the caller charges:
/// model tokens and money.
///
/// Money is in millionths of whatever currency you count in (micro-dollars
/// for USD: a model priced at $3 per million tokens costs 3 per token), so
/// sums are exact integers. Sums saturate rather than overflow.
///
/// ```
/// use tenacious::agent::Cost;
///
/// let round = Cost::tokens(1_200) + Cost::money_micros(3_600);
/// assert_eq!(round, Cost { tokens: 1_200, money_micros: 3_600 });
/// assert_eq!(Cost::tokens(u64::MAX) + Cost::tokens(1), Cost::tokens(u64::MAX));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Cost {
    /// Model tokens (prompt and completion, as you count them).
    pub tokens: u64,
    /// Money, in millionths of the currency unit.
    pub money_micros: u64,
}

impl Cost {
    /// Nothing spent.
    pub const ZERO: Self = Self {
        tokens: 0,
        money_micros: 0,
    };

    /// `tokens` model tokens and no money.
    #[must_use]
    pub const fn tokens(tokens: u64) -> Self {
        Self {
            tokens,
            money_micros: 0,
        }
    }

    /// `micros` millionths of the currency unit and no tokens.
    #[must_use]
    pub const fn money_micros(micros: u64) -> Self {
        Self {
            tokens: 0,
            money_micros: micros,
        }
    }

    /// Both costs, each saturating at `u64::MAX`.
    #[must_use]
    pub const fn saturating_add(self, other: Self) -> Self {
        Self {
            tokens: self.tokens.saturating_add(other.tokens),
            money_micros: self.money_micros.saturating_add(other.money_micros),
        }
    }
}

impl Add for Cost {
    type Output = Self;
    /// [`Cost::saturating_add`].
    fn add(self, other: Self) -> Self {
        self.saturating_add(other)
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, other: Self) {
        *self = self.saturating_add(other);
    }
}

/// The limits a [`TaskGuard`] enforces.
///
/// | setting | builder | default |
/// |---|---|---|
/// | rounds (tool calls) per task | [`max_rounds`](GuardConfig::max_rounds) | 10 |
/// | failures in a row before a direction switch | [`switch_after`](GuardConfig::switch_after) | 3 |
/// | wall time per task | [`max_time`](GuardConfig::max_time) | unlimited |
/// | tokens per task | [`max_tokens`](GuardConfig::max_tokens) | unlimited |
/// | money per task, in millionths | [`max_money_micros`](GuardConfig::max_money_micros) | unlimited |
///
/// ```
/// use std::time::Duration;
/// use tenacious::agent::GuardConfig;
///
/// const GUARD: GuardConfig = GuardConfig::new()
///     .max_rounds(20)
///     .switch_after(2)
///     .max_time(Duration::from_secs(120))
///     .max_tokens(50_000);
/// assert_eq!(GUARD.rounds_limit(), 20);
/// assert_eq!(GuardConfig::default(), GuardConfig::DEFAULT);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GuardConfig {
    max_rounds: u32,
    switch_after: u32,
    max_time: Option<Duration>,
    max_tokens: Option<u64>,
    max_money_micros: Option<u64>,
}

impl GuardConfig {
    /// The defaults: 10 rounds, a direction switch after 3 failures in a
    /// row, no time or cost limit.
    pub const DEFAULT: Self = Self {
        max_rounds: 10,
        switch_after: 3,
        max_time: None,
        max_tokens: None,
        max_money_micros: None,
    };

    /// The defaults, [`GuardConfig::DEFAULT`].
    #[must_use]
    pub const fn new() -> Self {
        Self::DEFAULT
    }

    /// Rounds (tool calls) a task may make. Default: 10. `0` is taken as 1.
    ///
    /// ```
    /// use tenacious::agent::GuardConfig;
    ///
    /// assert_eq!(GuardConfig::new().max_rounds(0).rounds_limit(), 1);
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
    /// use tenacious::agent::GuardConfig;
    ///
    /// assert_eq!(GuardConfig::new().switch_after(5).switch_threshold(), 5);
    /// ```
    #[must_use]
    pub const fn switch_after(self, failures: u32) -> Self {
        Self {
            switch_after: if failures == 0 { 1 } else { failures },
            ..self
        }
    }

    /// Wall time a task may take, from [`TaskGuard::new`]. Default:
    /// unlimited. Measured on tokio's clock, so a paused test clock
    /// controls it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::agent::GuardConfig;
    ///
    /// let config = GuardConfig::new().max_time(Duration::from_secs(60));
    /// assert_eq!(config.time_limit(), Some(Duration::from_secs(60)));
    /// ```
    #[must_use]
    pub const fn max_time(self, limit: Duration) -> Self {
        Self {
            max_time: Some(limit),
            ..self
        }
    }

    /// Tokens a task may spend, as charged with [`TaskGuard::charge`].
    /// Default: unlimited.
    ///
    /// ```
    /// use tenacious::agent::GuardConfig;
    ///
    /// assert_eq!(GuardConfig::new().max_tokens(8_000).tokens_limit(), Some(8_000));
    /// ```
    #[must_use]
    pub const fn max_tokens(self, limit: u64) -> Self {
        Self {
            max_tokens: Some(limit),
            ..self
        }
    }

    /// Money a task may spend, in millionths of the currency unit, as
    /// charged with [`TaskGuard::charge`]. Default: unlimited.
    ///
    /// ```
    /// use tenacious::agent::GuardConfig;
    ///
    /// // 5 cents, in micro-dollars
    /// assert_eq!(GuardConfig::new().max_money_micros(50_000).money_limit_micros(), Some(50_000));
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
    pub const fn rounds_limit(&self) -> u32 {
        self.max_rounds
    }

    /// The failures in a row that trigger a direction switch.
    #[must_use]
    pub const fn switch_threshold(&self) -> u32 {
        self.switch_after
    }

    /// The wall-time limit, if any.
    #[must_use]
    pub const fn time_limit(&self) -> Option<Duration> {
        self.max_time
    }

    /// The token limit, if any.
    #[must_use]
    pub const fn tokens_limit(&self) -> Option<u64> {
        self.max_tokens
    }

    /// The money limit in millionths, if any.
    #[must_use]
    pub const fn money_limit_micros(&self) -> Option<u64> {
        self.max_money_micros
    }
}

impl Default for GuardConfig {
    /// [`GuardConfig::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

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
pub enum Exhausted {
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

impl fmt::Display for Exhausted {
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
/// use tenacious::agent::{GuardConfig, TaskGuard, Verdict};
///
/// let mut guard = TaskGuard::new(GuardConfig::new().max_rounds(3));
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
        /// [`TaskGuard::failed`]).
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
        /// The error's variant ([`Classify::variant`]).
        variant: &'static str,
        /// The error's advice ([`Classify::hint`]), if it has any.
        hint: Option<Cow<'static, str>>,
    },
    /// A limit was reached: stop, no further round may start.
    OutOfBudget(Exhausted),
}

impl Verdict {
    /// Whether the task must stop: `Escalate` or `OutOfBudget`.
    ///
    /// ```
    /// use tenacious::agent::{Exhausted, Verdict};
    ///
    /// assert!(Verdict::OutOfBudget(Exhausted::Rounds { max: 10 }).is_final());
    /// assert!(!Verdict::Continue { rounds_left: 1 }.is_final());
    /// ```
    #[must_use]
    pub const fn is_final(&self) -> bool {
        matches!(self, Self::Escalate { .. } | Self::OutOfBudget(_))
    }

    /// The reason, written for a person or a model (the same as `Display`).
    ///
    /// ```
    /// use tenacious::agent::{Exhausted, Verdict};
    ///
    /// let verdict = Verdict::OutOfBudget(Exhausted::Tokens { limit: 1000, spent: 1200 });
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
/// [`failed`](TaskGuard::failed) or [`record`](TaskGuard::record), and charge
/// what it cost with [`charge`](TaskGuard::charge). The verdict of a failed
/// round is, first match wins:
///
/// 1. `Escalate` if the error is `Fatal` (and for every round after);
/// 2. `OutOfBudget` if the rounds, time, tokens or money are used up;
/// 3. `SwitchDirection` if the same call (tool and [`Fingerprint`]) or the
///    same tool with the same class has now failed
///    [`switch_after`](GuardConfig::switch_after) times with no success of
///    that tool in between; the count for that tool then starts over;
/// 4. `Reflect` otherwise.
///
/// A successful round gets `OutOfBudget` or `Continue`, and clears that
/// tool's failure counts. Failures of *other* tools do not clear them, so a
/// model flip-flopping between two failing approaches is caught too.
///
/// Time is read from tokio's clock ([`tokio::time::Instant`]), which tests
/// pause and advance; the guard itself never sleeps.
///
/// ```
/// use tenacious::agent::{GuardConfig, Repeat, TaskGuard, Verdict};
/// use tenacious::ErrorClass;
///
/// let timeout = std::io::Error::from(std::io::ErrorKind::TimedOut);
/// let mut guard = TaskGuard::new(GuardConfig::new());
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
    config: GuardConfig,
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
    /// use tenacious::agent::{Cost, GuardConfig, TaskGuard};
    ///
    /// let guard = TaskGuard::new(GuardConfig::new());
    /// assert_eq!(guard.rounds(), 0);
    /// assert_eq!(guard.spent(), Cost::ZERO);
    /// assert_eq!(guard.exhausted(), None);
    /// ```
    #[must_use]
    pub fn new(config: GuardConfig) -> Self {
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
    /// limit shows in the next verdict and in [`exhausted`](TaskGuard::exhausted).
    ///
    /// ```
    /// use tenacious::agent::{Cost, Exhausted, GuardConfig, TaskGuard, Verdict};
    ///
    /// let mut guard = TaskGuard::new(GuardConfig::new().max_tokens(1_000));
    /// guard.charge(Cost::tokens(600));
    /// assert!(matches!(guard.succeeded("plan"), Verdict::Continue { .. }));
    /// guard.charge(Cost::tokens(600));
    /// assert_eq!(
    ///     guard.succeeded("plan"),
    ///     Verdict::OutOfBudget(Exhausted::Tokens { limit: 1_000, spent: 1_200 })
    /// );
    /// ```
    pub fn charge(&mut self, cost: Cost) {
        self.spent += cost;
    }

    /// Records a successful round of `tool`.
    ///
    /// ```
    /// use tenacious::agent::{Exhausted, GuardConfig, TaskGuard, Verdict};
    ///
    /// let mut guard = TaskGuard::new(GuardConfig::new().max_rounds(2));
    /// assert_eq!(guard.succeeded("search"), Verdict::Continue { rounds_left: 1 });
    /// assert_eq!(guard.succeeded("fetch"), Verdict::OutOfBudget(Exhausted::Rounds { max: 2 }));
    /// ```
    pub fn succeeded(&mut self, tool: &str) -> Verdict {
        self.rounds = self.rounds.saturating_add(1);
        if let Some(escalated) = &self.escalated {
            return escalated.clone();
        }
        self.runs.retain(|run, _| run.tool() != tool);
        match self.exhausted() {
            Some(exhausted) => Verdict::OutOfBudget(exhausted),
            None => Verdict::Continue {
                rounds_left: self.config.max_rounds.saturating_sub(self.rounds),
            },
        }
    }

    /// Records a failed round: `tool` called with `args` (anything `Hash`,
    /// see [`Fingerprint`]) failed with `error`, after whatever retries the
    /// call layer made. The verdict follows the order on [`TaskGuard`].
    ///
    /// ```
    /// use tenacious::agent::{GuardConfig, TaskGuard, Verdict};
    ///
    /// let mut guard = TaskGuard::new(GuardConfig::new());
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
        if let Some(exhausted) = self.exhausted() {
            return Verdict::OutOfBudget(exhausted);
        }
        let threshold = self.config.switch_after;
        let repeat = if same_call >= threshold {
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
                }
            }
            None => Verdict::Reflect {
                tool: tool.to_owned(),
                class,
                failures: same_class,
            },
        }
    }

    /// [`succeeded`](TaskGuard::succeeded) or [`failed`](TaskGuard::failed),
    /// by the round's result.
    ///
    /// ```
    /// use tenacious::agent::{GuardConfig, TaskGuard, Verdict};
    ///
    /// let mut guard = TaskGuard::new(GuardConfig::new());
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

    fn bump(&mut self, run: Run) -> u32 {
        let count = self.runs.entry(run).or_insert(0);
        *count = count.saturating_add(1);
        *count
    }

    /// The limit the task has reached, if any: whether another round may
    /// start. Checked in this order: rounds, time, tokens, money.
    ///
    /// ```
    /// use tenacious::agent::{Cost, Exhausted, GuardConfig, TaskGuard};
    ///
    /// let mut guard = TaskGuard::new(GuardConfig::new().max_money_micros(10_000));
    /// assert_eq!(guard.exhausted(), None);
    /// guard.charge(Cost::money_micros(10_000));
    /// assert_eq!(
    ///     guard.exhausted(),
    ///     Some(Exhausted::Money { limit_micros: 10_000, spent_micros: 10_000 })
    /// );
    /// ```
    #[must_use]
    pub fn exhausted(&self) -> Option<Exhausted> {
        let config = &self.config;
        if self.rounds >= config.max_rounds {
            return Some(Exhausted::Rounds {
                max: config.max_rounds,
            });
        }
        if let Some(limit) = config.max_time {
            let elapsed = self.elapsed();
            if elapsed >= limit {
                return Some(Exhausted::Time { limit, elapsed });
            }
        }
        if let Some(limit) = config.max_tokens
            && self.spent.tokens >= limit
        {
            return Some(Exhausted::Tokens {
                limit,
                spent: self.spent.tokens,
            });
        }
        if let Some(limit_micros) = config.max_money_micros
            && self.spent.money_micros >= limit_micros
        {
            return Some(Exhausted::Money {
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
    pub const fn config(&self) -> &GuardConfig {
        &self.config
    }
}
