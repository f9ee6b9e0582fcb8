//! The demo's command line: the flags and their defaults ([`Config`], what
//! one run does), the help text ([`USAGE`]) and the parser
//! ([`Command::parse`]) that turns `--fault-rate`, `--seed`, `--tasks` and
//! `--help` into a [`Command`].

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
