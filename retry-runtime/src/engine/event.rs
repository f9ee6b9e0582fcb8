//! What `notify` is told before each sleep: [`RetryEvent`].
use std::time::Duration;

use crate::ErrorClass;

/// What `notify` is told before each sleep.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Policy, RetryEvent};
///
/// let mut events: Vec<RetryEvent> = Vec::new();
/// let mut calls = 0;
/// let result = Policy::new().base(Duration::ZERO).retry_blocking_with(
///     || {
///         calls += 1;
///         if calls < 3 { Err(std::io::Error::from(std::io::ErrorKind::TimedOut)) } else { Ok(calls) }
///     },
///     |_| true,
///     |_, event| events.push(*event),
/// );
/// assert_eq!(result.unwrap(), 3);
/// let attempts: Vec<u32> = events.iter().map(|e| e.attempt).collect();
/// assert_eq!(attempts, [1, 2]);
/// assert_eq!(events[0].max, 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryEvent {
    /// The attempt that failed, 1-based.
    pub attempt: u32,
    /// Total attempts allowed.
    pub max: u32,
    /// How long the engine will sleep before the next attempt.
    pub delay: Duration,
    /// The failed attempt's class.
    pub class: ErrorClass,
}
