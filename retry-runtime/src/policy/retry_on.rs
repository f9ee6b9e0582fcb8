//! [`RetryOn`]: the set of classes a policy retries.
use std::fmt;
use std::ops::{BitOr, BitOrAssign};

use crate::ErrorClass;

/// The set of classes a policy retries: `Transient`, `RateLimited` or both.
///
/// `Invalid` and `Fatal` cannot be put in it: retrying a wrong request
/// unchanged, or one a human must fix, only repeats the failure. Sets join
/// with `|` (or [`union`](RetryOn::union) in a `const`).
///
/// ```
/// use tenacious::{ErrorClass, RetryOn};
///
/// let on = RetryOn::TRANSIENT | RetryOn::RATE_LIMITED;
/// assert_eq!(on, RetryOn::DEFAULT);
/// assert!(on.contains(ErrorClass::RateLimited));
/// assert!(!RetryOn::TRANSIENT.contains(ErrorClass::RateLimited));
/// assert!(!on.contains(ErrorClass::Invalid));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RetryOn(u8);

impl RetryOn {
    /// Only `Transient`.
    pub const TRANSIENT: Self = Self(1);
    /// Only `RateLimited`.
    pub const RATE_LIMITED: Self = Self(2);
    /// `Transient | RateLimited`, the default.
    pub const DEFAULT: Self = Self(3);

    /// Both sets.
    #[must_use]
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    /// Whether errors of `class` are retried.
    #[must_use]
    pub const fn contains(self, class: ErrorClass) -> bool {
        let bit = match class {
            ErrorClass::Transient => Self::TRANSIENT.0,
            ErrorClass::RateLimited => Self::RATE_LIMITED.0,
            ErrorClass::Invalid | ErrorClass::Fatal => return false,
        };
        self.0 & bit != 0
    }
}

impl Default for RetryOn {
    /// [`RetryOn::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl BitOr for RetryOn {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        self.union(rhs)
    }
}

impl BitOrAssign for RetryOn {
    fn bitor_assign(&mut self, rhs: Self) {
        *self = self.union(rhs);
    }
}

impl fmt::Debug for RetryOn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RetryOn(")?;
        let mut sep = "";
        for class in [ErrorClass::Transient, ErrorClass::RateLimited] {
            if self.contains(class) {
                write!(f, "{sep}{class:?}")?;
                sep = " | ";
            }
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_on_never_holds_invalid_or_fatal() {
        let all = [RetryOn::TRANSIENT, RetryOn::RATE_LIMITED, RetryOn::DEFAULT];
        for a in all {
            for b in all {
                let set = a | b;
                assert!(!set.contains(ErrorClass::Invalid));
                assert!(!set.contains(ErrorClass::Fatal));
                assert_eq!(set, a.union(b));
            }
        }
        let mut on = RetryOn::TRANSIENT;
        assert!(!on.contains(ErrorClass::RateLimited));
        on |= RetryOn::RATE_LIMITED;
        assert_eq!(on, RetryOn::DEFAULT);
        assert_eq!(RetryOn::default(), RetryOn::DEFAULT);
    }

    #[test]
    fn retry_on_debug_names_the_classes() {
        assert_eq!(format!("{:?}", RetryOn::TRANSIENT), "RetryOn(Transient)");
        assert_eq!(
            format!("{:?}", RetryOn::DEFAULT),
            "RetryOn(Transient | RateLimited)"
        );
    }
}
