//! The demo's run: the mock server on loopback, then every prompt streamed
//! twice, one pass per policy — without resume ([`POLICY`]), then with it
//! ([`RESUMED`]) — against the same faults (the server rewinds its plans
//! between the passes).
//!
//! Each prompt is one `Policy::stream` over [`open_chat`]: the opener is
//! the named async fn, wrapped only to log what each attempt's source
//! sent ([`AttemptLog`]) before the retried stream filters it. It runs on
//! a current-thread tokio runtime with the real clock (the server is real
//! HTTP), seeded: the same seed gives the same faults, attempts and
//! tokens; only the times vary.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::{Mutex, PoisonError};

use futures_util::StreamExt;
use tenacious::stream::ResumePoint;
use tenacious::{Attempt, Policy, seed_jitter, stats};
use tokio::time::Instant;

use super::chat::{ChatClient, ChatEvent, POLICY, RESUMED, open_chat};
use super::cli::Config;
use super::faults::{Fault, PROMPTS, plan};
use super::report::{AttemptLog, PassReport, PromptReport, Report};
use super::server::MockServer;

/// What a run tells its caller as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// The server listens at `addr`, with these faults.
    Started {
        /// Where.
        addr: SocketAddr,
        /// Each prompt's faults.
        plans: &'a [Vec<Fault>],
    },
    /// A pass begins: with resume or without.
    Pass {
        /// Whether its policy resumes.
        resume: bool,
    },
    /// A prompt's stream ended.
    Prompt(&'a PromptReport),
}

/// `tenacious::stats` counts for the whole process: runs take turns, so
/// each one's snapshot holds its own streams only.
static ONE_RUN_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The policy of a pass, with the run's timers.
pub fn policy(config: &Config, resume: bool) -> Policy {
    let policy = if resume { RESUMED } else { POLICY };
    policy
        .first_item(config.first_item)
        .idle(config.idle)
        .deadline(config.deadline)
}

/// Runs the demo; `progress` hears of each step as it ends.
///
/// It resets `tenacious::stats` first, and runs in one process take turns.
///
/// # Panics
///
/// If the tokio runtime cannot be built or the server cannot bind a port
/// on loopback.
pub fn run_demo(config: &Config, mut progress: impl FnMut(Progress<'_>)) -> Report {
    // A run that panicked left nothing that the reset below does not clear.
    let _turn = ONE_RUN_AT_A_TIME
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    stats::reset();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime builds");
    runtime.block_on(async {
        let started = Instant::now();
        // Every stream is polled on this thread: its jitter comes from this seed.
        seed_jitter(config.seed);
        let plans = plan(config.seed);
        let server = MockServer::start(plans.clone())
            .await
            .expect("the mock server binds 127.0.0.1:0");
        let addr = server.addr();
        progress(Progress::Started {
            addr,
            plans: &plans,
        });
        let chat = ChatClient::new(&format!("http://{addr}"));
        let mut passes = Vec::new();
        for resume in [false, true] {
            progress(Progress::Pass { resume });
            server.rewind();
            let before = server.log().len();
            let policy = policy(config, resume);
            let mut prompts = Vec::new();
            for prompt in 0..PROMPTS.len() {
                let report = stream_prompt(&chat, &policy, prompt).await;
                progress(Progress::Prompt(&report));
                prompts.push(report);
            }
            passes.push(PassReport {
                resume,
                prompts,
                served: server.log().split_off(before),
            });
        }
        drop(chat);
        server.stop().await;
        Report {
            config: *config,
            addr,
            plans,
            passes,
            stats: stats::snapshot(),
            elapsed: started.elapsed(),
        }
    })
}

/// Streams one prompt under `policy`, to its end.
async fn stream_prompt(chat: &ChatClient, policy: &Policy, prompt: usize) -> PromptReport {
    let question = PROMPTS[prompt].question;
    let log = RefCell::new(Vec::<AttemptLog>::new());
    let started = Instant::now();
    let mut first_token = None;
    let mut delivered = Vec::new();
    let mut failure = None;
    {
        let tokens = policy.stream(|resume: &ResumePoint| {
            let number = Attempt::current().map_or(0, |attempt| attempt.number());
            let attempt = {
                let mut log = log.borrow_mut();
                log.push(AttemptLog::new(number, resume));
                log.len() - 1
            };
            let open = open_chat(chat, question, resume.clone());
            let log = &log;
            async move {
                match open.await {
                    Ok(events) => {
                        Ok(events.inspect(move |event| log.borrow_mut()[attempt].saw(event)))
                    }
                    Err(error) => {
                        log.borrow_mut()[attempt].failed(&error);
                        Err(error)
                    }
                }
            }
        });
        let mut tokens = std::pin::pin!(tokens);
        while let Some(item) = tokens.next().await {
            match item {
                Ok(event) => {
                    if first_token.is_none() && matches!(event, ChatEvent::Delta { .. }) {
                        first_token = Some(started.elapsed());
                    }
                    delivered.push(event);
                }
                // The last item: the stream ends after it.
                Err(end) => failure = Some(end),
            }
        }
    }
    PromptReport {
        prompt,
        resume: policy.get_resume(),
        attempts: log.into_inner(),
        delivered,
        first_token,
        elapsed: started.elapsed(),
        failure,
    }
}
