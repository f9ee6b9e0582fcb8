//! The level of each give-up event (feature `tracing`): it follows why the
//! call stopped, so routine give-ups (an `Invalid` answer the agent layer
//! hands back to the model, a nested call's one attempt) are not errors.
use std::sync::RwLock;

use tracing::Level;

use crate::{ErrorClass, StopReason};

/// The level of the `tracing` event of each give-up, by its
/// [`StopReason`], and for [`StopReason::NotRetryable`] by the error's
/// class; `None` emits no event. Installed for the whole process with
/// [`set_give_up_levels`]; read by every give-up event after.
///
/// The defaults ([`GiveUpLevels::DEFAULT`]):
///
/// | stop | level | why |
/// |---|---|---|
/// | `exhausted` | `ERROR` | every attempt failed: the provider is in trouble |
/// | `not_retryable`, a `fatal` error | `ERROR` | a human must fix it |
/// | `not_retryable`, an `invalid` error | `INFO` | the caller (the model) must change the request, by design |
/// | `not_retryable`, a `transient` or `rate_limited` error | `INFO` | the policy chose not to retry it (`on`, `when`) |
/// | `nested` | `DEBUG` | the outer call decides |
/// | `hint_too_long`, `deadline`, `budget`, `guard`, `cooldown`, `circuit_open`, `partial_output`, `not_idempotent` | `WARN` | a limit did its job |
///
/// ```
/// use tenacious::stats::{self, GiveUpLevels};
/// use tenacious::{ErrorClass, StopReason};
/// use tracing::Level;
///
/// // A service whose budget refusals page someone, and whose invalid
/// // answers are too many to log.
/// let levels = GiveUpLevels::DEFAULT
///     .reason(StopReason::Budget, Some(Level::ERROR))
///     .not_retryable(ErrorClass::Invalid, None);
/// stats::set_give_up_levels(levels);
/// assert_eq!(stats::give_up_levels().level(StopReason::Budget, ErrorClass::Transient), Some(Level::ERROR));
/// assert_eq!(stats::give_up_levels().level(StopReason::NotRetryable, ErrorClass::Invalid), None);
/// assert_eq!(GiveUpLevels::DEFAULT.level(StopReason::NotRetryable, ErrorClass::Fatal), Some(Level::ERROR));
/// ```
#[cfg(feature = "tracing")] // on the item too, for its feature badge where it is re-exported
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GiveUpLevels {
    by_reason: [Option<Level>; StopReason::ALL.len()],
    /// `NotRetryable`, by the class's position in `ErrorClass::ALL`.
    not_retryable: [Option<Level>; ErrorClass::ALL.len()],
}

impl GiveUpLevels {
    /// The defaults, in the table above.
    pub const DEFAULT: Self = {
        let mut by_reason = [Some(Level::WARN); StopReason::ALL.len()];
        by_reason[StopReason::Exhausted.index()] = Some(Level::ERROR);
        by_reason[StopReason::Nested.index()] = Some(Level::DEBUG);
        // Read by class instead; kept for `reason(NotRetryable, ..)`.
        by_reason[StopReason::NotRetryable.index()] = Some(Level::INFO);
        let mut not_retryable = [Some(Level::INFO); ErrorClass::ALL.len()];
        not_retryable[ErrorClass::Fatal.index()] = Some(Level::ERROR);
        Self {
            by_reason,
            not_retryable,
        }
    };

    /// The give-ups stopped by `reason` at `level` (`None`: no event). For
    /// [`StopReason::NotRetryable`] it sets every class's level; see
    /// [`not_retryable`](GiveUpLevels::not_retryable) for one.
    #[must_use]
    pub const fn reason(mut self, reason: StopReason, level: Option<Level>) -> Self {
        self.by_reason[reason.index()] = level;
        if let StopReason::NotRetryable = reason {
            self.not_retryable = [level; ErrorClass::ALL.len()];
        }
        self
    }

    /// The give-ups at an error of `class` the policy does not retry
    /// ([`StopReason::NotRetryable`]) at `level` (`None`: no event).
    #[must_use]
    pub const fn not_retryable(mut self, class: ErrorClass, level: Option<Level>) -> Self {
        self.not_retryable[class.index()] = level;
        self
    }

    /// The level of a give-up stopped by `reason` at an error of `class`.
    #[must_use]
    pub const fn level(&self, reason: StopReason, class: ErrorClass) -> Option<Level> {
        match reason {
            StopReason::NotRetryable => self.not_retryable[class.index()],
            _ => self.by_reason[reason.index()],
        }
    }

    /// The level of a give-up stopped by `reason` whose error's class is
    /// not at hand (a call that woke too late for its next attempt).
    pub(crate) const fn of_reason(&self, reason: StopReason) -> Option<Level> {
        self.by_reason[reason.index()]
    }
}

impl Default for GiveUpLevels {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The levels in force; the give-up path is cold, so a lock is cheap here.
static LEVELS: RwLock<GiveUpLevels> = RwLock::new(GiveUpLevels::DEFAULT);

/// Installs `levels` for every give-up event from now on, in every thread
/// (feature `tracing`). Default: [`GiveUpLevels::DEFAULT`]. See
/// [`GiveUpLevels`] for an example.
#[cfg(feature = "tracing")] // on the item too, for its feature badge where it is re-exported
pub fn set_give_up_levels(levels: GiveUpLevels) {
    // A poisoned lock only means a writer panicked between two plain
    // stores: the value is whole either way.
    *LEVELS
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = levels;
}

/// The levels in force (see [`set_give_up_levels`]).
///
/// ```
/// use tenacious::stats;
/// use tenacious::{ErrorClass, StopReason};
/// use tracing::Level;
///
/// let levels = stats::give_up_levels();
/// assert_eq!(levels.level(StopReason::Exhausted, ErrorClass::Transient), Some(Level::ERROR));
/// ```
#[must_use]
#[cfg(feature = "tracing")] // on the item too, for its feature badge where it is re-exported
pub fn give_up_levels() -> GiveUpLevels {
    *LEVELS
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_class_positions_are_error_class_all() {
        for (i, class) in ErrorClass::ALL.iter().enumerate() {
            assert_eq!(class.index(), i);
        }
    }

    #[test]
    fn the_defaults_are_the_documented_table() {
        let d = GiveUpLevels::DEFAULT;
        let t = ErrorClass::Transient;
        assert_eq!(d.level(StopReason::Exhausted, t), Some(Level::ERROR));
        assert_eq!(d.level(StopReason::Nested, t), Some(Level::DEBUG));
        assert_eq!(
            d.level(StopReason::NotRetryable, ErrorClass::Fatal),
            Some(Level::ERROR)
        );
        for class in [
            ErrorClass::Invalid,
            ErrorClass::Transient,
            ErrorClass::RateLimited,
        ] {
            assert_eq!(d.level(StopReason::NotRetryable, class), Some(Level::INFO));
        }
        for reason in [
            StopReason::HintTooLong,
            StopReason::Deadline,
            StopReason::Budget,
            StopReason::Guard,
            StopReason::Cooldown,
            StopReason::CircuitOpen,
            StopReason::PartialOutput,
            StopReason::NotIdempotent,
            StopReason::Concurrency,
        ] {
            assert_eq!(d.level(reason, t), Some(Level::WARN), "{reason:?}");
        }
    }

    #[test]
    fn reason_not_retryable_sets_every_class() {
        let quiet = GiveUpLevels::DEFAULT.reason(StopReason::NotRetryable, None);
        for class in ErrorClass::ALL {
            assert_eq!(quiet.level(StopReason::NotRetryable, class), None);
        }
    }
}
