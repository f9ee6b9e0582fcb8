//! `Elapsed`: the error of an attempt that ran out of time, and [`Limit`],
//! which of its time limits it ran out of.
use std::fmt;
use std::time::Duration;

use crate::{Classify, ErrorClass};

/// An attempt ran past one of its time limits: its per-attempt timeout,
/// or, for a retried stream, the time to its first item, the idle time
/// between items, or the call's deadline ([`which`](Elapsed::which) says).
///
/// `#[retry(timeout = "...")]` (and [`Policy::retry_timed`]) bound each
/// attempt of an async call; an attempt still running at the limit is
/// dropped and counts as the error `E::from(Elapsed)`, so the fn's error type
/// needs a `From<Elapsed>` impl. `Elapsed` is [`Transient`]: a slow attempt
/// may well be quick the next time. It is a `Copy` value that only carries
/// the limit it hit (and, for [`Limit::Held`], the items held).
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
    which: Limit,
    // With `Limit::Held`: the items held.
    held: u32,
}

/// Which limit an [`Elapsed`] ran out of: a time limit, or, for a
/// retried stream, a bound that is no time (see each variant).
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Elapsed, Limit};
///
/// let stalled = Elapsed::of(Limit::Idle, Duration::from_secs(30));
/// assert_eq!(stalled.which(), Limit::Idle);
/// assert_eq!(stalled.to_string(), "stream made no progress for 30s");
/// assert_eq!(Elapsed::new(Duration::from_secs(1)).which(), Limit::Timeout);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The per-attempt [`timeout`](crate::Policy::timeout).
    Timeout,
    /// A retried stream's [`first_item`](crate::Policy::first_item): no
    /// content item came that long after the attempt started.
    FirstItem,
    /// A retried stream's [`idle`](crate::Policy::idle): no progress that
    /// long between items (keepalives are not progress).
    Idle,
    /// The call's [`deadline`](crate::Policy::deadline), over the whole
    /// of a retried stream.
    Deadline,
    /// A resumed attempt of a retried stream ended before it caught up
    /// with the items its consumer has: its source ended cleanly before it
    /// sent the last delivered id again, or an item past it (see
    /// [`resume`](crate::Policy::resume)). The answer is cut, not
    /// complete, so the attempt failed. No time: its
    /// [`limit`](Elapsed::limit) is zero.
    CatchUp,
    /// A retried stream's source sent more preamble before its first
    /// content item than the policy lets it hold
    /// ([`max_held`](crate::Policy::max_held) items, or
    /// [`max_held_bytes`](crate::Policy::max_held_bytes)): the stream
    /// stops, and [`held`](Elapsed::held) says how many items it had
    /// held (and dropped). No time: its [`limit`](Elapsed::limit) is zero.
    Held,
}

impl Limit {
    /// The limit as one snake_case word: `"timeout"`, `"first_item"`,
    /// `"idle"`, `"deadline"` (the `timer` label of the stream metrics),
    /// `"catch_up"` or `"held"`.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::FirstItem => "first_item",
            Self::Idle => "idle",
            Self::Deadline => "deadline",
            Self::CatchUp => "catch_up",
            Self::Held => "held",
        }
    }
}

impl Elapsed {
    /// An attempt that ran out of its per-attempt timeout, `limit`.
    #[must_use]
    pub const fn new(limit: Duration) -> Self {
        Self {
            limit,
            which: Limit::Timeout,
            held: 0,
        }
    }

    /// An attempt that ran out of the time limit `which`, of `limit`.
    #[must_use]
    pub const fn of(which: Limit, limit: Duration) -> Self {
        Self {
            limit,
            which,
            held: 0,
        }
    }

    /// A retried stream that held `held` items, and stopped at its bound
    /// ([`Limit::Held`]).
    pub(crate) const fn held_back(held: u32) -> Self {
        Self {
            limit: Duration::ZERO,
            which: Limit::Held,
            held,
        }
    }

    /// With [`Limit::Held`]: how many items the stream held before its
    /// first content item when it stopped (they are dropped). `None` for
    /// any other limit.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::{Elapsed, Limit};
    ///
    /// assert_eq!(Elapsed::of(Limit::Idle, Duration::from_secs(1)).held(), None);
    /// ```
    #[must_use]
    pub const fn held(&self) -> Option<u32> {
        match self.which {
            Limit::Held => Some(self.held),
            _ => None,
        }
    }

    /// How long the attempt was allowed to run (for [`Limit::Idle`], to
    /// wait without progress).
    #[must_use]
    pub const fn limit(&self) -> Duration {
        self.limit
    }

    /// Which limit it ran out of.
    #[must_use]
    pub const fn which(&self) -> Limit {
        self.which
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = self.limit;
        match self.which {
            Limit::Timeout => write!(f, "attempt timed out after {limit:?}"),
            Limit::FirstItem => write!(f, "stream sent no first item within {limit:?}"),
            Limit::Idle => write!(f, "stream made no progress for {limit:?}"),
            Limit::Deadline => write!(f, "stream ran past the call's deadline of {limit:?}"),
            Limit::CatchUp => {
                f.write_str("resumed stream ended before it caught up with the items delivered")
            }
            Limit::Held => write!(
                f,
                "stream held {} preamble items before its first content, as many as its policy allows",
                self.held
            ),
        }
    }
}

impl std::error::Error for Elapsed {}

/// [`ErrorClass::Transient`], but [`Limit::Held`]'s
/// [`ErrorClass::Invalid`] (the same stream would hold as much again);
/// `variant()` is `"Elapsed"` for a timeout, `"FirstItem"`, `"Idle"`,
/// `"Deadline"`, `"CatchUp"` or `"Held"` for a stream's limits.
impl Classify for Elapsed {
    fn classify(&self) -> ErrorClass {
        match self.which {
            Limit::Held => ErrorClass::Invalid,
            _ => ErrorClass::Transient,
        }
    }

    fn variant(&self) -> &'static str {
        match self.which {
            Limit::Timeout => "Elapsed",
            Limit::FirstItem => "FirstItem",
            Limit::Idle => "Idle",
            Limit::Deadline => "Deadline",
            Limit::CatchUp => "CatchUp",
            Limit::Held => "Held",
        }
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
