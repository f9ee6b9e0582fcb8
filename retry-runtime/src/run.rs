//! The async and blocking loops of `Policy`, and the sleeps.
//!
//! Both loops are the loop `#[retry]` expands to: one attempt, then
//! [`Engine::step`] decides. So a closure run by a `Policy` and a fn under
//! `#[retry]` with the same settings make the same attempts and wait the same
//! delays (for the same jitter seed).
use std::future::Future;
use std::ops::ControlFlow;
use std::time::Duration;

use crate::engine::{Engine, always, ignore};
use crate::{Classify, Policy, RetryEvent};

impl Policy {
    /// Runs `op` until it succeeds or the policy gives up, sleeping on
    /// tokio's clock between attempts; returns the last result.
    ///
    /// `op` is called once per attempt and returns that attempt's future.
    /// Dropping the returned future (say, during a backoff) cancels the call:
    /// no further attempt is made.
    ///
    /// # Errors
    ///
    /// The last attempt's error, once the policy stops retrying: the class
    /// is not retried, `max` attempts were made, or the server's hint is
    /// longer than `max_retry_after`.
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
    /// use tenacious_runtime::Policy;
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
    /// use tenacious_runtime::Policy;
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
        let mut engine = Engine::new(self);
        loop {
            let result = op().await;
            match engine.step(result, &mut when, &mut notify) {
                ControlFlow::Break(result) => return result,
                ControlFlow::Continue(delay) => sleep(delay).await,
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
    /// use tenacious_runtime::Policy;
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
    /// use tenacious_runtime::Policy;
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
        let mut engine = Engine::new(self);
        loop {
            let result = op();
            match engine.step(result, &mut when, &mut notify) {
                ControlFlow::Break(result) => return result,
                ControlFlow::Continue(delay) => sleep_blocking(delay),
            }
        }
    }
}

/// Sleeps on tokio's clock (skipped for a zero delay).
pub async fn sleep(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

/// Sleeps the thread (skipped for a zero delay).
pub fn sleep_blocking(delay: Duration) {
    if !delay.is_zero() {
        std::thread::sleep(delay);
    }
}
