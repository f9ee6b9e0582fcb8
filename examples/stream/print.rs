//! How `examples/stream.rs` prints a run: the header (the server, the
//! timers, the faults), each prompt's attempts and outcome as it ends, and
//! the `tenacious::stats` table at the end.

use std::io::{self, Write};
use std::net::SocketAddr;
use std::time::Duration;

use crate::stream::chat::POLICY;
use crate::stream::cli::Config;
use crate::stream::faults::{Fault, PROMPTS};
use crate::stream::report::{AttemptEnd, AttemptLog, PromptReport, Report};
use crate::stream::server::TOKEN_GAP;

/// The run's settings and the faults each prompt meets.
pub fn write_header(
    out: &mut impl Write,
    config: &Config,
    addr: SocketAddr,
    plans: &[Vec<Fault>],
) -> io::Result<()> {
    writeln!(
        out,
        "tenacious stream demo: {} prompts, seed {}, a mock chat server at {addr} \
         (Anthropic-like SSE, a token every {TOKEN_GAP:?})",
        PROMPTS.len(),
        config.seed,
    )?;
    writeln!(
        out,
        "timers: first_item {:?}, idle {:?}, deadline {:?}; up to {} attempts, \
         backoff from {:?} (full jitter, at most {:?})",
        config.first_item,
        config.idle,
        config.deadline,
        POLICY.get_max(),
        POLICY.get_base(),
        POLICY.get_cap(),
    )?;
    writeln!(
        out,
        "faults (seeded; the same for both policies), one per request, in order:"
    )?;
    for (prompt, faults) in plans.iter().enumerate() {
        let faults: Vec<String> = faults.iter().map(|fault| fault.describe()).collect();
        writeln!(out, "  prompt {}  {}", prompt + 1, faults.join(", then "))?;
    }
    Ok(())
}

/// The title of a pass.
pub fn write_pass(out: &mut impl Write, resume: bool) -> io::Result<()> {
    if resume {
        writeln!(
            out,
            "\npolicy `resumed`: resume(true), a failure after the first token \
             reconnects with Last-Event-ID"
        )
    } else {
        writeln!(
            out,
            "\npolicy `default`: no resume, a failure after the first token ends \
             the stream with what it delivered"
        )
    }
}

/// One prompt: each attempt, then how the stream ended.
pub fn write_prompt(
    out: &mut impl Write,
    config: &Config,
    report: &PromptReport,
) -> io::Result<()> {
    writeln!(out, "prompt {}  {:?}", report.prompt + 1, report.question())?;
    let last = report.attempts.len().saturating_sub(1);
    for (i, attempt) in report.attempts.iter().enumerate() {
        let then = if i < last {
            "  -> retried".to_owned()
        } else {
            match &report.failure {
                Some(failure) => format!("  -> stream ended: {}", failure.stop_reason()),
                None => String::new(),
            }
        };
        writeln!(
            out,
            "  attempt {}  {}{then}",
            attempt.number,
            describe(attempt, config)
        )?;
    }
    let attempts = count(report.attempts.len(), "attempt");
    let first = report.first_token.map_or_else(
        || "no token".to_owned(),
        |t| format!("first token after {}", millis(t)),
    );
    let tokens = count(report.token_ids().len(), "token");
    match &report.failure {
        None if report.complete() => writeln!(
            out,
            "  complete after {attempts}: {first}, {tokens}: {:?}",
            report.text()
        ),
        None => writeln!(out, "  ended without message_stop after {attempts}"),
        Some(failure) => {
            writeln!(
                out,
                "  failed after {attempts} ({}): {first}, {tokens} ({} delivered): {:?}",
                failure.stop_reason(),
                count(
                    usize::try_from(failure.delivered()).unwrap_or(usize::MAX),
                    "item"
                ),
                report.text()
            )?;
            if let Some(observation) = report.observation()
                && let Ok(json) = serde_json::to_string(&observation)
            {
                writeln!(out, "  the model reads: {json}")?;
            }
            Ok(())
        }
    }
}

/// What one attempt's source sent, and how it ended.
fn describe(attempt: &AttemptLog, config: &Config) -> String {
    let mut parts = Vec::new();
    if let Some(id) = &attempt.resumed_after {
        parts.push(format!("resumed after id {id}"));
    }
    let committed = !attempt.tokens.is_empty() || attempt.stopped;
    if attempt.preambles > 0 {
        parts.push(
            if attempt.delivered_before > 0 {
                "message_start (dropped: the consumer has it)"
            } else if committed {
                "message_start"
            } else {
                "message_start (held, dropped with the attempt)"
            }
            .to_owned(),
        );
    }
    if let (Some(first), Some(last)) = (attempt.tokens.first(), attempt.tokens.last()) {
        parts.push(format!(
            "{} (ids {first}..{last})",
            count(attempt.tokens.len(), "token")
        ));
    }
    match attempt.end() {
        AttemptEnd::Complete => parts.push("message_stop".to_owned()),
        AttemptEnd::Failed { error, .. } => parts.push(error.to_owned()),
        AttemptEnd::TimedOut if !committed => parts.push(format!(
            "keepalives only, no token: dropped at first_item ({:?})",
            config.first_item
        )),
        AttemptEnd::TimedOut => parts.push("no progress: dropped at idle".to_owned()),
    }
    parts.join(", ")
}

/// The statistics of the run, and its wall time.
pub fn write_table(out: &mut impl Write, report: &Report) -> io::Result<()> {
    writeln!(out, "\nfrom tenacious::stats::snapshot():\n")?;
    write!(out, "{}", report.stats)?;
    writeln!(
        out,
        "\n{} requests served, in {:.1}s of wall time",
        report
            .passes
            .iter()
            .map(|pass| pass.served.len())
            .sum::<usize>(),
        report.elapsed.as_secs_f64()
    )
}

fn count(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn millis(duration: Duration) -> String {
    format!("{}ms", duration.as_millis())
}
