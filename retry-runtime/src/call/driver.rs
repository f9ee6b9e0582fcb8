//! The attempt driver: the pieces that run one attempt with its context
//! set ([`attempt`], [`attempt_timed`], [`attempt_blocking`]) and the
//! backoff's timers ([`sleep`], [`sleep_blocking`]), which the `#[retry]`
//! expansion and the `Policy` loops of `run.rs` both use.
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;

use crate::Elapsed;
use crate::call::context::{Frame, poll_scoped, scoped_blocking};
use crate::engine::Engine;

/// Runs one async attempt with its context set (see
/// [`Attempt::current`](crate::Attempt::current)) around each poll.
///
/// The attempt's future moves into the returned one, which the loop awaits
/// in place: the retried fn's own future holds it once, beside the engine,
/// and builds it where it stays, so starting an attempt copies nothing but
/// what the body captures.
#[inline]
pub fn attempt<'a, 'p, F: Future>(engine: &'a mut Engine<'p>, fut: F) -> Attempting<'a, 'p, F> {
    Attempting {
        frame: engine.frame(),
        fut,
    }
}

pin_project! {
    /// The future of [`attempt`]: the attempt's output, polled with its
    /// context set.
    #[derive(Debug)]
    #[must_use = "an attempt does nothing unless awaited"]
    pub struct Attempting<'a, 'p, F> {
        frame: Frame<'a, 'p>,
        #[pin]
        fut: F,
    }
}

impl<F: Future> Future for Attempting<'_, '_, F> {
    type Output = F::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        // Around every poll, not only the last: the key an attempt draws
        // (and maybe sends) lands in the engine at once, so it is the next
        // attempt's too even if this one is dropped at its time limit or
        // cancelled.
        poll_scoped(this.frame, this.fut, cx)
    }
}

/// Runs one async attempt with its context set, bounded by the engine's
/// attempt limit (the timeout, cut to what is left of the deadline);
/// `Err(Elapsed)` if it ran out. Without a limit, the same as [`attempt`].
///
/// The caller tells the engine of a timeout (the next retry costs the
/// budget more): [`timed_out`](crate::call::glue::timed_out) does for
/// `#[retry]`.
#[inline]
pub fn attempt_timed<'a, 'p, F: Future>(
    engine: &'a mut Engine<'p>,
    fut: F,
) -> AttemptingTimed<'a, 'p, F> {
    match engine.attempt_limit() {
        None => AttemptingTimed::Unlimited {
            attempt: attempt(engine, fut),
        },
        Some(limit) => AttemptingTimed::Limited {
            attempt: tokio::time::timeout(limit, attempt(engine, fut)),
            limit,
        },
    }
}

pin_project! {
    /// The future of [`attempt_timed`]: the attempt, bounded by its time
    /// limit if it has one. (The variants' fields are the attempt and,
    /// with a limit, the limit itself.)
    #[derive(Debug)]
    #[allow(missing_docs)]
    #[must_use = "an attempt does nothing unless awaited"]
    #[project = AttemptingTimedProj]
    pub enum AttemptingTimed<'a, 'p, F> {
        /// No timeout and no deadline.
        Unlimited {
            #[pin]
            attempt: Attempting<'a, 'p, F>,
        },
        /// Bounded by `limit`.
        Limited {
            #[pin]
            attempt: tokio::time::Timeout<Attempting<'a, 'p, F>>,
            limit: Duration,
        },
    }
}

impl<F: Future> Future for AttemptingTimed<'_, '_, F> {
    type Output = Result<F::Output, Elapsed>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            AttemptingTimedProj::Unlimited { attempt } => attempt.poll(cx).map(Ok),
            AttemptingTimedProj::Limited { attempt, limit } => {
                let limit = *limit;
                attempt
                    .poll(cx)
                    .map(|output| output.map_err(|_| Elapsed::new(limit)))
            }
        }
    }
}

/// Runs one async attempt with its context set, bounded by `limit`, its
/// expiry made the attempt's output by `to_error`: the attempt of a
/// `#[retry(policy = "name")]` fn whose loaded policy has a `timeout` and
/// whose error holds an [`Elapsed`] ([`bounded`](crate::call::glue::bounded)
/// says when). `Err` holds the output a timed-out attempt became; the
/// caller tells the engine ([`timed_out_as`](crate::call::glue::timed_out_as)).
#[inline]
pub fn attempt_bounded<'a, 'p, F: Future>(
    engine: &'a mut Engine<'p>,
    (to_error, limit): (fn(Elapsed) -> F::Output, Duration),
    fut: F,
) -> AttemptingBounded<'a, 'p, F> {
    AttemptingBounded {
        attempt: tokio::time::timeout(limit, attempt(engine, fut)),
        limit,
        to_error,
    }
}

pin_project! {
    /// The future of [`attempt_bounded`].
    #[derive(Debug)]
    #[must_use = "an attempt does nothing unless awaited"]
    pub struct AttemptingBounded<'a, 'p, F: Future> {
        #[pin]
        attempt: tokio::time::Timeout<Attempting<'a, 'p, F>>,
        limit: Duration,
        to_error: fn(Elapsed) -> F::Output,
    }
}

impl<F: Future> Future for AttemptingBounded<'_, '_, F> {
    type Output = Result<F::Output, F::Output>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let (limit, to_error) = (*this.limit, *this.to_error);
        this.attempt
            .poll(cx)
            .map(|output| output.map_err(|_| to_error(Elapsed::new(limit))))
    }
}

/// Runs one sync attempt with its context set.
pub fn attempt_blocking<T>(engine: &mut Engine<'_>, f: impl FnOnce() -> T) -> T {
    scoped_blocking(&mut engine.frame(), f)
}

/// The timer of a backoff on tokio's clock. The loops await it in place,
/// so their futures hold tokio's `Sleep` and nothing beside it, and skip a
/// zero delay, which then needs no timer (nor tokio's time driver).
///
/// # Panics
///
/// Outside a tokio runtime with the time driver enabled, as
/// [`tokio::time::sleep`] does.
#[inline]
pub fn sleep(delay: Duration) -> tokio::time::Sleep {
    tokio::time::sleep(delay)
}

/// Sleeps the thread (skipped for a zero delay).
pub fn sleep_blocking(delay: Duration) {
    if !delay.is_zero() {
        std::thread::sleep(delay);
    }
}
