//! Seeded fault injection: typed failures at a chosen rate, repeatable per
//! seed, to test what retries, guards and agents do when tools misbehave.
//!
//! A [`Chaos`] rolls, for each call it wraps, whether to fail it and with
//! which [`Fault`]. The failure is a [`ChaosError`], which implements
//! [`Classify`] with the fault's class, server hint and advice, so it flows
//! through `#[retry]`, [`Policy`](tenacious_runtime::Policy) and the agent layers like a
//! real tool error. Hold it in your own error enum with a `From` impl (or a
//! `#[classify(transparent)]` variant) to inject into any tool fn:
//!
//! ```
//! use std::time::Duration;
//! use tenacious::chaos::{Chaos, ChaosError, Fault};
//! use tenacious::{Classify, ErrorClass};
//!
//! #[derive(Debug)]
//! enum ToolError {
//!     NotFound,
//!     Chaos(ChaosError),
//! }
//! impl From<ChaosError> for ToolError {
//!     fn from(e: ChaosError) -> Self {
//!         ToolError::Chaos(e)
//!     }
//! }
//!
//! fn search(query: &str) -> Result<String, ToolError> {
//!     if query.is_empty() { Err(ToolError::NotFound) } else { Ok(format!("hits for {query}")) }
//! }
//!
//! let chaos = Chaos::new(7)
//!     .rate(0.5)
//!     .faults(&[Fault::Transient, Fault::RateLimited(Duration::from_secs(2))]);
//! let mut failed = 0;
//! for _ in 0..100 {
//!     match chaos.inject(|| search("rust")) {
//!         Ok(hits) => assert_eq!(hits, "hits for rust"),
//!         Err(ToolError::Chaos(e)) => {
//!             failed += 1;
//!             assert!(e.classify().is_retryable());
//!         }
//!         Err(ToolError::NotFound) => unreachable!(),
//!     }
//! }
//! assert!((30..=70).contains(&failed));
//! ```
//!
//! The same seed gives the same sequence of faults for the same sequence of
//! calls, within one build: the generator is rand's `SmallRng`, whose
//! output may change between rand releases, so record seeds, not sequences.
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use tenacious_runtime::{Classify, ErrorClass};

/// A typed failure [`Chaos`] can inject.
///
/// | fault | class | `retry_after` | `variant()` |
/// |---|---|---|---|
/// | `Transient` | `Transient` | — | `"Transient"` |
/// | `RateLimited(d)` | `RateLimited` | `Some(d)` | `"RateLimited"` |
/// | `Timeout` | `Transient` | — | `"Timeout"` |
/// | `InvalidOutput` | `Invalid` | — | `"InvalidOutput"` |
/// | `Fatal` | `Fatal` | — | `"Fatal"` |
///
/// ```
/// use std::time::Duration;
/// use tenacious::ErrorClass;
/// use tenacious::chaos::Fault;
///
/// assert_eq!(Fault::Timeout.class(), ErrorClass::Transient);
/// assert_eq!(Fault::RateLimited(Duration::from_secs(3)).retry_after(), Some(Duration::from_secs(3)));
/// assert_eq!(Fault::InvalidOutput.name(), "InvalidOutput");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// A passing failure: a reset connection, a 503.
    Transient,
    /// A 429 whose server asks to wait the given time (`Retry-After`).
    RateLimited(Duration),
    /// The call took too long and was abandoned.
    Timeout,
    /// The model (or tool) answered with output that does not validate.
    InvalidOutput,
    /// A failure a human must fix: revoked credentials, bad configuration.
    Fatal,
}

impl Fault {
    /// Every kind of fault, rate-limited with a one-second `Retry-After`:
    /// what a new [`Chaos`] injects.
    pub const ALL: [Self; 5] = [
        Self::Transient,
        Self::RateLimited(Duration::from_secs(1)),
        Self::Timeout,
        Self::InvalidOutput,
        Self::Fatal,
    ];

    /// The class a real error of this kind has (see the table on [`Fault`]).
    #[must_use]
    pub const fn class(self) -> ErrorClass {
        match self {
            Self::Transient | Self::Timeout => ErrorClass::Transient,
            Self::RateLimited(_) => ErrorClass::RateLimited,
            Self::InvalidOutput => ErrorClass::Invalid,
            Self::Fatal => ErrorClass::Fatal,
        }
    }

