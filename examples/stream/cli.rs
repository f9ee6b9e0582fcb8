//! The demo's command line: [`Config`] (what one run does), the help text
//! ([`USAGE`]) and the parser ([`Command::parse`]) for `--seed` and
//! `--help`.

use std::time::Duration;

/// What one run does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Seeds the faults the server injects, and the backoff jitter.
    pub seed: u64,
    /// The stream's longest wait for its first token, each attempt.
    pub first_item: Duration,
    /// The stream's longest wait between items once it has committed.
    pub idle: Duration,
    /// The whole stream's limit, retries and backoff included.
    pub deadline: Duration,
}

impl Config {
    /// The defaults: seed 10, and timers short enough for a run of a few
    /// seconds of wall time (the mock server sends a token every 10 ms).
    /// Any seed deals every kind of fault; with this one both a 529 and a
    /// 503 come, one drop mid-way comes after a 529, and a resumed
    /// attempt meets an in-band error.
    pub const DEFAULT: Self = Self {
        seed: 10,
        first_item: Duration::from_millis(150),
        idle: Duration::from_millis(400),
        deadline: Duration::from_secs(5),
    };
}

impl Default for Config {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The command-line help.
pub const USAGE: &str = "\
usage: cargo run --example stream -- [--seed N]

  --seed N   seeds the faults the mock server injects and the backoff
             jitter (default 10); the same seed tells the same story";

/// What the command line asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Run the demo.
    Run(Config),
    /// Print [`USAGE`].
    Help,
}

impl Command {
    /// Parses the flags (without the program name): `--seed N`,
    /// `--seed=N` or `--help`. The error says what is wrong, for a person.
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
            if flag != "--seed" {
                return Err(format!("unknown argument `{flag}`"));
            }
            let Some(value) = inline.or_else(|| args.next()) else {
                return Err("`--seed` needs a value".to_owned());
            };
            config.seed = value.trim().parse().map_err(|_| {
                format!(
                    "`--seed {value}`: expected a whole number from 0 to {}",
                    u64::MAX
                )
            })?;
        }
        Ok(Self::Run(config))
    }
}
