//! The main demo: a scripted agent running many tasks under fault
//! injection, with every layer of `tenacious` at work.
//!
//! ```sh
//! cargo run --example agent
//! cargo run --example agent -- --fault-rate 0.8 --seed 42 --tasks 50
//! ```
//!
//! Each task orders a product: the mock model writes a JSON plan (the
//! decision layer re-asks when it does not validate), then calls a flaky
//! `search`, a rate-limited `price` API that sends `Retry-After`, and an
//! idempotent `create_order`, each through `#[retry]`, under a task guard.
//! Faults come from `tenacious::chaos`, seeded. It runs on a virtual clock
//! (tokio's paused clock), so the backoffs, waits and timeouts of a few
//! virtual minutes take a fraction of a second.
//!
//! It prints one line per task, the call layer's figures from
//! `tenacious::stats`, and a table of what each layer did. Its modules are
//! in `examples/agent/`:
//!
//! - `cli.rs`: the flags, their defaults and `--help`;
//! - `runner.rs`: the run, each task's plan and its loop under the guard;
//! - `model.rs`: the scripted model; `tools.rs`: the three `#[retry]` tools;
//! - `report.rs`: what a run produced, and its check against
//!   `tenacious::stats`;
//! - `print.rs`: how this example prints it.
//!
//! All but `print.rs` are shared with `tests/agent_demo.rs`, which checks
//! the run's invariants.

use std::io::{self, Write};
use std::process::ExitCode;

/// The demo's modules, in `examples/agent/`, shared with `tests/agent_demo.rs`.
#[allow(
    dead_code,
    reason = "shared with tests/agent_demo.rs, which reads figures not printed here"
)]
mod agent {
    pub mod cli;
    pub mod model;
    pub mod report;
    pub mod runner;
    pub mod tools;
}
// The example's own: outside `agent`, so the allowance above does not cover it.
#[path = "agent/print.rs"]
mod print;

use agent::cli::{self, Command, Config};
use agent::runner::run_demo;
use print::{write_header, write_table, write_task};

fn main() -> ExitCode {
    let config = match Command::parse(std::env::args().skip(1)) {
        Ok(Command::Run(config)) => config,
        Ok(Command::Help) => {
            println!("{}", cli::USAGE);
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    match demo(&config, &mut io::stdout().lock()) {
        // A reader that stopped early (`| head`) is not a failure of the run.
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the report: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the demo, writing each task's line as it ends, then the table.
fn demo(config: &Config, out: &mut impl Write) -> io::Result<()> {
    write_header(out, config)?;
    let mut written = Ok(());
    let report = run_demo(config, |task| {
        if written.is_ok() {
            written = write_task(out, task);
        }
    });
    written?;
    write_table(out, &report)?;
    out.flush()
}
