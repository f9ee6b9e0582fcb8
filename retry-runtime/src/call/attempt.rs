//! [`Attempt`]: what the body of a retried call can ask about the attempt
//! running it. It reads the attempt context (`context.rs`) and, through
//! the frame there, four getters of the call's engine (number, limit,
//! clock, key).
use std::time::Duration;

use crate::call::context::with_current;
use crate::clock::now_on;
use crate::engine::key::IdempotencyKey;

/// The attempt running now: its number, the call's limit, how long the call
/// has run and its [`IdempotencyKey`].
///
/// [`Attempt::current`] gives it inside the body of a `#[retry]` fn or the
/// closure a [`Policy`](crate::Policy) runs, sync or async (in the task
/// running the attempt: a task it spawns does not see it), and `None`
/// anywhere else.
///
/// ```
/// use std::io;
/// use tenacious::{Attempt, Policy};
///
/// assert!(Attempt::current().is_none());
///
/// let mut seen = Vec::new();
/// let result = Policy::new().base(std::time::Duration::ZERO).retry_blocking(|| {
///     let attempt = Attempt::current().expect("inside a retried call");
///     seen.push((attempt.number(), attempt.max(), attempt.idempotency_key()));
///     if attempt.number() < 3 { Err(io::Error::from(io::ErrorKind::TimedOut)) } else { Ok(()) }
/// });
/// assert!(result.is_ok());
/// assert_eq!(seen.iter().map(|s| (s.0, s.1)).collect::<Vec<_>>(), [(1, 3), (2, 3), (3, 3)]);
/// // One logical call, one key.
/// assert!(seen.iter().all(|s| s.2 == seen[0].2));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    number: u32,
    max: u32,
    start: std::time::Instant,
    /// The call keeps time on the system clock (it sleeps the thread), not
    /// on tokio's.
    system_clock: bool,
    key: IdempotencyKey,
}

impl Attempt {
    /// The attempt running on this thread (or in this task), if any.
    ///
    /// Cheap: one thread-local read. The first call in a logical call draws
    /// its key and, unless a `deadline` or `timeout` started it already,
    /// starts its clock (see [`elapsed`](Attempt::elapsed)).
    #[must_use]
    pub fn current() -> Option<Self> {
        with_current(|frame| {
            let (start, system_clock) = frame.engine.clock_start();
            Self {
                number: frame.engine.attempt_number(),
                max: frame.engine.max(),
                start,
                system_clock,
                key: frame.engine.key(),
            }
        })
    }

    /// This attempt's number, 1 for the first.
    #[must_use]
    pub const fn number(&self) -> u32 {
        self.number
    }

    /// The most attempts this call makes: the policy's `max`, or 1 for a
    /// call nested in another retried call (see [`Nested`](crate::Nested)).
    #[must_use]
    pub const fn max(&self) -> u32 {
        self.max
    }

    /// How long the logical call has been running at the moment this is
    /// called, on the clock it sleeps on: tokio's for an async call (so it
    /// follows a paused test clock), the system's for a sync one.
    ///
    /// With a `deadline` or a `timeout` the clock starts when the first
    /// attempt does. Without either, the retry loop reads no clock of its
    /// own, on the happy path or between attempts: the clock starts the
    /// first time an attempt of the call asks for [`Attempt::current`], so a
    /// body that asks as it begins measures from its first attempt's start.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::{Attempt, Policy};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let mut seen = Vec::new();
    /// let _ = Policy::new()
    ///     .base(Duration::from_secs(1))
    ///     .jitter(tenacious::Jitter::None)
    ///     .retry(|| {
    ///         seen.push(Attempt::current().unwrap().elapsed());
    ///         async { Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut)) }
    ///     })
    ///     .await;
    /// // Waited 1 s, then 2 s, on the paused clock.
    /// assert_eq!(seen, [Duration::ZERO, Duration::from_secs(1), Duration::from_secs(3)]);
    /// # }
    /// ```
    #[must_use]
    pub fn elapsed(&self) -> Duration {
        now_on(self.system_clock).saturating_duration_since(self.start)
    }

    /// The key every attempt of this logical call shares.
    #[must_use]
    pub const fn idempotency_key(&self) -> IdempotencyKey {
        self.key
    }
}
