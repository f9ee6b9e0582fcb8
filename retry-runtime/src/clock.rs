//! The clocks a call keeps time on: [`Clock`], tokio's or the system's
//! (the one it sleeps on, read as a `std` `Instant` either way), and the
//! least time an attempt needs before a deadline, [`MIN_ATTEMPT`]; and
//! the two conversions every part keeps its times by: a `Duration` to
//! saturating nanoseconds, and an `Instant` to nanoseconds since the
//! process's guard epoch.
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The least time left before a call's deadline for an attempt to start:
/// one tick of tokio's timer, which counts whole milliseconds, so a
/// shorter time limit would be rounded to nothing or to a tick past the
/// deadline. A retry is not planned that would start later, after the
/// sleep's rounding; a wake-up that comes later anyway (a busy machine)
/// gives up with the last attempt's error and [`StopReason::Deadline`](crate::StopReason::Deadline).
///
/// ```
/// use std::time::Duration;
///
/// assert_eq!(tenacious::MIN_ATTEMPT, Duration::from_millis(1));
/// ```
pub const MIN_ATTEMPT: Duration = Duration::from_millis(1);
/// [`MIN_ATTEMPT`] in nanoseconds.
pub const MIN_ATTEMPT_NANOS: u64 = 1_000_000;
/// What a sleep may overrun its delay by on tokio's timer, which rounds
/// every wake-up up to its next millisecond tick.
pub const TIMER_ROUNDING_NANOS: u64 = 1_000_000;

/// Which clock a call keeps its deadline and elapsed time on: the one it
/// sleeps on.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// tokio's clock (async fns and loops), which follows a paused test
    /// clock.
    Tokio,
    /// The system's monotonic clock (sync fns and blocking loops, which
    /// sleep the thread).
    System,
}

/// Now on the system clock if `system`, else on tokio's.
#[inline]
pub(crate) fn now_on(system: bool) -> std::time::Instant {
    if system {
        std::time::Instant::now()
    } else {
        tokio::time::Instant::now().into_std()
    }
}

/// Converts to nanoseconds, saturating at `u64::MAX` (about 584 years).
// `u64::try_from` is not `const`; the cast is guarded by the comparison.
#[allow(clippy::cast_possible_truncation)]
pub const fn saturating_nanos(d: std::time::Duration) -> u64 {
    let nanos = d.as_nanos();
    if nanos > u64::MAX as u128 {
        u64::MAX
    } else {
        nanos as u64
    }
}

/// Nanoseconds from the process's guard epoch to `at` (1 at the epoch and
/// before it, so 0 can mean "never"): the clock every in-process guard keeps
/// its times on, as atomics.
pub fn since_epoch(at: Instant) -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    // An hour before the first time seen, so an instant of another clock
    // a little behind it (the system's, beside tokio's auto-advanced one)
    // still counts from it.
    let epoch = *EPOCH.get_or_init(|| at.checked_sub(Duration::from_secs(3600)).unwrap_or(at));
    // Plus one, so that 0 stays "never closed".
    saturating_nanos(at.saturating_duration_since(epoch)).saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn durations_saturate(secs in any::<u64>(), nanos in 0..1_000_000_000u32) {
            let d = Duration::new(secs, nanos);
            let expected = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
            prop_assert_eq!(saturating_nanos(d), expected);
        }
    }
}
