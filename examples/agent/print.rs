//! How `examples/agent.rs` prints a run: the header with the run's settings
//! and the guard's limits, one line per task as it ends, and the closing
//! table (the call layer's figures from `tenacious::stats`, then what each
//! layer did).

use std::io::{self, Write};
use std::time::Duration;

use tenacious::ErrorClass;

use crate::agent::cli::Config;
use crate::agent::model::MICROS_PER_TOKEN;
use crate::agent::report::{Outcome, Report, TaskReport};
use crate::agent::runner::GUARD;

/// The run's settings and the limits every task runs under.
pub fn write_header(out: &mut impl Write, config: &Config) -> io::Result<()> {
    writeln!(
        out,
        "tenacious agent demo: {} tasks, fault rate {}, seed {}, on a virtual clock \
         (tokio's paused clock: waits cost no real time)",
        config.tasks, config.fault_rate, config.seed
    )?;
    writeln!(
        out,
        "tools: search (flaky), price (rate-limited, Retry-After), create_order \
         (idempotency key); the model's JSON plans slip at rate {}",
        config.fault_rate / 2.0
    )?;
    writeln!(
        out,
        "guard per task: {} rounds, a direction switch after {} failures in a row, \
         {:?} virtual, {} tokens (${MICROS_PER_TOKEN} per million)\n",
        GUARD.get_max_rounds(),
        GUARD.get_switch_after(),
        GUARD.get_max_time().unwrap_or_default(),
        GUARD.get_max_tokens().unwrap_or_default(),
    )
}

/// One task's line, and the observation it read last if it did not complete.
pub fn write_task(out: &mut impl Write, task: &TaskReport) -> io::Result<()> {
    let attempts = u32::try_from(task.attempts()).unwrap_or(u32::MAX);
    writeln!(
        out,
        "task {:>3}  {:<9}  {:<9}  {:<11}  {:<9}  {:<10}  {:>5} tokens  {:>5}  {}",
        task.task.id,
        task.outcome.label(),
        count(task.rounds, "round", "rounds"),
        count(attempts, "attempt", "attempts"),
        count(task.plan_tries.saturating_sub(1), "re-ask", "re-asks"),
        count(task.switches, "switch", "switches"),
        task.spent.tokens,
        seconds(task.elapsed),
        task.outcome.detail(),
    )?;
    if !matches!(task.outcome, Outcome::Completed(_))
        && let Some(observation) = &task.last_observation
        && let Ok(json) = serde_json::to_string(observation)
    {
        writeln!(out, "          last observation: {json}")?;
    }
    Ok(())
}

/// `0 re-asks`, `1 re-ask`, `2 re-asks`.
fn count(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The call layer's figures, then a table of what each layer did.
pub fn write_table(out: &mut impl Write, report: &Report) -> io::Result<()> {
    // The call layer's figures are the ones `tenacious::stats` recorded,
    // checked against the agent's own account of every call.
    let check = match report.check_stats() {
        Ok(()) => "equal to the agent's own count of every call".to_owned(),
        Err(difference) => format!("DIFFERENT from the agent's own count: {difference}"),
    };
    writeln!(
        out,
        "\ncall layer, from tenacious::stats::snapshot() ({check}):\n"
    )?;
    write!(out, "{}", report.stats)?;

    let total = report.stats.total();
    let percent =
        |share: Option<f64>| share.map_or_else(|| "-".to_owned(), |s| format!("{:.1}%", 100.0 * s));
    let by_class: Vec<String> = ErrorClass::ALL
        .iter()
        .map(|&class| {
            let share = percent(total.class_share(class));
            format!("{class} {} ({share})", total.errors_of(class))
        })
        .collect();
    let spent = report.spent();
    let lines = [
        (
            "tasks",
            format!(
                "{} completed, {} degraded, {} escalated (of {})",
                report.completed(),
                report.degraded(),
                report.escalated(),
                report.tasks.len()
            ),
        ),
        (
            "calls, attempts",
            format!(
                "{} tool calls, {} attempts ({} per call)",
                total.calls(),
                total.attempts(),
                total
                    .mean_attempts()
                    .map_or_else(|| "-".to_owned(), |m| format!("{m:.2}"))
            ),
        ),
        (
            "retry rate",
            format!("{} of calls needed a retry", percent(total.retry_rate())),
        ),
        (
            "retry success rate",
            format!(
                "{} of retried calls then succeeded",
                percent(total.retry_success_rate())
            ),
        ),
        (
            "mean rounds",
            format!("{:.2} per task", report.mean_rounds()),
        ),
        ("error distribution", by_class.join(", ")),
        ("direction switches", report.switches().to_string()),
        (
            "decision layer",
            format!("{} re-asks for a valid plan", report.reasks()),
        ),
        (
            "budget spent",
            format!(
                "{} tokens (${:.2}), {} virtual ({} of it between attempts)",
                spent.tokens,
                dollars(spent.money_micros),
                seconds(report.elapsed()),
                seconds(report.waited),
            ),
        ),
        (
            "side effects",
            format!(
                "{} orders placed ({} by tasks that lost the answer); \
                 {} retries answered from the store by idempotency key",
                report.orders,
                report.orders.saturating_sub(report.completed()),
                report.replays
            ),
        ),
        ("duplicate side effects", report.duplicates.to_string()),
    ];
    writeln!(out)?;
    for (name, value) in lines {
        writeln!(out, "{name:<24}{value}")?;
    }
    Ok(())
}

/// Money in millionths of a dollar, as dollars.
fn dollars(micros: u64) -> f64 {
    // Far below 2^52 micro-dollars: exact.
    #[allow(clippy::cast_precision_loss)]
    let d = micros as f64 / 1e6;
    d
}

/// A virtual duration to a tenth of a second: `4.2s`, `3m12.4s`, `17h36m1.7s`.
fn seconds(d: Duration) -> String {
    let tenths = d.as_millis() / 100;
    let (minutes, tenths) = (tenths / 600, tenths % 600);
    let (hours, minutes) = (minutes / 60, minutes % 60);
    let secs = format!("{}.{}s", tenths / 10, tenths % 10);
    match (hours, minutes) {
        (0, 0) => secs,
        (0, m) => format!("{m}m{secs}"),
        (h, m) => format!("{h}h{m}m{secs}"),
    }
}
