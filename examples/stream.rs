//! Retried streams: a chat completion streamed token by token from a
//! flaky server, under two policies.
//!
//! ```sh
//! cargo run --example stream
//! cargo run --example stream -- --seed 7
//! ```
//!
//! A mock chat-completion server on loopback (axum) answers each prompt
//! with an Anthropic-like event stream — `message_start`, `ping`, one
//! `content_block_delta` per token with its SSE id, comment keepalives,
//! `message_stop` — and meets each prompt's first requests with seeded
//! faults: a stall before the first token (keepalives only), an in-band
//! `overloaded_error` on a 200, a 529 or 503, a connection dropped after
//! some tokens. The client (reqwest, `tenacious::sse`) streams the four
//! prompts with `Policy::stream` twice: without resume, where a drop after
//! the first token ends the stream with the tokens delivered (shown as the
//! `Observation` the model would read), and with `resume(true)`, where it
//! reconnects with `Last-Event-ID` and the server sends the rest.
//!
//! It prints, per prompt, each attempt and why it was retried, the time to
//! the first token, the tokens delivered and the text, then the
//! `tenacious::stats` table. Real HTTP on the real clock, a few seconds:
//! the same seed gives the same story, only the times vary. Its modules
//! are in `examples/stream/`:
//!
//! - `cli.rs`: the flags and their defaults;
//! - `faults.rs`: the prompts, their answers and the seeded faults;
//! - `server.rs`: the mock server;
//! - `chat.rs`: the client — `ChatError`, `ChatEvent`, `open_chat`, the policies;
//! - `runner.rs`: the run; `report.rs`: what it produced;
//! - `print.rs`: how this example prints it.
//!
//! All but `print.rs` are shared with `tests/stream_demo.rs`, which checks
//! the story.

use std::io::{self, Write};
use std::process::ExitCode;

/// The demo's modules, in `examples/stream/`, shared with `tests/stream_demo.rs`.
#[allow(
    dead_code,
    reason = "shared with tests/stream_demo.rs, which reads what is not printed here"
)]
mod stream {
    pub mod chat;
    pub mod cli;
    pub mod faults;
    pub mod report;
    pub mod runner;
    pub mod server;
}
// The example's own: outside `stream`, so the allowance above does not cover it.
#[path = "stream/print.rs"]
mod print;

use stream::cli::{self, Command, Config};
use stream::runner::{Progress, run_demo};

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

/// Runs the demo, writing each prompt as it ends, then the table.
fn demo(config: &Config, out: &mut impl Write) -> io::Result<()> {
    let mut written = Ok(());
    let report = run_demo(config, |progress| {
        if written.is_err() {
            return;
        }
        written = match progress {
            Progress::Started { addr, plans } => print::write_header(out, config, addr, plans),
            Progress::Pass { resume } => print::write_pass(out, resume),
            Progress::Prompt(prompt) => print::write_prompt(out, config, prompt),
        }
        .and_then(|()| out.flush());
    });
    written?;
    print::write_table(out, &report)?;
    out.flush()
}
