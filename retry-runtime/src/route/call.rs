//! [`Route::call`]: the targets in order, each through its own policy,
//! until one serves or the rules stop the route.
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::hop::Hop;
use super::outcome::{RouteFailure, RouteStop, Routed, TargetError, Tried};
use super::{Route, Then};
use crate::{Classify, Elapsed, Failure};

impl<D> Route<D> {
    /// Sends the request to the route's targets in order: `op` makes one
    /// attempt at the target it is given, the target's policy retries it
    /// there, and when the policy gives up the route's
    /// [`Rules`](super::Rules) say whether to try the next target or
    /// stop. Returns the first answer, with the target that served and
    /// the targets tried before it.
    ///
    /// One deadline for the whole route ([`RouteBuilder::deadline`](super::RouteBuilder::deadline)):
    /// each target's policy gets what is left of it, and the route never
    /// starts a target past it. A target whose breaker is open is
    /// skipped without an attempt; one that does not answer within its
    /// [`silence`](super::Target::silence) limit is left after that one
    /// attempt.
    ///
    /// # Errors
    ///
    /// A [`RouteFailure`] when no target served: each target's attempts,
    /// stop reason and last error, and why the route stopped.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime with the time driver, when a target has a
    /// silence limit, a deadline or a backoff to sleep.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::io;
    /// use tenacious::route::{Route, Target};
    /// use tenacious::Policy;
    ///
    /// let route = Route::builder("docs-chat")
    ///     .target(Target::new("docs-primary", "down").policy(Policy::new().max(2)))
    ///     .target(Target::new("docs-fallback", "up"))
    ///     .build()
    ///     .unwrap();
    /// // The attempt may borrow its target (its data: a client, a URL).
    /// let answer = route
    ///     .call(|target| async move {
    ///         match *target.data() {
    ///             "up" => Ok(format!("hello from {}", target.name())),
    ///             _ => Err(io::Error::from(io::ErrorKind::ConnectionReset)),
    ///         }
    ///     })
    ///     .await
    ///     .unwrap();
    /// assert_eq!(answer.value, "hello from docs-fallback");
    /// assert_eq!(answer.tried()[0].attempts(), 2);
    /// # }
    /// ```
    pub async fn call<'r, T, E, F, Fut>(
        &'r self,
        mut op: F,
    ) -> Result<Routed<T, E>, RouteFailure<E>>
    where
        E: Classify,
        F: FnMut(&'r super::Target<D>) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        // The clock is read only for a deadline.
        let start = self.deadline.map(|_| tokio::time::Instant::now());
        let elapsed = || start.map_or(Duration::ZERO, |start| start.elapsed());
        let mut tried: Vec<Tried<E>> = Vec::new();
        // After a "too long for its context": the window to beat.
        let mut larger_than: Option<u64> = None;
        let fail = |tried, stop| RouteFailure::new(tried, stop);
        for (index, target) in self.targets.iter().enumerate() {
            if let Some(window) = larger_than
                && target.get_context().is_none_or(|context| context <= window)
            {
                tried.push(Tried {
                    target: target.static_name(),
                    index,
                    attempts: 0,
                    stop: crate::StopReason::NotRetryable,
                    then: Then::Next,
                    error: TargetError::Skipped,
                });
                continue;
            }
            let left = match self.deadline {
                Some(deadline) => match deadline.checked_sub(elapsed()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Err(fail(tried, RouteStop::Deadline)),
                },
                None => None,
            };
            // A copy only to cut its deadline to the route's.
            let cut;
            let policy = match left {
                Some(left) => {
                    let own = target.get_policy();
                    cut = own.deadline(own.get_deadline().map_or(left, |own| own.min(left)));
                    &cut
                }
                None => target.get_policy(),
            };
            let silence = match (target.silence_now(&self.targets), left) {
                (Some(limit), Some(left)) => Some((limit.min(left), limit <= left)),
                (Some(limit), None) => Some((limit, true)),
                (None, Some(left)) => Some((left, false)),
                (None, None) => None,
            };
            // Atomic, not a `Cell`: the call's future stays `Send` (it holds a
            // reference to it across the target's attempts).
            let attempts = AtomicU32::new(0);
            // Two loops, so the common one (no silence limit, nothing
            // learnt) builds attempts that hold nothing but the call: the
            // timed one's attempts carry a timer, which every attempt would
            // otherwise build and move.
            let result: Result<T, Failure<Hop<E>>> = if silence.is_none() && !target.learns() {
                policy
                    .retry_failure(|| {
                        attempts.fetch_add(1, Ordering::Relaxed);
                        let attempt = op(target);
                        async move { attempt.await.map_err(Hop::Answer) }
                    })
                    .await
            } else {
                policy
                    .retry_failure(|| {
                        attempts.fetch_add(1, Ordering::Relaxed);
                        timed(target, op(target), silence, &self.targets)
                    })
                    .await
            };
            let failure = match result {
                Ok(value) => {
                    return Ok(Routed {
                        value,
                        served_by: target.static_name(),
                        index,
                        attempts: attempts.load(Ordering::Relaxed),
                        tried,
                    });
                }
                Err(failure) => failure,
            };
            let stop = failure.stop_reason();
            let last = failure.into_inner();
            let deadline_spent = self.deadline.is_some_and(|deadline| elapsed() >= deadline);
            // A silence cut short by the route's deadline is the deadline's.
            let silent = last.is_silent() && silence.is_some_and(|(_, own)| own);
            let then = if deadline_spent {
                Then::Stop
            } else {
                self.rules
                    .decide(stop, last.classify(), last.rejected(), silent)
            };
            tried.push(Tried {
                target: target.static_name(),
                index,
                attempts: attempts.load(Ordering::Relaxed),
                stop,
                then,
                error: last.into_target_error(),
            });
            match then {
                Then::Stop if deadline_spent => return Err(fail(tried, RouteStop::Deadline)),
                Then::Stop => return Err(fail(tried, RouteStop::Stopped)),
                Then::Larger => larger_than = Some(target.get_context().unwrap_or(0)),
                Then::Next => {}
            }
        }
        Err(fail(tried, RouteStop::NoTargetLeft))
    }
}

/// An attempt at `target` with a silence limit (and whether it is the
/// target's own, not the route deadline's), timed when the target learns
/// its silence from its answers; a silence past its own limit backs the
/// learnt limit off.
async fn timed<D, T, E>(
    target: &super::Target<D>,
    attempt: impl Future<Output = Result<T, E>>,
    silence: Option<(Duration, bool)>,
    peers: &[super::Target<D>],
) -> Result<T, Hop<E>> {
    let started = target.learns().then(tokio::time::Instant::now);
    let result = match silence {
        None => attempt.await.map_err(Hop::Answer),
        Some((limit, own)) => match tokio::time::timeout(limit, attempt).await {
            Ok(result) => result.map_err(Hop::Answer),
            Err(_) => {
                if own {
                    target.went_silent(peers);
                }
                Err(Hop::Silent(Elapsed::new(limit)))
            }
        },
    };
    if let (Some(started), Ok(_)) = (started, &result) {
        target.answered(started.elapsed());
    }
    result
}
