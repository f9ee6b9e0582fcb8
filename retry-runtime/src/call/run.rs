//! The async and blocking loops of `Policy`, the attempt wrappers and the
//! sleeps.
//!
//! Every loop is the loop `#[retry]` expands to, built from the same pieces:
//! an attempt run by [`attempt`], [`attempt_timed`] or [`attempt_blocking`]
//! (the attempt driver, `driver.rs`, which sets the attempt context and, for
//! `attempt_timed`, the timeout), then [`Engine::step`] decides. So a
//! closure run by a `Policy` and a fn under `#[retry]` with the same
//! settings make the same attempts and wait the same delays (for the same
//! jitter seed).
//!
//! The five loops are written out rather than shared: each mirrors the
//! expansion's loop for its kind (async, timed, `Failure`, blocking,
//! blocking `Failure`), with the timer awaited in place, where a shared
//! generic loop would add a future around each attempt. (They hold the
//! failed attempt's result through every wait, for a deadline the policy
//! may or may not have; the expansion does so only for a fn with one.)
use std::future::Future;
use std::ops::ControlFlow;
use std::time::Duration;

use crate::call::driver::{attempt, attempt_blocking, attempt_timed, sleep_blocking};
use crate::call::glue::{
    pace_first, pace_first_blocking, resume, resume_failure, step_failure_held, step_held,
};
use crate::call::pace::{backoff, pace_blocking};
use crate::classify::failure::{Failure, Provenance};
use crate::clock::Clock;
use crate::engine::Engine;
use crate::engine::hooks::{always, ignore};
use crate::{Classify, Elapsed, Policy, RetryEvent};

