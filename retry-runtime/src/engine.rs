//! The decision engine shared by `#[retry]` and `Policy`.
use std::ops::ControlFlow;
use std::time::Duration;

use crate::{Classify, ErrorClass, Policy};

/// Why a retried call stopped retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StopReason {
    /// Every allowed attempt was made.
    Exhausted,
    /// The error's class is not retried (or `when` said no).
    NotRetryable,
    /// The server's hint was longer than `max_retry_after`.
    HintTooLong,
    /// The next attempt could not finish before the deadline.
    Deadline,
    /// The shared retry budget is empty.
    Budget,
}

/// What `notify` is told before each sleep.
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

/// A `Result<T, E>` whose `E` is `Classify`: the return type `#[retry]` accepts.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a fn returning `Result<T, E>` with `E: Classify`, found `{Self}`"
)]
pub trait RetryResult {
    /// The error type.
    type Error: Classify;
}
impl<T, E: Classify> RetryResult for Result<T, E> {
    type Error = E;
}

/// The `when` predicate: `fn(&E) -> bool`.
#[diagnostic::on_unimplemented(
    message = "`when` must be a `fn(&{E}) -> bool`",
    label = "expected a path to a `fn(&{E}) -> bool`"
)]
pub trait WhenFn<E: ?Sized> {
    /// Whether to retry this error (AND-ed with `on`).
    fn call(&self, error: &E) -> bool;
}
impl<E: ?Sized, F: Fn(&E) -> bool> WhenFn<E> for F {
    fn call(&self, error: &E) -> bool {
        self(error)
    }
}

/// The `notify` hook: `fn(&E, &RetryEvent)`.
#[diagnostic::on_unimplemented(
    message = "`notify` must be a `fn(&{E}, &tenacious::RetryEvent)`",
    label = "expected a path to a `fn(&{E}, &tenacious::RetryEvent)`"
)]
pub trait NotifyFn<E: ?Sized> {
    /// Called before each sleep.
    fn call(&self, error: &E, event: &RetryEvent);
}
impl<E: ?Sized, F: Fn(&E, &RetryEvent)> NotifyFn<E> for F {
    fn call(&self, error: &E, event: &RetryEvent) {
        self(error, event);
    }
}

/// One logical call's retry state.
#[derive(Debug)]
pub struct Engine<'p> {
    policy: &'p Policy,
    attempt: u32,
}

impl<'p> Engine<'p> {
    /// Starts a logical call.
    #[must_use]
    pub fn new(policy: &'p Policy) -> Self {
        Self { policy, attempt: 0 }
    }

    /// Decides after one attempt: `Break(result)` to return it,
    /// `Continue(delay)` to sleep `delay` and attempt again.
    pub fn step<T, E, W, N>(
        &mut self,
        result: Result<T, E>,
        when: W,
        notify: N,
    ) -> ControlFlow<Result<T, E>, Duration>
    where
        E: Classify,
        W: WhenFn<E>,
        N: NotifyFn<E>,
    {
        let _ = (self.policy, self.attempt, &when, &notify);
        ControlFlow::Break(result)
    }
}

/// The default `when`: retry whatever `on` allows.
pub fn always<E: ?Sized>(_: &E) -> bool {
    true
}

/// The default `notify`: nothing.
pub fn ignore<E: ?Sized>(_: &E, _: &RetryEvent) {}
