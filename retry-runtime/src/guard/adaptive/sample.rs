//! [`Sample`]: one finished attempt, as an [`AdaptiveLimit`](super::AdaptiveLimit) hears of it.
use std::time::Duration;

/// One finished attempt, as an [`AdaptiveLimit`](super::AdaptiveLimit) hears of it.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Sample, SampleOutcome};
///
/// let sample = Sample::ok(Duration::from_millis(80), 4);
/// assert_eq!(sample.outcome, SampleOutcome::Ok);
/// assert_eq!(Sample::overloaded(Duration::ZERO, 5).outcome, SampleOutcome::Overloaded);
/// assert_eq!(Sample::dropped(Duration::from_secs(30), 5).outcome, SampleOutcome::Dropped);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Sample {
    /// How long the attempt took, from its start to its answer, on the
    /// caller's clock.
    pub latency: Duration,
    /// Attempts in flight when it started, itself included (so at least
    /// 1 for a real attempt; 0 is read as unknown).
    pub in_flight: u32,
    /// How it ended.
    pub outcome: SampleOutcome,
}

/// How the attempt of a [`Sample`] ended.
///
/// ```
/// use tenacious::SampleOutcome;
///
/// // What a guard would make of an HTTP status.
/// let outcome = |status: u16| match status {
///     429 | 503 | 529 => SampleOutcome::Overloaded,
///     _ => SampleOutcome::Ok,
/// };
/// assert_eq!(outcome(529), SampleOutcome::Overloaded);
/// assert_eq!(outcome(404), SampleOutcome::Ok);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SampleOutcome {
    /// The provider answered: a success, or an error of the request's own
    /// (a 4xx other than 429). Its latency is averaged; it may grow the
    /// limit.
    Ok,
    /// The provider refused it for load: 429, 529, 503 (or an in-band
    /// `overloaded_error`). Cuts the limit below the attempts in flight.
    Overloaded,
    /// It timed out or its connection dropped. Cuts the limit, at most
    /// once per round trip.
    Dropped,
}

impl Sample {
    /// A success (or an error that is no sign of load).
    #[must_use]
    pub const fn ok(latency: Duration, in_flight: u32) -> Self {
        Self::new(latency, in_flight, SampleOutcome::Ok)
    }

    /// A refusal for load: 429, 529 or 503.
    #[must_use]
    pub const fn overloaded(latency: Duration, in_flight: u32) -> Self {
        Self::new(latency, in_flight, SampleOutcome::Overloaded)
    }

    /// A timeout or a dropped connection.
    #[must_use]
    pub const fn dropped(latency: Duration, in_flight: u32) -> Self {
        Self::new(latency, in_flight, SampleOutcome::Dropped)
    }

    /// A sample of any outcome.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::{Sample, SampleOutcome};
    ///
    /// let sample = Sample::new(Duration::from_millis(3), 9, SampleOutcome::Overloaded);
    /// assert_eq!(sample, Sample::overloaded(Duration::from_millis(3), 9));
    /// ```
    #[must_use]
    pub const fn new(latency: Duration, in_flight: u32, outcome: SampleOutcome) -> Self {
        Self {
            latency,
            in_flight,
            outcome,
        }
    }
}
