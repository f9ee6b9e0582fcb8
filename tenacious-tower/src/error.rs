//! What a retried service returns when it gives up with no response to
//! hand back ([`Error`]), and what one attempt's failure is to the engine
//! (`Attempted`).
use std::fmt;

use tenacious_runtime::{Classify, Elapsed, ErrorClass, Refused};

/// The error of a [`RetryService`](super::RetryService): the last
/// attempt's, when the policy gave up without a response to return.
///
/// A response the check calls bad is no error: after the last attempt it
/// is returned as `Ok` (see [`RetryService`](super::RetryService)). So
/// this is what went wrong below HTTP: the inner service failed, an
/// attempt ran out of the policy's time, or a guard refused the call
/// before it sent anything.
///
/// It is [`Classify`] as the error it holds, so a retried call around the
/// service (a `#[retry]` fn, an outer layer) classifies it the same way,
/// and an [`Error`](std::error::Error) whose `source` is the inner error,
/// so it converts into tower's `BoxError` for layers such as `timeout`
/// that stack on top.
///
/// ```
/// use std::io;
/// use tenacious::tower::Error;
/// use tenacious::{Classify, ErrorClass, Refused, StopReason};
///
/// let reset: Error<io::Error> = Error::Service(io::ErrorKind::ConnectionReset.into());
/// assert_eq!(reset.classify(), ErrorClass::Transient);
/// assert_eq!(reset.to_string(), "connection reset");
/// assert_eq!(reset.into_service().map(|e| e.kind()), Some(io::ErrorKind::ConnectionReset));
///
/// let refused: Error<io::Error> = Error::GuardRefused(Refused::new(StopReason::CircuitOpen));
/// assert!(refused.not_sent());
/// assert_eq!(refused.to_string(), "refused before the first attempt (circuit open)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error<E> {
    /// The inner service's error, from its last attempt: its call, or its
    /// readiness (`poll_ready`) before the call.
    Service(E),
    /// The last attempt ran out of the policy's
    /// [`timeout`](tenacious_runtime::Policy::timeout), or of what its
    /// [`deadline`](tenacious_runtime::Policy::deadline) left; transient.
    TimedOut(Elapsed),
    /// A guard of the policy (an open [`Breaker`](tenacious_runtime::Breaker), a
    /// [`Cooldown`](tenacious_runtime::Cooldown) longer than the call may wait) refused
    /// the call before its first attempt: nothing was sent.
    GuardRefused(Refused),
}

impl<E> Error<E> {
    /// The inner service's error, if that is what this is.
    #[must_use]
    pub fn into_service(self) -> Option<E> {
        match self {
            Self::Service(error) => Some(error),
            Self::TimedOut(_) | Self::GuardRefused(_) => None,
        }
    }

    /// The inner service's error, by reference, if that is what this is.
    #[must_use]
    pub const fn service(&self) -> Option<&E> {
        match self {
            Self::Service(error) => Some(error),
            Self::TimedOut(_) | Self::GuardRefused(_) => None,
        }
    }
}

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Service(error) => error.fmt(f),
            Self::TimedOut(elapsed) => elapsed.fmt(f),
            Self::GuardRefused(refused) => refused.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for Error<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Service(error) => Some(error),
            Self::TimedOut(elapsed) => Some(elapsed),
            Self::GuardRefused(refused) => Some(refused),
        }
    }
}

/// As the error it holds.
impl<E: Classify> Classify for Error<E> {
    fn classify(&self) -> ErrorClass {
        self.as_dyn().classify()
    }
    /// The error held: every method not written here is its.
    fn inner(&self) -> Option<&dyn Classify> {
        Some(self.as_dyn())
    }
    /// [`Error::GuardRefused`].
    fn refused() -> Option<fn(Refused) -> Self> {
        Some(Self::GuardRefused)
    }
}

impl<E: Classify> tenacious_runtime::Refusable for Error<E> {}

impl<E: Classify> Error<E> {
    fn as_dyn(&self) -> &dyn Classify {
        match self {
            Self::Service(error) => error,
            Self::TimedOut(elapsed) => elapsed,
            Self::GuardRefused(refused) => refused,
        }
    }
}

/// How one attempt failed, as the engine is told: the inner service's
/// error, a response the check called bad (kept, to be returned if it is
/// the last), or the attempt's time ran out — `sent` says whether the
/// request had gone to the inner service by then.
#[derive(Debug)]
pub(crate) enum Attempted<E, R, X> {
    Service(E),
    Response { response: R, bad: X },
    Elapsed { elapsed: Elapsed, sent: bool },
}

impl<E: Classify, R, X: Classify> Attempted<E, R, X> {
    fn as_dyn(&self) -> &dyn Classify {
        match self {
            Self::Service(error) => error,
            Self::Response { bad, .. } => bad,
            Self::Elapsed { elapsed, .. } => elapsed,
        }
    }
}

/// As the error, the check's verdict or the `Elapsed` it holds.
impl<E: Classify, R, X: Classify> Classify for Attempted<E, R, X> {
    fn classify(&self) -> ErrorClass {
        self.as_dyn().classify()
    }
    /// What it holds: every method not written here is its.
    fn inner(&self) -> Option<&dyn Classify> {
        Some(self.as_dyn())
    }
    /// An attempt that ran out of time while the inner service was not
    /// ready yet never sent its request.
    fn not_sent(&self) -> bool {
        match self {
            Self::Elapsed { sent, .. } => !sent,
            _ => self.as_dyn().not_sent(),
        }
    }
}