impl Policy {
    /// Runs `op` until it succeeds or the policy gives up, sleeping on
    /// tokio's clock between attempts; returns the last result.
    ///
    /// `op` is called once per attempt and returns that attempt's future.
    /// Dropping the returned future (say, during a backoff) cancels the call:
    /// no further attempt is made.
    ///
    /// Inside `op` and its future, [`Attempt::current`] describes the
    /// attempt. The policy's deadline, budget and nesting apply; its
    /// per-attempt [`timeout`](Policy::timeout) does not (see
    /// [`retry_timed`](Policy::retry_timed)).
    ///
    /// [`Attempt::current`]: crate::Attempt::current
    ///
    /// # Errors
    ///
    /// The last attempt's error, once the policy stops retrying: the class
    /// is not retried, `max` attempts were made, the server's hint is
    /// longer than `max_retry_after`, the deadline or the budget would be
    /// exceeded, or the call is nested (see [`StopReason`](crate::StopReason)).
    ///
    /// A closure cannot hand out `&mut` borrows of what it captures to the
    /// futures it returns; for `&mut self` methods use `#[retry]`, whose
    /// inline loop reborrows on every attempt.
    ///
    /// # Panics
    ///
    /// When it has to sleep outside a tokio runtime with the time driver
    /// enabled, as [`tokio::time::sleep`] does.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// const POLICY: Policy = Policy::new().max(5).base(Duration::from_millis(10));
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut calls = 0;
    /// let result = POLICY
    ///     .retry(|| {
    ///         calls += 1;
    ///         let attempt = calls;
    ///         async move {
    ///             if attempt < 3 { Err(io::Error::from(io::ErrorKind::ConnectionReset)) } else { Ok(attempt) }
    ///         }
    ///     })
    ///     .await;
    /// assert_eq!(result.unwrap(), 3);
    /// # }
    /// ```
    pub async fn retry<T, E, F, Fut>(&self, op: F) -> Result<T, E>
    where
        E: Classify,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.retry_with(op, always, ignore).await
    }

    /// [`retry`](Policy::retry) with the `when` predicate and the `notify`
    /// hook of `#[retry(when = ..., notify = ...)]`.
    ///
    /// `when` is asked about each error whose class the policy retries;
    /// `false` stops retrying. `notify` is called before each sleep with the
    /// error and a [`RetryEvent`].
    ///
    /// # Errors
    ///
    /// As [`retry`](Policy::retry), and when `when` returns `false`.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let mut delays = Vec::new();
    /// let result: Result<(), io::Error> = Policy::new()
    ///     .base(Duration::from_millis(1))
    ///     .retry_with(
    ///         || async { Err(io::Error::from(io::ErrorKind::TimedOut)) },
    ///         |e| e.kind() == io::ErrorKind::TimedOut,
    ///         |_, event| delays.push(event.delay),
    ///     )
    ///     .await;
    /// assert!(result.is_err());
    /// assert_eq!(delays.len(), 2);
    /// # }
    /// ```
    pub async fn retry_with<T, E, F, Fut, W, N>(
        &self,
        mut op: F,
        mut when: W,
        mut notify: N,
    ) -> Result<T, E>
    where
        E: Classify,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        W: FnMut(&E) -> bool,
        N: FnMut(&E, &RetryEvent),
    {
        // The loop of an async `#[retry]` fn, written out: a shared generic
        // loop would wrap every attempt in one more future (module docs).
        let mut engine = Engine::new(self, Clock::Tokio);
        if engine.wants_pace()
            && let Some(refused) = pace_first(&mut engine).await
        {
            return refused;
        }
        loop {
            // `op` is called inside the block, so within the attempt's
            // context: `Attempt::current()` works in `op` itself too.
            let result = attempt(&mut engine, async { op().await }).await;
            let last = match step_held(&mut engine, result, &mut when, &mut notify) {
                ControlFlow::Break(result) => return result,
                ControlFlow::Continue((delay, last)) => {
                    if !delay.is_zero() || engine.wants_pace() {
                        backoff(&mut engine, delay).await;
                    }
                    last
                }
            };
            if let ControlFlow::Break(last) = resume(&mut engine, last) {
                return last;
            }
        }
    }

    /// [`retry`](Policy::retry) with each attempt bounded by the policy's
    /// [`timeout`](Policy::timeout), cut to what is left of its
    /// [`deadline`](Policy::deadline): an attempt still running then is
    /// dropped and counts as the error `E::from(Elapsed)`, which is
    /// transient. This is the loop of `#[retry(timeout = "...")]`.
    ///
    /// # Errors
    ///
    /// As [`retry`](Policy::retry); a last attempt that timed out gives
    /// `E::from(Elapsed)`.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime with the time driver enabled, when it has
    /// to time an attempt or to sleep.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// const POLICY: Policy = Policy::new().timeout(Duration::from_secs(1));
    /// let mut calls = 0;
    /// let result: Result<u32, io::Error> = POLICY
    ///     .retry_timed(|| {
    ///         calls += 1;
    ///         let call = calls;
    ///         async move {
    ///             if call == 1 {
    ///                 // A server that never answers.
    ///                 std::future::pending::<()>().await;
    ///             }
    ///             Ok(call)
    ///         }
    ///     })
    ///     .await;
    /// assert_eq!(result.unwrap(), 2);
    /// # }
    /// ```
    pub async fn retry_timed<T, E, F, Fut>(&self, op: F) -> Result<T, E>
    where
        E: Classify + From<Elapsed>,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.retry_timed_with(op, always, ignore).await
    }

    /// [`retry_timed`](Policy::retry_timed) with a `when` predicate and a
    /// `notify` hook, as [`retry_with`](Policy::retry_with).
    ///
    /// # Errors
    ///
    /// As [`retry_timed`](Policy::retry_timed), and when `when` returns
    /// `false`.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let mut timeouts = 0;
    /// let result: Result<(), io::Error> = Policy::new()
    ///     .timeout(Duration::from_millis(100))
    ///     .retry_timed_with(
    ///         || std::future::pending(),
    ///         |_: &io::Error| true,
    ///         |e: &io::Error, _| timeouts += u32::from(e.kind() == io::ErrorKind::TimedOut),
    ///     )
    ///     .await;
    /// assert_eq!(result.unwrap_err().kind(), io::ErrorKind::TimedOut);
    /// assert_eq!(timeouts, 2);
    /// # }
    /// ```
    pub async fn retry_timed_with<T, E, F, Fut, W, N>(
        &self,
        mut op: F,
        mut when: W,
        mut notify: N,
    ) -> Result<T, E>
    where
        E: Classify + From<Elapsed>,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        W: FnMut(&E) -> bool,
        N: FnMut(&E, &RetryEvent),
    {
        // The loop of `#[retry(timeout = ...)]`, written out: only it bounds
        // each attempt and notes its timeout for the budget (module docs).
        let mut engine = Engine::new(self, Clock::Tokio);
        if engine.wants_pace()
            && let Some(refused) = pace_first(&mut engine).await
        {
            return refused;
        }
        loop {
            let result = match attempt_timed(&mut engine, async { op().await }).await {
                Ok(result) => result,
                Err(elapsed) => {
                    engine.note_timeout();
                    Err(E::from(elapsed))
                }
            };
            let last = match step_held(&mut engine, result, &mut when, &mut notify) {
                ControlFlow::Break(result) => return result,
                ControlFlow::Continue((delay, last)) => {
                    if !delay.is_zero() || engine.wants_pace() {
                        backoff(&mut engine, delay).await;
                    }
                    last
                }
            };
            if let ControlFlow::Break(last) = resume(&mut engine, last) {
                return last;
            }
        }
    }

    /// [`retry`](Policy::retry), giving up with a [`Failure`]: the last
    /// error, every attempt's class, variant and delay, and the
    /// [`StopReason`](crate::StopReason).
    ///
    /// # Errors
    ///
    /// A [`Failure`] holding the last attempt's error, when the policy
    /// stops retrying.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::{Policy, StopReason};
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let failure = Policy::new()
    ///     .retry_failure(|| async { Err::<(), _>(io::Error::from(io::ErrorKind::NotFound)) })
    ///     .await
    ///     .unwrap_err();
    /// assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
    /// assert_eq!(failure.to_string(), "gave up after 1 attempt (not retryable): invalid NotFound");
    /// # }
    /// ```
    pub async fn retry_failure<T, E, F, Fut>(&self, mut op: F) -> Result<T, Failure<E>>
    where
        E: Classify,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        // The loop of a fn returning `Failure<E>`, written out: only it keeps
        // the provenance (module docs).
        let mut engine = Engine::new(self, Clock::Tokio);
        let mut provenance = Provenance::new();
        if engine.wants_pace()
            && let Some(refused) = pace_first(&mut engine).await
        {
            return refused;
        }
        loop {
            let result = attempt(&mut engine, async { op().await }).await;
            let last = match step_recorded(&mut engine, &mut provenance, result) {
                ControlFlow::Break(result) => return result,
                ControlFlow::Continue((delay, last)) => {
                    if !delay.is_zero() || engine.wants_pace() {
                        backoff(&mut engine, delay).await;
                    }
                    last
                }
            };
            if let ControlFlow::Break(failure) = resume_failure(&mut engine, &mut provenance, last)
            {
                return failure;
            }
        }
    }

    /// Runs `op` until it succeeds or the policy gives up, sleeping the
    /// thread between attempts; returns the last result.
    ///
    /// # Errors
    ///
    /// As [`retry`](Policy::retry).
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// let mut calls = 0;
    /// let result = Policy::new().base(Duration::from_millis(1)).retry_blocking(|| {
    ///     calls += 1;
    ///     if calls < 2 { Err(io::Error::from(io::ErrorKind::Interrupted)) } else { Ok("done") }
    /// });
    /// assert_eq!(result.unwrap(), "done");
    /// assert_eq!(calls, 2);
    /// ```
    pub fn retry_blocking<T, E, F>(&self, op: F) -> Result<T, E>
    where
        E: Classify,
        F: FnMut() -> Result<T, E>,
    {
        self.retry_blocking_with(op, always, ignore)
    }

    /// [`retry_blocking`](Policy::retry_blocking) with a `when` predicate
    /// and a `notify` hook, as [`retry_with`](Policy::retry_with).
    ///
    /// # Errors
    ///
    /// As [`retry_with`](Policy::retry_with).
    ///
    /// ```
    /// use std::io;
    /// use tenacious::Policy;
    ///
    /// let mut notified = 0;
    /// let result: Result<(), io::Error> = Policy::new().retry_blocking_with(
    ///     || Err(io::Error::from(io::ErrorKind::TimedOut)),
    ///     |_| false,
    ///     |_, _| notified += 1,
    /// );
    /// assert!(result.is_err());
    /// assert_eq!(notified, 0);
    /// ```
    pub fn retry_blocking_with<T, E, F, W, N>(
        &self,
        mut op: F,
        mut when: W,
        mut notify: N,
    ) -> Result<T, E>
    where
        E: Classify,
        F: FnMut() -> Result<T, E>,
        W: FnMut(&E) -> bool,
        N: FnMut(&E, &RetryEvent),
    {
        // The loop of a sync `#[retry]` fn, written out: it sleeps the
        // thread and blocks on a guard's async answer (module docs).
        let mut engine = Engine::new(self, Clock::System);
        if engine.wants_pace()
            && let Some(refused) = pace_first_blocking(&mut engine)
        {
            return refused;
        }
        loop {
            let result = attempt_blocking(&mut engine, &mut op);
            let last = match step_held(&mut engine, result, &mut when, &mut notify) {
                ControlFlow::Break(result) => return result,
                ControlFlow::Continue((delay, last)) => {
                    sleep_blocking(delay);
                    last
                }
            };
            if engine.wants_pace() {
                pace_blocking(&mut engine);
            }
            if let ControlFlow::Break(last) = resume(&mut engine, last) {
                return last;
            }
        }
    }

    /// [`retry_blocking`](Policy::retry_blocking), giving up with a
    /// [`Failure`], as [`retry_failure`](Policy::retry_failure).
    ///
    /// # Errors
    ///
    /// A [`Failure`] holding the last attempt's error.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::{Jitter, Policy, StopReason};
    ///
    /// let failure = Policy::new()
    ///     .max(2)
    ///     .base(Duration::from_millis(1))
    ///     .jitter(Jitter::None)
    ///     .retry_blocking_failure(|| Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut)))
    ///     .unwrap_err();
    /// assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    /// assert_eq!(
    ///     failure.to_string(),
    ///     "gave up after 2 attempts (exhausted): transient TimedOut, waited 1ms; transient TimedOut"
    /// );
    /// ```
    pub fn retry_blocking_failure<T, E, F>(&self, mut op: F) -> Result<T, Failure<E>>
    where
        E: Classify,
        F: FnMut() -> Result<T, E>,
    {
        // The blocking loop that keeps the provenance for `Failure<E>`, written
        // out as its async twin is (module docs).
        let mut engine = Engine::new(self, Clock::System);
        let mut provenance = Provenance::new();
        if engine.wants_pace()
            && let Some(refused) = pace_first_blocking(&mut engine)
        {
            return refused;
        }
        loop {
            let result = attempt_blocking(&mut engine, &mut op);
            let last = match step_recorded(&mut engine, &mut provenance, result) {
                ControlFlow::Break(result) => return result,
                ControlFlow::Continue((delay, last)) => {
                    sleep_blocking(delay);
                    last
                }
            };
            if engine.wants_pace() {
                pace_blocking(&mut engine);
            }
            if let ControlFlow::Break(failure) = resume_failure(&mut engine, &mut provenance, last)
            {
                return failure;
            }
        }
    }
}

/// The step of the `Failure` loops.
fn step_recorded<T, E: Classify>(
    engine: &mut Engine<'_>,
    provenance: &mut Provenance,
    result: Result<T, E>,
) -> ControlFlow<Result<T, Failure<E>>, (Duration, E)> {
    step_failure_held(engine, provenance, result, always, ignore)
}
