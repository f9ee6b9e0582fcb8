//! `Failure<E>`: the last error of a retried call with the story of how it
//! got there.
use std::fmt;
use std::time::Duration;

use crate::{Classify, ErrorClass, StopReason};

/// One failed attempt of a call that returned a [`Failure`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct AttemptRecord {
    /// The attempt's number, 1 for the first.
    pub number: u32,
    /// Its error's class.
    pub class: ErrorClass,
    /// Its error's [`variant`](Classify::variant).
    pub variant: &'static str,
    /// How long the call waited after it: `None` for the last attempt.
    pub delay: Option<Duration>,
}

/// The error of a retried call, with its provenance: every attempt's class,
/// variant and the delay waited after it, and why the call stopped.
///
/// Declare it as the error type of a `#[retry]` fn and the body still
/// returns `Result<T, E>`; the fn returns `Result<T, Failure<E>>`. With a
/// [`Policy`](crate::Policy), use [`retry_failure`](crate::Policy::retry_failure)
/// or [`retry_blocking_failure`](crate::Policy::retry_blocking_failure).
/// The records are kept in a `Vec` that is allocated only once an attempt
/// fails: the happy path still allocates nothing.
///
/// `Display` tells the story in one line; [`into_inner`](Failure::into_inner)
/// gives the last error back. `Failure<E>` is itself [`Classify`] (as its
/// last error) and an [`Error`](std::error::Error) whose `source` is the
/// last error, so it travels through `?` and other retry layers.
///
/// ```
/// use std::io;
/// use std::time::Duration;
/// use tenacious::{Failure, Jitter, Policy, StopReason};
///
/// let policy = Policy::new().base(Duration::from_millis(1)).jitter(Jitter::None);
/// let failure: Failure<io::Error> = policy
///     .retry_blocking_failure(|| Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut)))
///     .unwrap_err();
/// assert_eq!(failure.stop_reason(), StopReason::Exhausted);
/// assert_eq!(failure.attempts().len(), 3);
/// assert_eq!(failure.attempts()[0].delay, Some(Duration::from_millis(1)));
/// assert_eq!(
///     failure.to_string(),
///     "gave up after 3 attempts (exhausted): transient TimedOut, waited 1ms; \
///      transient TimedOut, waited 2ms; transient TimedOut"
/// );
/// assert_eq!(failure.into_inner().kind(), io::ErrorKind::TimedOut);
/// ```
#[derive(Debug, Clone)]
pub struct Failure<E> {
    attempts: Vec<AttemptRecord>,
    stop: StopReason,
    /// Items a retried stream had delivered when it failed.
    delivered: u64,
    /// The id of the last of them that had one (a stream with resume).
    last_event_id: Option<Box<str>>,
    /// When a guard's refusal stopped the call: how long until that guard
    /// would admit again.
    retry_in: Option<Duration>,
    last: E,
}

impl<E> Failure<E> {
    /// Every attempt, in order; the last one is the attempt that produced
    /// [`last`](Failure::last).
    #[must_use]
    pub fn attempts(&self) -> &[AttemptRecord] {
        &self.attempts
    }

    /// Why the call stopped retrying.
    #[must_use]
    pub const fn stop_reason(&self) -> StopReason {
        self.stop
    }

    /// How many items a retried stream had delivered to its consumer when
    /// it failed: output the consumer has, which a new call would repeat.
    /// 0 for a call that is no stream, and for a stream that failed before
    /// its first item.
    ///
    /// ```
    /// use std::io;
    /// use tenacious::Policy;
    ///
    /// let failure = Policy::new()
    ///     .retry_blocking_failure(|| Err::<(), _>(io::Error::from(io::ErrorKind::NotFound)))
    ///     .unwrap_err();
    /// assert_eq!(failure.delivered(), 0);
    /// ```
    #[must_use]
    pub const fn delivered(&self) -> u64 {
        self.delivered
    }

    /// The id of the last delivered item that had one, for a retried
    /// stream with [`resume`](crate::Policy::resume): with
    /// [`delivered`](Failure::delivered), where a re-issued call picks
    /// up ([`ResumePoint::after`](crate::stream::ResumePoint::after)).
    /// `None` for a call, and for a stream without resume or whose items
    /// have no ids.
    #[must_use]
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// With the id of the last delivered item.
    pub(crate) fn with_last_event_id(mut self, id: Option<&str>) -> Self {
        self.last_event_id = id.map(Box::from);
        self
    }

