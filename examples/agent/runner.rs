//! The run of `examples/agent.rs`: a scripted agent running many tasks
//! under fault injection, every layer of `tenacious` at work.
//!
//! Each task orders a product. The model first writes a JSON plan, which
//! the decision layer ([`DecisionRetry`]) validates and re-asks with the
//! latest error (at most twice). Then the Thought → Action → Observation
//! loop runs under a [`TaskGuard`]: each round the model picks one tool
//! call, the call layer (`#[retry]`) absorbs short faults, and a call that
//! still fails comes back as an [`Observation`] the model reads. The guard
//! gives every round a verdict: continue, reflect, switch direction,
//! escalate (a `Fatal` error) or out of budget (rounds, virtual time,
//! tokens).
//!
//! Everything runs on a current-thread tokio runtime whose clock is paused:
//! backoffs, `Retry-After` waits, timeouts and the model's thinking advance
//! a virtual clock instantly, so a run takes milliseconds of real time and
//! the same seed gives the same run.
//!
//! The agent keeps its own account of every call (the `notify` events and
//! the `Failure` provenance); [`Report::check_stats`] holds it against what
//! `tenacious::stats` recorded for the three tools' `#[retry]` fns.
//!
//! Shared by `examples/agent.rs`, which prints a run, and
//! `tests/agent_demo.rs`, which checks its invariants.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tenacious::agent::{
    Cost, Decision, DecisionRetry, GuardConfig, Observation, TaskGuard, Verdict,
};
use tenacious::stats::{self, Snapshot};
use tenacious::{ErrorClass, seed_jitter};
use tokio::time::Instant;

#[path = "model.rs"]
pub mod model;
#[path = "tools.rs"]
pub mod tools;

use model::{Agent, Model, Reaction, Task, validate};
use tools::{CallRecord, Tool, Tools};

/// What one run does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// The probability that a tool attempt fails, in `[0, 1]`; the model's
    /// plans come out malformed at half of it.
    pub fault_rate: f64,
    /// Seeds the faults, the tasks and the backoff jitter.
    pub seed: u64,
    /// How many tasks to run, one after another.
    pub tasks: u32,
}

impl Config {
    /// The defaults: half the attempts fail, seed 317, 20 tasks. Any seed
    /// will do; with this one the default run shows every way a task ends.
    pub const DEFAULT: Self = Self {
        fault_rate: 0.5,
        seed: 317,
        tasks: 20,
    };

    /// The most tasks a run accepts.
    pub const MAX_TASKS: u32 = 100_000;
}

impl Default for Config {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The command-line help.
pub const USAGE: &str = "\
usage: cargo run --example agent -- [--fault-rate R] [--seed N] [--tasks N]

  --fault-rate R   probability that a tool attempt fails, 0 to 1 (default 0.5);
                   the model's JSON plans come out malformed at half that rate
  --seed N         seeds the faults, the tasks and the jitter (default 317)
  --tasks N        tasks to run, 1 to 100000 (default 20)";

/// What the command line asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Command {
    /// Run the demo.
    Run(Config),
    /// Print [`USAGE`].
    Help,
}

impl Command {
    /// Parses the flags (without the program name): `--flag value` or
    /// `--flag=value`. The error says what is wrong, for a person to read.
    pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Self, String> {
        let mut config = Config::DEFAULT;
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            if arg == "--help" || arg == "-h" {
                return Ok(Self::Help);
            }
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag.to_owned(), Some(value.to_owned())),
                None => (arg, None),
            };
            if !matches!(flag.as_str(), "--fault-rate" | "--seed" | "--tasks") {
                return Err(format!("unknown argument `{flag}`"));
            }
            let Some(value) = inline.or_else(|| args.next()) else {
                return Err(format!("`{flag}` needs a value"));
            };
            match flag.as_str() {
                "--fault-rate" => config.fault_rate = parse_rate(&value)?,
                "--seed" => {
                    config.seed = value.trim().parse().map_err(|_| {
                        format!(
                            "`--seed {value}`: expected a whole number from 0 to {}",
                            u64::MAX
                        )
                    })?;
                }
                _ => config.tasks = parse_tasks(&value)?,
            }
        }
        Ok(Self::Run(config))
    }
}

fn parse_rate(value: &str) -> Result<f64, String> {
    match value.trim().parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "`--fault-rate {value}`: expected a probability from 0 to 1, such as 0.5"
        )),
    }
}

fn parse_tasks(value: &str) -> Result<u32, String> {
    match value.trim().parse::<u32>() {
        Ok(tasks) if (1..=Config::MAX_TASKS).contains(&tasks) => Ok(tasks),
        _ => Err(format!(
            "`--tasks {value}`: expected a whole number from 1 to {}",
            Config::MAX_TASKS
        )),
    }
}

