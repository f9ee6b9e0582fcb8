//! What the mock server answers, and the faults it injects: the four
//! prompts and their answers ([`PROMPTS`]), the kinds of [`Fault`], and
//! each prompt's seeded [`plan`] of faults, one per request, in order.

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};

/// A prompt and the answer the mock model streams for it, token by token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prompt {
    /// What the client asks.
    pub question: &'static str,
    /// The answer, one token each (the SSE ids are 1, 2, ... in order).
    pub tokens: &'static [&'static str],
}

impl Prompt {
    /// The whole answer.
    pub fn answer(&self) -> String {
        self.tokens.concat()
    }
}

/// The prompts every run asks, in order.
pub const PROMPTS: [Prompt; 4] = [
    Prompt {
        question: "Name the three primary colours.",
        tokens: &[
            "Red",
            ",",
            " yellow",
            " and",
            " blue",
            " are",
            " the",
            " traditional",
            " primary",
            " colours",
            ".",
        ],
    },
    Prompt {
        question: "What is the capital of Australia?",
        tokens: &[
            "The",
            " capital",
            " of",
            " Australia",
            " is",
            " Canberra",
            ",",
            " not",
            " Sydney",
            ".",
        ],
    },
    Prompt {
        question: "How many legs does a spider have?",
        tokens: &[
            "A",
            " spider",
            " has",
            " eight",
            " legs",
            ",",
            " attached",
            " to",
            " its",
            " ceph",
            "alo",
            "thorax",
            ".",
        ],
    },
    Prompt {
        question: "Why is the sky blue?",
        tokens: &[
            "Sun",
            "light",
            " scatters",
            " off",
            " air",
            " molecules",
            ",",
            " and",
            " blue",
            " light",
            " scatters",
            " the",
            " most",
            ".",
        ],
    },
];

/// What the server does to one request instead of answering it well.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// A 200 that sends `message_start`, then only keepalives (`ping`
    /// events and comments), never a token: alive, no progress.
    Stall,
    /// A 200 whose stream says `event: error`, `overloaded_error`, before
    /// any token.
    Overloaded,
    /// An error status instead of the stream: 529 (overloaded) or 503.
    Status(u16),
    /// A 200 that sends `after` tokens (counted from where the request
    /// asked to start), then drops the connection.
    Drop {
        /// Tokens sent before the drop.
        after: usize,
    },
}

impl Fault {
    /// What it does, in a few words.
    pub fn describe(self) -> String {
        match self {
            Self::Stall => "a stall before the first token (keepalives only)".to_owned(),
            Self::Overloaded => "an in-band overloaded_error on a 200".to_owned(),
            Self::Status(status) => format!("a {status}"),
            Self::Drop { after } => format!("a connection dropped after {after} tokens"),
        }
    }
}

/// The faults of each prompt (of [`PROMPTS`], in order) for `seed`: the
/// server meets a prompt's requests with them in order, then answers well.
///
/// Every seed deals each kind of fault to one prompt (in a seeded order),
/// and gives half the prompts, at random, a second fault of any kind
/// before or after it: at most two faults, so a policy of 4 attempts
/// always has one left.
pub fn plan(seed: u64) -> Vec<Vec<Fault>> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut kinds = [0, 1, 2, 3];
    kinds.shuffle(&mut rng);
    PROMPTS
        .iter()
        .zip(kinds)
        .map(|(prompt, kind)| {
            let mut faults = vec![draw(&mut rng, kind, prompt)];
            if rng.random_bool(0.5) {
                let kind = rng.random_range(0..4);
                let extra = draw(&mut rng, kind, prompt);
                faults.insert(rng.random_range(0..=1), extra);
            }
            faults
        })
        .collect()
}

/// A fault of kind `kind` (0 to 3, as [`plan`] numbers them) for `prompt`.
fn draw(rng: &mut SmallRng, kind: usize, prompt: &Prompt) -> Fault {
    match kind {
        0 => Fault::Stall,
        1 => Fault::Overloaded,
        2 => Fault::Status(if rng.random_bool(0.5) { 529 } else { 503 }),
        // Mid-way: at least two tokens in, at least two left.
        _ => Fault::Drop {
            after: rng.random_range(2..=prompt.tokens.len() - 2),
        },
    }
}
