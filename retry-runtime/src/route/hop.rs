//! [`Hop`]: a target's error as its policy sees it.
use crate::{Classify, Elapsed, ErrorClass, Limit, Limits, Refused};

use super::outcome::TargetError;

/// A target's error as its policy sees it: the call's own, its silence,
/// or a guard's refusal (so an open breaker stops the call without an
/// attempt, whatever the call's error type).
#[derive(Debug)]
pub(super) enum Hop<E> {
    Answer(E),
    Silent(Elapsed),
    Guard(Refused),
}

impl<E: Classify> Classify for Hop<E> {
    fn classify(&self) -> ErrorClass {
        match self {
            Self::Answer(error) => error.classify(),
            // Counted against the target (its breaker hears it) ...
            Self::Silent(_) => ErrorClass::Transient,
            Self::Guard(refused) => refused.classify(),
        }
    }

    fn limits(&self) -> Limits {
        match self {
            // ... but not retried there: the route moves on.
            Self::Silent(_) => Limits::NONE.max(1),
            _ => self.inner().map_or(Limits::NONE, Classify::limits),
        }
    }

    fn inner(&self) -> Option<&dyn Classify> {
        Some(match self {
            Self::Answer(error) => error,
            Self::Silent(elapsed) => elapsed,
            Self::Guard(refused) => refused,
        })
    }

    fn refused() -> Option<fn(Refused) -> Self> {
        Some(Self::Guard)
    }
}

impl<E: From<Elapsed>> From<Elapsed> for Hop<E> {
    /// A stream's first item that did not come in time is the target's
    /// silence; another timer (a stall once committed) is the call's own
    /// error, as its policy would make it.
    fn from(elapsed: Elapsed) -> Self {
        match elapsed.which() {
            Limit::FirstItem => Self::Silent(elapsed),
            _ => Self::Answer(E::from(elapsed)),
        }
    }
}

impl<E> Hop<E> {
    /// Whether the target was silent.
    pub(super) const fn is_silent(&self) -> bool {
        matches!(self, Self::Silent(_))
    }

    /// What a result reports of it.
    pub(super) fn into_target_error(self) -> TargetError<E> {
        match self {
            Self::Answer(error) => TargetError::Answer(error),
            Self::Silent(elapsed) => TargetError::Silent(elapsed),
            Self::Guard(refused) => TargetError::GuardRefused(refused),
        }
    }
}
