//! `Elapsed`: the error of an attempt that ran out of time.
use std::fmt;
use std::time::Duration;

use crate::{Classify, ErrorClass};

/// An attempt ran past its per-attempt timeout.
///
/// `#[retry(timeout = "...")]` (and [`Policy::retry_timed`]) bound each
/// attempt of an async call; an attempt still running at the limit is
/// dropped and counts as the error `E::from(Elapsed)`, so the fn's error type
/// needs a `From<Elapsed>` impl. `Elapsed` is [`Transient`]: a slow attempt
/// may well be quick the next time. It is a `Copy` value that only carries
/// the limit it hit.
///
/// The limit is the policy's timeout, or less when a deadline leaves less
/// time than that for the attempt.
///
/// [`Policy::retry_timed`]: crate::Policy::retry_timed
/// [`Transient`]: ErrorClass::Transient
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classify, Elapsed, ErrorClass};
///
/// #[derive(Debug)]
/// enum ToolError {
///     Timeout(Elapsed),
///     Refused,
/// }
///
/// impl From<Elapsed> for ToolError {
///     fn from(elapsed: Elapsed) -> Self {
///         ToolError::Timeout(elapsed)
///     }
/// }
///
/// let elapsed = Elapsed::new(Duration::from_secs(2));
/// assert_eq!(elapsed.limit(), Duration::from_secs(2));
/// assert_eq!(elapsed.classify(), ErrorClass::Transient);
/// assert_eq!(elapsed.to_string(), "attempt timed out after 2s");
/// assert!(matches!(ToolError::from(elapsed), ToolError::Timeout(_)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Elapsed {
    limit: Duration,
}

impl Elapsed {
    /// An attempt that ran out of its `limit`.
    #[must_use]
    pub const fn new(limit: Duration) -> Self {
        Self { limit }
    }

    /// How long the attempt was allowed to run.
    #[must_use]
    pub const fn limit(&self) -> Duration {
        self.limit
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attempt timed out after {:?}", self.limit)
    }
}

impl std::error::Error for Elapsed {}

/// Always [`ErrorClass::Transient`]; `variant()` is `"Elapsed"`.
impl Classify for Elapsed {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }

    fn variant(&self) -> &'static str {
        "Elapsed"
    }
}

/// An [`io::ErrorKind::TimedOut`](std::io::ErrorKind::TimedOut) error
/// wrapping the `Elapsed`, so fns returning `io::Result` can take a
/// `timeout` as they are.
///
/// ```
/// use std::io;
/// use std::time::Duration;
/// use tenacious::Elapsed;
///
/// let error = io::Error::from(Elapsed::new(Duration::from_millis(300)));
/// assert_eq!(error.kind(), io::ErrorKind::TimedOut);
/// assert_eq!(error.to_string(), "attempt timed out after 300ms");
/// ```
impl From<Elapsed> for std::io::Error {
    fn from(elapsed: Elapsed) -> Self {
        std::io::Error::new(std::io::ErrorKind::TimedOut, elapsed)
    }
}