    /// Which limit of attempts stopped the call, when it was the last
    /// error's own ([`Classify::limits`]: a variant that allows more, or
    /// fewer, than the policy): `Some(max)` for a call
    /// [`Exhausted`](StopReason::Exhausted) by it; `None` when the policy's
    /// `max` did, or the call stopped for another reason.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::{Classify, ErrorClass, Limits, Policy};
    ///
    /// #[derive(Debug)]
    /// struct Busy;
    /// impl Classify for Busy {
    ///     fn classify(&self) -> ErrorClass { ErrorClass::RateLimited }
    ///     fn limits(&self) -> Limits { Limits::NONE.max(5) }
    /// }
    /// let failure = Policy::new()
    ///     .base(Duration::ZERO)
    ///     .retry_blocking_failure(|| Err::<(), _>(Busy))
    ///     .unwrap_err();
    /// assert_eq!((failure.attempts().len(), failure.limit()), (5, Some(5)));
    /// ```
    #[must_use]
    pub fn limit(&self) -> Option<u32>
    where
        E: Classify,
    {
        match self.stop {
            StopReason::Exhausted => self.last.limits().get_max(),
            _ => None,
        }
    }

    /// When a guard's refusal stopped the call (an open breaker, a
    /// cooldown or throttle it could not wait for, your own guard; before
    /// its first attempt or at a retry): how long until that guard would
    /// admit an attempt again, if it could tell
    /// ([`Guard::retry_in`](crate::Guard::retry_in)). `None` for any other
    /// stop. The failure's [`retry_after`](Classify::retry_after) is this
    /// when set, else the last error's, so an agent's observation tells the
    /// model when to come back.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::{Breaker, Classify, Policy, StopReason};
    ///
    /// static PROVIDER: Breaker = Breaker::new().min_throughput(1).open_for(Duration::from_secs(30));
    /// let policy = Policy::new().max(1).breaker(&PROVIDER);
    /// let down = || Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionReset));
    /// let _ = policy.retry_blocking_failure(down); // opens it
    /// let failure = policy.retry_blocking_failure(down).unwrap_err();
    /// assert_eq!(failure.stop_reason(), StopReason::CircuitOpen);
    /// let wait = failure.retry_in().expect("the breaker says when");
    /// assert!(wait > Duration::from_secs(29) && wait <= Duration::from_secs(30));
    /// assert_eq!(failure.retry_after(), Some(wait));
    /// ```
    #[must_use]
    pub const fn retry_in(&self) -> Option<Duration> {
        self.retry_in
    }

    /// The same failure, stopped by a guard that would admit again after
    /// `retry_in`.
    pub(crate) const fn with_retry_in(mut self, retry_in: Option<Duration>) -> Self {
        if retry_in.is_some() {
            self.retry_in = retry_in;
        }
        self
    }

    /// The last attempt's error.
    #[must_use]
    pub const fn last(&self) -> &E {
        &self.last
    }

    /// The last attempt's error, by value.
    #[must_use]
    pub fn into_inner(self) -> E {
        self.last
    }

    /// The total time waited between attempts.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::{Jitter, Policy};
    ///
    /// let policy = Policy::new().base(Duration::from_millis(1)).jitter(Jitter::None);
    /// let failure = policy
    ///     .retry_blocking_failure(|| Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut)))
    ///     .unwrap_err();
    /// assert_eq!(failure.waited(), Duration::from_millis(3));
    /// ```
    #[must_use]
    pub fn waited(&self) -> Duration {
        self.attempts
            .iter()
            .filter_map(|a| a.delay)
            .fold(Duration::ZERO, Duration::saturating_add)
    }
}

impl<E> fmt::Display for Failure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.attempts.len();
        if n == 0 {
            // Refused by a guard before its first attempt.
            write!(f, "refused before the first attempt ({})", self.stop)?;
            if let Some(wait) = self.retry_in {
                write!(f, "; admits again in {:?}", rounded(wait))?;
            }
            return Ok(());
        }
        let plural = if n == 1 { "" } else { "s" };
        write!(f, "gave up after {n} attempt{plural} ({})", self.stop)?;
        if self.delivered > 0 {
            let d = self.delivered;
            let plural = if d == 1 { "" } else { "s" };
            write!(f, " with {d} item{plural} delivered")?;
        }
        let mut sep = ": ";
        for attempt in &self.attempts {
            write!(f, "{sep}{} {}", attempt.class, attempt.variant)?;
            if let Some(delay) = attempt.delay {
                write!(f, ", waited {:?}", rounded(delay))?;
            }
            sep = "; ";
        }
        Ok(())
    }
}

/// `delay` to the millisecond (to the microsecond below one), so jittered
/// delays read as `183ms`, not `183.402117ms`.
fn rounded(delay: Duration) -> Duration {
    let nanos = delay.as_nanos();
    let unit = if nanos >= 1_000_000 { 1_000_000 } else { 1_000 };
    let total = (nanos + unit / 2) / unit * unit;
    match u64::try_from(total / 1_000_000_000) {
        // The remainder is below a second, so it fits a `u32`.
        #[allow(clippy::cast_possible_truncation)]
        Ok(secs) => Duration::new(secs, (total % 1_000_000_000) as u32),
        // Rounding up past `Duration::MAX`: keep it as it was.
        Err(_) => delay,
    }
}

impl<E> std::error::Error for Failure<E>
where
    E: std::error::Error + 'static,
{
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.last)
    }
}