    /// The server's wait hint: `Some` only for `RateLimited`.
    #[must_use]
    pub const fn retry_after(self) -> Option<Duration> {
        match self {
            Self::RateLimited(wait) => Some(wait),
            _ => None,
        }
    }

    /// The variant's name, as [`Classify::variant`] reports it for a
    /// [`ChaosError`].
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Transient => "Transient",
            Self::RateLimited(_) => "RateLimited",
            Self::Timeout => "Timeout",
            Self::InvalidOutput => "InvalidOutput",
            Self::Fatal => "Fatal",
        }
    }

    /// Advice for the model or the operator, as [`Classify::hint`] reports
    /// it for a [`ChaosError`].
    #[must_use]
    pub const fn hint(self) -> &'static str {
        match self {
            Self::Transient => "a temporary failure: try again later or take another route",
            Self::RateLimited(_) => "rate limited: wait as long as the server asks, then retry",
            Self::Timeout => "the call timed out: try again later or ask for less at once",
            Self::InvalidOutput => "the output does not validate: produce it again, fixed",
            Self::Fatal => "a fault a human must fix: stop and tell the user",
        }
    }
}

/// The error a [`Chaos`] injects: a [`Fault`], classified like the real
/// failure it stands for.
///
/// ```
/// use std::time::Duration;
/// use tenacious::chaos::{ChaosError, Fault};
/// use tenacious::{Classify, ErrorClass};
///
/// let e = ChaosError::from(Fault::RateLimited(Duration::from_millis(1500)));
/// assert_eq!(e.classify(), ErrorClass::RateLimited);
/// assert_eq!(e.retry_after(), Some(Duration::from_millis(1500)));
/// assert_eq!(e.variant(), "RateLimited");
/// assert_eq!(e.to_string(), "injected fault: rate limited, retry after 1.5s");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChaosError {
    fault: Fault,
}

impl ChaosError {
    /// The injected fault.
    ///
    /// ```
    /// use tenacious::chaos::{ChaosError, Fault};
    ///
    /// assert_eq!(ChaosError::from(Fault::Fatal).fault(), Fault::Fatal);
    /// ```
    #[must_use]
    pub const fn fault(&self) -> Fault {
        self.fault
    }
}

impl From<Fault> for ChaosError {
    fn from(fault: Fault) -> Self {
        Self { fault }
    }
}

impl fmt::Display for ChaosError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("injected fault: ")?;
        match self.fault {
            Fault::Transient => f.write_str("transient failure"),
            Fault::RateLimited(wait) => write!(f, "rate limited, retry after {wait:?}"),
            Fault::Timeout => f.write_str("timed out"),
            Fault::InvalidOutput => f.write_str("invalid output"),
            Fault::Fatal => f.write_str("fatal failure"),
        }
    }
}

impl std::error::Error for ChaosError {}

/// The fault's class, `Retry-After`, advice and name (the table on [`Fault`]).
impl Classify for ChaosError {
    fn classify(&self) -> ErrorClass {
        self.fault.class()
    }
    fn retry_after(&self) -> Option<Duration> {
        self.fault.retry_after()
    }
    fn hint(&self) -> Option<Cow<'static, str>> {
        Some(Cow::Borrowed(self.fault.hint()))
    }
    fn variant(&self) -> &'static str {
        self.fault.name()
    }
}

