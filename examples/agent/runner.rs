//! The demo's run: a scripted agent running many tasks under fault
//! injection, every layer of `tenacious` at work.
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
//! the same seed gives the same run. What it produced is a
//! [`Report`](super::report::Report).

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tenacious::agent::{
    Cost, Decision, DecisionRetry, Observation, TaskGuard, TaskGuardConfig, Verdict,
};
use tenacious::{seed_jitter, stats};
use tokio::time::Instant;

use super::cli::Config;
use super::model::{self, Agent, Model, Reaction, Task, validate};
use super::report::{Outcome, Report, TaskReport};
use super::tools::{CallRecord, Tools};

/// The limits every task runs under: the guard's defaults (10 rounds, a
/// direction switch after 3 failures in a row), 30 virtual seconds and
/// 4 000 tokens.
pub const GUARD: TaskGuardConfig = TaskGuardConfig::new()
    .max_time(Duration::from_secs(30))
    .max_tokens(4_000);

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
        Report::new(*config, tasks, &tools)
    })
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
