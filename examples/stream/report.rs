//! What a run produced: each attempt as the client saw its source
//! ([`AttemptLog`], read before the retried stream filters it), each
//! prompt's stream as its consumer got it ([`PromptReport`]), each policy's
//! pass over the prompts ([`PassReport`]), and the whole run ([`Report`]).

use std::net::SocketAddr;
use std::time::Duration;

use tenacious::agent::Observation;
use tenacious::stats::Snapshot;
use tenacious::stream::ResumePoint;
use tenacious::{Classify, Failure};

use super::chat::{ChatError, ChatEvent};
use super::cli::Config;
use super::faults::{Fault, PROMPTS};
use super::server::Served;

/// One attempt, as its source (the server's stream, parsed) gave it:
/// everything the source sent, repeats and keepalives included, before
/// the retried stream decides what its consumer gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptLog {
    /// Its number, from `tenacious::Attempt::current()` in the opener.
    pub number: u32,
    /// The `Last-Event-ID` it asked to resume after: the opener's
    /// `ResumePoint`.
    pub resumed_after: Option<String>,
    /// Items the consumer had when it opened (the `ResumePoint`'s count).
    pub delivered_before: u64,
    /// `message_start` (and other metadata) events its source sent.
    pub preambles: u32,
    /// `ping` events and comments its source sent.
    pub keepalives: u32,
    /// The ids of the tokens its source sent, in order.
    pub tokens: Vec<String>,
    /// Whether its source sent `message_stop`.
    pub stopped: bool,
    /// The error its open or its source ended with: the error's variant
    /// (as `tenacious::stats` counts it) and its text.
    pub error: Option<(&'static str, String)>,
}

impl AttemptLog {
    /// An attempt opened from `resume`.
    pub fn new(number: u32, resume: &ResumePoint) -> Self {
        Self {
            number,
            resumed_after: resume.last_event_id().map(str::to_owned),
            delivered_before: resume.delivered(),
            preambles: 0,
            keepalives: 0,
            tokens: Vec::new(),
            stopped: false,
            error: None,
        }
    }

    /// Its source sent `item`.
    pub fn saw(&mut self, item: &Result<ChatEvent, ChatError>) {
        match item {
            Ok(ChatEvent::Start { .. } | ChatEvent::Other(_)) => self.preambles += 1,
            Ok(ChatEvent::Ping) => self.keepalives += 1,
            Ok(ChatEvent::Delta { id, .. }) => self.tokens.push(id.clone()),
            Ok(ChatEvent::Stop) => self.stopped = true,
            Err(error) => self.failed(error),
        }
    }

    /// Its open, or its source, failed with `error`.
    pub fn failed(&mut self, error: &ChatError) {
        self.error = Some((error.variant(), error.to_string()));
    }

    /// How it ended.
    pub fn end(&self) -> AttemptEnd<'_> {
        match (&self.error, self.stopped) {
            (Some((variant, error)), _) => AttemptEnd::Failed { variant, error },
            (None, true) => AttemptEnd::Complete,
            // Its source neither ended nor failed: the retried stream
            // dropped it, its timer having run out.
            (None, false) => AttemptEnd::TimedOut,
        }
    }
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptEnd<'a> {
    /// `message_stop`, then the end of the stream.
    Complete,
    /// Its open or its source failed.
    Failed {
        /// The error's variant.
        variant: &'static str,
        /// The error's text.
        error: &'a str,
    },
    /// The retried stream dropped it: no token within `first_item`
    /// (before any token), or no progress within `idle` (after).
    TimedOut,
}

/// One prompt streamed under one policy.
#[derive(Debug)]
pub struct PromptReport {
    /// Which prompt (index in [`PROMPTS`]).
    pub prompt: usize,
    /// Whether the policy resumes.
    pub resume: bool,
    /// Every attempt, in order.
    pub attempts: Vec<AttemptLog>,
    /// What the consumer got, in order.
    pub delivered: Vec<ChatEvent>,
    /// The time from the start of the call to the first token the
    /// consumer got, retries included (wall time).
    pub first_token: Option<Duration>,
    /// The time the whole stream took (wall time).
    pub elapsed: Duration,
    /// The failure the stream ended with, if it did.
    pub failure: Option<Failure<ChatError>>,
}

impl PromptReport {
    /// The text the consumer got.
    pub fn text(&self) -> String {
        self.delivered
            .iter()
            .filter_map(|event| match event {
                ChatEvent::Delta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The ids of the tokens the consumer got, in order.
    pub fn token_ids(&self) -> Vec<u32> {
        self.delivered
            .iter()
            .filter_map(|event| match event {
                ChatEvent::Delta { id, .. } => id.parse().ok(),
                _ => None,
            })
            .collect()
    }

    /// Whether the answer came whole: no failure, and `message_stop` last.
    pub fn complete(&self) -> bool {
        self.failure.is_none() && self.delivered.last() == Some(&ChatEvent::Stop)
    }

    /// The id of the tool call the model made for this prompt.
    pub fn call_id(&self) -> String {
        let policy = if self.resume { "resumed" } else { "default" };
        format!("call_{policy}_{}", self.prompt + 1)
    }

    /// What the model reads when the stream failed: the failure as an
    /// `Observation`.
    pub fn observation(&self) -> Option<Observation> {
        self.failure
            .as_ref()
            .map(|failure| Observation::from_failure(self.call_id(), failure))
    }

    /// The prompt's question.
    pub fn question(&self) -> &'static str {
        PROMPTS[self.prompt].question
    }
}

/// One policy's pass over every prompt.
#[derive(Debug)]
pub struct PassReport {
    /// Whether the policy resumes.
    pub resume: bool,
    /// Each prompt, in order.
    pub prompts: Vec<PromptReport>,
    /// Every request the server served in this pass, in order.
    pub served: Vec<Served>,
}

/// A whole run.
#[derive(Debug)]
pub struct Report {
    /// What it ran with.
    pub config: Config,
    /// Where the mock server listened.
    pub addr: SocketAddr,
    /// Each prompt's faults.
    pub plans: Vec<Vec<Fault>>,
    /// Without resume, then with it.
    pub passes: Vec<PassReport>,
    /// `tenacious::stats::snapshot()` at the end of the run.
    pub stats: Snapshot,
    /// The run's wall time.
    pub elapsed: Duration,
}

impl Report {
    /// The pass with resume (`true`) or without.
    ///
    /// # Panics
    ///
    /// If the run has no such pass (every run has both).
    pub fn pass(&self, resume: bool) -> &PassReport {
        self.passes
            .iter()
            .find(|pass| pass.resume == resume)
            .expect("a run makes both passes")
    }
}