/// A seeded fault injector.
///
/// Each [`roll`](Chaos::roll) fails with probability [`rate`](Chaos::rate)
/// and then picks one of the configured [`faults`](Chaos::faults) uniformly
/// (list a fault twice to make it twice as likely). The same seed and the
/// same sequence of rolls give the same faults.
///
/// | setting | builder | default |
/// |---|---|---|
/// | probability a call fails | [`rate`](Chaos::rate) | 0.5 |
/// | faults to pick from | [`faults`](Chaos::faults) | [`Fault::ALL`] |
///
/// It takes `&self` (the generator sits behind a mutex), so one injector can
/// be shared by every tool of a test, across tasks and threads; rolls from
/// several threads interleave in whatever order they happen.
///
/// ```
/// use tenacious::chaos::{Chaos, Fault};
///
/// let a = Chaos::new(42).rate(0.3);
/// let b = Chaos::new(42).rate(0.3);
/// let rolls_a: Vec<Option<Fault>> = (0..50).map(|_| a.roll()).collect();
/// let rolls_b: Vec<Option<Fault>> = (0..50).map(|_| b.roll()).collect();
/// assert_eq!(rolls_a, rolls_b);
/// assert_eq!(Chaos::new(1).rate(0.0).roll(), None);
/// assert!(Chaos::new(1).rate(1.0).roll().is_some());
/// ```
#[derive(Debug)]
pub struct Chaos {
    rate: f64,
    faults: Vec<Fault>,
    rng: Mutex<SmallRng>,
}

impl Chaos {
    /// The default failure rate: half the calls.
    pub const DEFAULT_RATE: f64 = 0.5;