/// The limits every task runs under: the guard's defaults (10 rounds, a
/// direction switch after 3 failures in a row), 30 virtual seconds and
/// 4 000 tokens.
pub const GUARD: GuardConfig = GuardConfig::new()
    .max_time(Duration::from_secs(30))
    .max_tokens(4_000);

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The order was placed: its id.
    Completed(String),
    /// The task stopped short, and why: a plan still invalid after the
    /// re-asks, a budget used up, an order whose outcome is unknown.
    Degraded(String),
    /// A fault a human must fix stopped the task at once: the guard's
    /// reason.
    Escalated(String),
}

impl Outcome {
    /// `"completed"`, `"degraded"` or `"escalated"`.
    pub const fn label(&self) -> &'static str {
        match self {
            Self::Completed(_) => "completed",
            Self::Degraded(_) => "degraded",
            Self::Escalated(_) => "escalated",
        }
    }

    /// The order placed, or why the task stopped.
    pub fn detail(&self) -> &str {
        match self {
            Self::Completed(detail) | Self::Degraded(detail) | Self::Escalated(detail) => detail,
        }
    }
}

/// One task's run.
#[derive(Debug, Clone)]
pub struct TaskReport {
    /// The task.
    pub task: Task,
    /// How it ended.
    pub outcome: Outcome,
    /// Rounds of the Thought → Action → Observation loop, one tool call
    /// each.
    pub rounds: u32,
    /// What the call layer did in each round.
    pub calls: Vec<CallRecord>,
    /// Direction switches the guard called for.
    pub switches: u32,
    /// Plans generated by the decision layer (1 plus its re-asks).
    pub plan_tries: u32,
    /// Tokens and money charged to the guard.
    pub spent: Cost,
    /// Virtual time the task took.
    pub elapsed: Duration,
    /// The observation the model read last, if a call failed.
    pub last_observation: Option<Observation>,
}

impl TaskReport {
    /// Attempts made by the task's tool calls.
    pub fn attempts(&self) -> u64 {
        self.calls.iter().map(|call| u64::from(call.attempts)).sum()
    }
}

/// What the call layer did for one tool, over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolFigures {
    /// Logical calls.
    pub calls: u64,
    /// Attempts, the first of each call included.
    pub attempts: u64,
    /// Calls that made more than one attempt.
    pub retried: u64,
    /// Calls that made more than one attempt and then succeeded.
    pub recovered: u64,
    /// Calls that gave up.
    pub failed: u64,
}

impl ToolFigures {
    fn add(&mut self, call: &CallRecord) {
        self.calls += 1;
        self.attempts += u64::from(call.attempts);
        self.retried += u64::from(call.retried());
        self.recovered += u64::from(call.retried() && call.succeeded());
        self.failed += u64::from(!call.succeeded());
    }
}

/// A whole run.
#[derive(Debug, Clone)]
pub struct Report {
    /// What was run.
    pub config: Config,
    /// Every task, in order.
    pub tasks: Vec<TaskReport>,
    /// The call layer's figures per tool, in [`Tool::ALL`] order.
    pub tools: [ToolFigures; 3],
    /// Failed attempts per class, in [`ErrorClass::ALL`] order.
    pub errors_by_class: [u64; 4],
    /// Failed attempts per error variant.
    pub errors_by_variant: BTreeMap<&'static str, u64>,
    /// Time the call layer slept between attempts.
    pub waited: Duration,
    /// Attempts the tools' bodies ran, counted inside them.
    pub attempts_run: u64,
    /// Orders in the store.
    pub orders: u64,
    /// Requests the store answered from an order it already held, by
    /// idempotency key: each a duplicate without the key.
    pub replays: u64,
    /// Orders beyond the first for one task: must be 0.
    pub duplicates: u64,
    /// What `tenacious::stats` recorded for the tools' `#[retry]` fns
    /// during the run.
    pub stats: Snapshot,
}

/// `part / whole`, 0 when `whole` is.
fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        // Counts stay far below 2^52, where `f64` is exact.
        #[allow(clippy::cast_precision_loss)]
        let r = part as f64 / whole as f64;
        r
    }
}