/// As the last error.
impl<E: Classify> Classify for Failure<E> {
    fn classify(&self) -> ErrorClass {
        self.last.classify()
    }
    /// [`Failure::retry_in`] when a guard said, else the last error's.
    fn retry_after(&self) -> Option<Duration> {
        self.retry_in.or_else(|| self.last.retry_after())
    }
    /// The last error: every method not written here is its.
    fn inner(&self) -> Option<&dyn Classify> {
        Some(&self.last)
    }
    /// When `E` can be made from a refusal: a failure with no attempts,
    /// stopped for the refusal's reason, whose last error is `E`'s.
    fn refused() -> Option<fn(crate::Refused) -> Self> {
        E::refused().map(|_| refused_failure::<E> as fn(crate::Refused) -> Self)
    }
}

/// The failure of a call refused before its first attempt.
fn refused_failure<E: Classify>(refused: crate::Refused) -> Failure<E> {
    // Reached only through `Failure::<E>::refused`, `Some` only when
    // `E::refused` is.
    let make = E::refused().unwrap_or_else(|| unreachable!("E::refused was Some"));
    Failure {
        attempts: Vec::new(),
        stop: refused.reason(),
        delivered: 0,
        last_event_id: None,
        retry_in: refused.retry_in(),
        last: make(refused),
    }
}

/// The attempts of one call, recorded as the engine decides; becomes a
/// [`Failure`] when the call gives up.
#[derive(Debug, Default)]
pub struct Provenance(Vec<AttemptRecord>);

impl Provenance {
    /// No attempts yet; allocates nothing.
    #[must_use]
    pub const fn new() -> Self {
        Self(Vec::new())
    }

    pub(crate) fn record<E: Classify>(
        &mut self,
        number: u32,
        error: &E,
        class: ErrorClass,
        delay: Option<Duration>,
    ) {
        self.0.push(AttemptRecord {
            number,
            class,
            variant: error.variant(),
            delay,
        });
    }

    pub(crate) fn into_failure<E>(self, stop: StopReason, last: E) -> Failure<E> {
        self.into_stream_failure(stop, 0, last)
    }

    /// The failure of a retried stream that had delivered `delivered` items.
    pub(crate) fn into_stream_failure<E>(
        self,
        stop: StopReason,
        delivered: u64,
        last: E,
    ) -> Failure<E> {
        Failure {
            attempts: self.0,
            stop,
            delivered,
            last_event_id: None,
            retry_in: None,
            last,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    #[derive(Debug)]
    struct Io(std::io::Error);

    impl Classify for Io {
        fn classify(&self) -> ErrorClass {
            self.0.classify()
        }
        fn variant(&self) -> &'static str {
            self.0.variant()
        }
        fn retry_after(&self) -> Option<Duration> {
            Some(Duration::from_secs(1))
        }
        fn hint(&self) -> Option<Cow<'static, str>> {
            Some(Cow::Borrowed("wait"))
        }
    }

    fn failure(delays: &[Option<Duration>], stop: StopReason) -> Failure<Io> {
        let mut provenance = Provenance::new();
        let error = Io(std::io::ErrorKind::ConnectionReset.into());
        for (i, delay) in delays.iter().enumerate() {
            let number = u32::try_from(i).unwrap() + 1;
            provenance.record(number, &error, error.classify(), *delay);
        }
        provenance.into_failure(stop, error)
    }

    #[test]
    fn display_is_one_line_with_every_attempt() {
        let one = failure(&[None], StopReason::NotRetryable);
        assert_eq!(
            one.to_string(),
            "gave up after 1 attempt (not retryable): transient ConnectionReset"
        );
        let jittered = failure(
            &[
                Some(Duration::from_nanos(183_402_117)),
                Some(Duration::from_nanos(1_500)),
                None,
            ],
            StopReason::Deadline,
        );
        assert_eq!(
            jittered.to_string(),
            "gave up after 3 attempts (deadline): transient ConnectionReset, waited 183ms; \
             transient ConnectionReset, waited 2µs; transient ConnectionReset"
        );
        assert!(!jittered.to_string().contains('\n'));
        let huge = failure(&[Some(Duration::MAX), None], StopReason::HintTooLong);
        assert!(huge.to_string().contains("(hint too long)"));
        assert_eq!(huge.waited(), Duration::MAX);
    }

    #[test]
    fn classify_and_source_forward_to_the_last_error() {
        let failure = failure(&[None], StopReason::Budget);
        assert_eq!(failure.classify(), ErrorClass::Transient);
        assert_eq!(failure.variant(), "ConnectionReset");
        assert_eq!(failure.retry_after(), Some(Duration::from_secs(1)));
        assert_eq!(failure.hint().as_deref(), Some("wait"));
        assert_eq!(failure.last().0.kind(), std::io::ErrorKind::ConnectionReset);

        let failure = Provenance::new().into_failure(
            StopReason::Exhausted,
            std::io::Error::from(std::io::ErrorKind::TimedOut),
        );
        let source = std::error::Error::source(&failure).unwrap();
        assert_eq!(source.to_string(), "timed out");
    }
}