    /// An injector seeded with `seed`, failing at [`Chaos::DEFAULT_RATE`]
    /// with any of [`Fault::ALL`].
    ///
    /// ```
    /// use tenacious::chaos::{Chaos, Fault};
    ///
    /// let chaos = Chaos::new(3);
    /// assert_eq!(chaos.get_rate(), 0.5);
    /// assert_eq!(chaos.get_faults(), Fault::ALL);
    /// ```
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self {
            rate: Self::DEFAULT_RATE,
            faults: Fault::ALL.to_vec(),
            rng: Mutex::new(SmallRng::seed_from_u64(seed)),
        }
    }

    /// The probability, in `[0, 1]`, that a call fails. Default: 0.5.
    ///
    /// Out-of-range rates are clamped (below 0 → 0, above 1 → 1) and NaN
    /// counts as 0, so a rate read from a command line never panics.
    ///
    /// ```
    /// use tenacious::chaos::Chaos;
    ///
    /// assert_eq!(Chaos::new(0).rate(0.25).get_rate(), 0.25);
    /// assert_eq!(Chaos::new(0).rate(7.0).get_rate(), 1.0);
    /// assert_eq!(Chaos::new(0).rate(-1.0).get_rate(), 0.0);
    /// assert_eq!(Chaos::new(0).rate(f64::NAN).get_rate(), 0.0);
    /// ```
    #[must_use]
    pub fn rate(self, rate: f64) -> Self {
        // `clamp` keeps NaN, which would then fail every comparison.
        let rate = if rate.is_nan() {
            0.0
        } else {
            rate.clamp(0.0, 1.0)
        };
        Self { rate, ..self }
    }

    /// The faults a failing call picks from, uniformly. Default:
    /// [`Fault::ALL`]. An empty list injects nothing.
    ///
    /// ```
    /// use tenacious::chaos::{Chaos, Fault};
    ///
    /// let chaos = Chaos::new(0).rate(1.0).faults(&[Fault::Timeout]);
    /// assert_eq!(chaos.roll(), Some(Fault::Timeout));
    /// assert_eq!(Chaos::new(0).rate(1.0).faults(&[]).roll(), None);
    /// ```
    #[must_use]
    pub fn faults(self, faults: &[Fault]) -> Self {
        Self {
            faults: faults.to_vec(),
            ..self
        }
    }

    /// The failure rate in use.
    #[must_use]
    pub const fn get_rate(&self) -> f64 {
        self.rate
    }

    /// The faults in use.
    #[must_use]
    pub fn get_faults(&self) -> &[Fault] {
        &self.faults
    }

    /// Decides the fate of one call: `None` to let it through, or the fault
    /// to inject.
    ///
    /// ```
    /// use tenacious::chaos::{Chaos, Fault};
    ///
    /// let chaos = Chaos::new(9).rate(1.0).faults(&[Fault::Fatal]);
    /// assert_eq!(chaos.roll(), Some(Fault::Fatal));
    /// ```
    pub fn roll(&self) -> Option<Fault> {
        if self.faults.is_empty() {
            return None;
        }
        // A panic elsewhere while holding the lock leaves the generator
        // usable: it holds no invariant a half-done roll could break.
        let mut rng = self.rng.lock().unwrap_or_else(PoisonError::into_inner);
        // `random::<f64>()` is in [0, 1): a rate of 0 never fails, 1 always.
        if rng.random::<f64>() >= self.rate {
            return None;
        }
        let pick = rng.random_range(0..self.faults.len());
        Some(self.faults[pick])
    }

    /// Runs `call` unless the roll says fail, in which case `call` is not run
    /// and the fault is returned as the caller's error type: a request that
    /// never reached the tool, so it had no effect.
    ///
    /// ```
    /// use tenacious::chaos::{Chaos, ChaosError, Fault};
    ///
    /// let chaos = Chaos::new(1).rate(1.0).faults(&[Fault::Transient]);
    /// let mut ran = false;
    /// let result: Result<(), ChaosError> = chaos.inject(|| {
    ///     ran = true;
    ///     Ok(())
    /// });
    /// assert_eq!(result.unwrap_err().fault(), Fault::Transient);
    /// assert!(!ran);
    /// ```
    ///
    /// # Errors
    ///
    /// The injected fault, or `call`'s own error.
    pub fn inject<T, E, F>(&self, call: F) -> Result<T, E>
    where
        F: FnOnce() -> Result<T, E>,
        E: From<ChaosError>,
    {
        match self.roll() {
            Some(fault) => Err(ChaosError::from(fault).into()),
            None => call(),
        }
    }

    /// Runs `call`, then, if the roll says fail, drops its result and
    /// returns the fault instead: a response lost after the tool acted, the
    /// case that turns a blind retry into a duplicate side effect.
    ///
    /// ```
    /// use tenacious::chaos::{Chaos, ChaosError, Fault};
    ///
    /// let chaos = Chaos::new(1).rate(1.0).faults(&[Fault::Timeout]);
    /// let mut created = 0;
    /// let result: Result<(), ChaosError> = chaos.inject_after(|| {
    ///     created += 1;
    ///     Ok(())
    /// });
    /// assert_eq!(result.unwrap_err().fault(), Fault::Timeout);
    /// assert_eq!(created, 1); // the effect happened; the caller never heard
    /// ```
    ///
    /// # Errors
    ///
    /// The injected fault, or `call`'s own error.
    pub fn inject_after<T, E, F>(&self, call: F) -> Result<T, E>
    where
        F: FnOnce() -> Result<T, E>,
        E: From<ChaosError>,
    {
        let result = call();
        match self.roll() {
            Some(fault) => Err(ChaosError::from(fault).into()),
            None => result,
        }
    }

    /// [`inject`](Chaos::inject) for async tools: the roll is made first,
    /// and on a fault the future is never created.
    ///
    /// ```
    /// use tenacious::chaos::{Chaos, ChaosError};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let chaos = Chaos::new(5).rate(0.0);
    /// let answer: Result<u32, ChaosError> = chaos.inject_async(|| async { Ok(42) }).await;
    /// assert_eq!(answer.unwrap(), 42);
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// The injected fault, or the call's own error.
    pub async fn inject_async<T, E, F, Fut>(&self, call: F) -> Result<T, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: From<ChaosError>,
    {
        match self.roll() {
            Some(fault) => Err(ChaosError::from(fault).into()),
            None => call().await,
        }
    }

    /// [`inject_after`](Chaos::inject_after) for async tools: the call
    /// runs to completion, then a fault may replace its result.
    ///
    /// ```
    /// use tenacious::chaos::{Chaos, ChaosError, Fault};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let chaos = Chaos::new(5).rate(1.0).faults(&[Fault::Timeout]);
    /// let lost: Result<u32, ChaosError> = chaos.inject_after_async(|| async { Ok(42) }).await;
    /// assert_eq!(lost.unwrap_err().fault(), Fault::Timeout);
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// The injected fault, or the call's own error.
    pub async fn inject_after_async<T, E, F, Fut>(&self, call: F) -> Result<T, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: From<ChaosError>,
    {
        let result = call().await;
        match self.roll() {
            Some(fault) => Err(ChaosError::from(fault).into()),
            None => result,
        }
    }
}