impl Report {
    fn count(&self, label: &str) -> u64 {
        let n = self
            .tasks
            .iter()
            .filter(|t| t.outcome.label() == label)
            .count();
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// Tasks that placed their order.
    pub fn completed(&self) -> u64 {
        self.count("completed")
    }

    /// Tasks that stopped short, with a reason.
    pub fn degraded(&self) -> u64 {
        self.count("degraded")
    }

    /// Tasks stopped by a fatal error.
    pub fn escalated(&self) -> u64 {
        self.count("escalated")
    }

    /// The figures of all tools together.
    pub fn total(&self) -> ToolFigures {
        self.tools
            .iter()
            .fold(ToolFigures::default(), |sum, t| ToolFigures {
                calls: sum.calls + t.calls,
                attempts: sum.attempts + t.attempts,
                retried: sum.retried + t.retried,
                recovered: sum.recovered + t.recovered,
                failed: sum.failed + t.failed,
            })
    }

    /// Share of tool calls that needed more than one attempt.
    pub fn retry_rate(&self) -> f64 {
        let total = self.total();
        ratio(total.retried, total.calls)
    }

    /// Share of retried tool calls that then succeeded.
    pub fn retry_success_rate(&self) -> f64 {
        let total = self.total();
        ratio(total.recovered, total.retried)
    }

    /// Rounds per task, on average.
    pub fn mean_rounds(&self) -> f64 {
        let rounds = self.tasks.iter().map(|t| u64::from(t.rounds)).sum();
        ratio(rounds, u64::try_from(self.tasks.len()).unwrap_or(u64::MAX))
    }

    /// Direction switches over all tasks.
    pub fn switches(&self) -> u64 {
        self.tasks.iter().map(|t| u64::from(t.switches)).sum()
    }

    /// Re-asks the decision layer made over all tasks.
    pub fn reasks(&self) -> u64 {
        self.tasks
            .iter()
            .map(|t| u64::from(t.plan_tries.saturating_sub(1)))
            .sum()
    }

    /// Tokens and money charged over all tasks.
    pub fn spent(&self) -> Cost {
        self.tasks.iter().fold(Cost::ZERO, |sum, t| sum + t.spent)
    }

    /// Virtual time over all tasks.
    pub fn elapsed(&self) -> Duration {
        self.tasks.iter().map(|t| t.elapsed).sum()
    }

    /// Checks what `tenacious::stats` recorded against the agent's own
    /// account of every call (its `notify` events and `Failure`
    /// provenance), tool by tool: the same calls, attempts, retried and
    /// recovered calls, give-ups, and errors by class and variant. The
    /// error says where they differ.
    pub fn check_stats(&self) -> Result<(), String> {
        for tool in Tool::ALL {
            let ours = &self.tools[tool.index()];
            let recorded = self.stats.get(tool.name());
            let figure = |f: fn(&stats::FnStats) -> u64| recorded.map_or(0, f);
            let pairs = [
                ("calls", ours.calls, figure(stats::FnStats::calls)),
                ("attempts", ours.attempts, figure(stats::FnStats::attempts)),
                (
                    "retried calls",
                    ours.retried,
                    figure(stats::FnStats::retried),
                ),
                (
                    "recovered calls",
                    ours.recovered,
                    figure(stats::FnStats::recovered),
                ),
                (
                    "calls that gave up",
                    ours.failed,
                    figure(stats::FnStats::gave_up_total),
                ),
            ];
            for (what, ours, recorded) in pairs {
                if ours != recorded {
                    return Err(format!(
                        "{}: {what}: the agent counted {ours}, tenacious::stats {recorded}",
                        tool.name()
                    ));
                }
            }
            let mut errors: BTreeMap<(&str, &str), u64> = BTreeMap::new();
            for call in self.tasks.iter().flat_map(|t| &t.calls) {
                if call.tool == tool {
                    for &(class, variant) in &call.errors {
                        *errors.entry((class.as_str(), variant)).or_insert(0) += 1;
                    }
                }
            }
            let recorded_errors: BTreeMap<(&str, &str), u64> = recorded
                .map(|s| s.errors())
                .unwrap_or_default()
                .iter()
                .map(|e| ((e.class.as_str(), e.variant), e.count))
                .collect();
            if errors != recorded_errors {
                return Err(format!(
                    "{}: errors: the agent counted {errors:?}, tenacious::stats {recorded_errors:?}",
                    tool.name()
                ));
            }
        }
        Ok(())
    }
}

/// `tenacious::stats` counts for the whole process: runs take turns, so
/// each one's snapshot holds its own calls only.
static ONE_RUN_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs the demo: `config.tasks` tasks, one after another, on a paused
/// clock; `on_task` sees each task's report as it ends.
///
/// It resets `tenacious::stats` first, and runs in one process take turns.
///
/// # Panics
///
/// If the tokio runtime cannot be built.
pub fn run_demo(config: &Config, mut on_task: impl FnMut(&TaskReport)) -> Report {
    // A run that panicked left nothing that the reset below does not clear.
    let _turn = ONE_RUN_AT_A_TIME
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    stats::reset();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime with a paused clock builds");
    runtime.block_on(async {
        // Every attempt is polled on this thread: its jitter (and the
        // idempotency keys) come from this seed.
        seed_jitter(config.seed);
        let tools = Tools::new(config.seed, config.fault_rate);
        let model = Model::new(config.seed, config.fault_rate / 2.0);
        let mut tasks = Vec::new();
        for id in 1..=config.tasks {
            let report = run_task(&tools, &model, Task::new(id, config.seed)).await;
            on_task(&report);
            tasks.push(report);
        }
        report(*config, tasks, &tools)
    })
}

fn report(config: Config, tasks: Vec<TaskReport>, tools: &Tools) -> Report {
    let mut figures = [ToolFigures::default(); 3];
    let mut errors_by_class = [0; 4];
    let mut errors_by_variant = BTreeMap::new();
    let mut waited = Duration::ZERO;
    for call in tasks.iter().flat_map(|t| &t.calls) {
        figures[call.tool.index()].add(call);
        waited += call.waited;
        for &(class, variant) in &call.errors {
            if let Some(i) = ErrorClass::ALL.iter().position(|c| *c == class) {
                errors_by_class[i] += 1;
            }
            *errors_by_variant.entry(variant).or_insert(0) += 1;
        }
    }
    let store = tools.store();
    Report {
        config,
        tasks,
        tools: figures,
        errors_by_class,
        errors_by_variant,
        waited,
        attempts_run: tools.attempts_run(),
        orders: u64::try_from(store.orders().len()).unwrap_or(u64::MAX),
        replays: store.replays(),
        duplicates: store.duplicates(),
        stats: stats::snapshot(),
    }
}

/// What a task has done so far.
struct Progress {
    task: Task,
    started: Instant,
    calls: Vec<CallRecord>,
    plan_tries: u32,
    last_observation: Option<Observation>,
}

impl Progress {
    fn end(self, guard: &TaskGuard, outcome: Outcome) -> TaskReport {
        TaskReport {
            task: self.task,
            outcome,
            rounds: guard.rounds(),
            calls: self.calls,
            switches: guard.switches(),
            plan_tries: self.plan_tries,
            spent: guard.spent(),
            elapsed: self.started.elapsed(),
            last_observation: self.last_observation,
        }
    }
}

/// One task: the plan, then the guarded loop of tool calls.
async fn run_task(tools: &Tools, model: &Model, task: Task) -> TaskReport {
    let mut guard = TaskGuard::new(GUARD);
    let mut progress = Progress {
        task: task.clone(),
        started: Instant::now(),
        calls: Vec::new(),
        plan_tries: 0,
        last_observation: None,
    };

    // Decision layer: a plan that validates, re-asked with the latest
    // error only.
    let mut plan_cost = Cost::ZERO;
    let decision = DecisionRetry::new()
        .run_async(
            async |reask| {
                tokio::time::sleep(model::TURN_LATENCY).await;
                let (output, cost) = model.plan(&task, reask);
                plan_cost += cost;
                output
            },
            |output: &String| validate(output),
        )
        .await;
    guard.charge(plan_cost);
    progress.plan_tries = decision.tries();
    let plan = match decision {
        Decision::Valid { value, .. } => value,
        Decision::Degraded(degraded) => {
            let reason = format!("no valid plan: {}", degraded.reason());
            return progress.end(&guard, Outcome::Degraded(reason));
        }
    };

    // Task layer: Thought → Action → Observation, one tool call a round.
    let mut agent = Agent::new(task, plan);
    let mut context = String::new();
    loop {
        tokio::time::sleep(model::TURN_LATENCY).await;
        let (call_id, call, cost) = agent.next_call(&context);
        guard.charge(cost);
        let (result, record) = tools.call(&call).await;
        progress.calls.push(record);
        let verdict = guard.record(call.tool().name(), &call.arguments(), &result);
        let observation = match result {
            Ok(output) => {
                agent.advance(output);
                if let Some(order) = agent.placed() {
                    // The last round's verdict may say the budget is now
                    // used up; no round is left to make.
                    return progress.end(&guard, Outcome::Completed(order.to_owned()));
                }
                context.clear();
                None
            }
            Err(failure) => {
                let observation = Observation::from_failure(call_id, &failure);
                context = serde_json::to_string(&observation).unwrap_or_default();
                Some(observation)
            }
        };
        if observation.is_some() {
            progress.last_observation.clone_from(&observation);
        }
        match (&verdict, observation) {
            (Verdict::Continue { .. }, _) => {}
            (Verdict::SwitchDirection { .. }, _) => agent.switch_direction(),
            (Verdict::Reflect { .. }, Some(observation)) => match agent.reflect(&observation) {
                Reaction::Retry | Reaction::Rephrase => {}
                Reaction::WaitThenRetry(wait) => tokio::time::sleep(wait).await,
                Reaction::GiveUp(reason) => {
                    return progress.end(&guard, Outcome::Degraded(reason));
                }
            },
            (Verdict::Escalate { .. }, _) => {
                return progress.end(&guard, Outcome::Escalated(verdict.reason()));
            }
            // Out of budget, or a verdict this loop does not know: stop.
            _ => return progress.end(&guard, Outcome::Degraded(verdict.reason())),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.label(), self.detail())
    }
}
