//! The clocks a call keeps time on: [`Clock`], tokio's or the system's
//! (the one it sleeps on, read as a `std` `Instant` either way), and the
//! least time an attempt needs before a deadline, [`MIN_ATTEMPT`].
use std::time::Duration;

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
pub(crate) const MIN_ATTEMPT_NANOS: u64 = 1_000_000;
/// What a sleep may overrun its delay by on tokio's timer, which rounds
/// every wake-up up to its next millisecond tick.
pub(crate) const TIMER_ROUNDING_NANOS: u64 = 1_000_000;

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
