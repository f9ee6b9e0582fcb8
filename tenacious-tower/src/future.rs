//! [`ResponseFuture`]: one retried call to the inner service, driven by
//! polls through the runtime's public poll driver (`PollDriver`), the one
//! `Policy::stream` uses: the guards' pacing and the backoff in
//! `poll_start`, each attempt's readiness, call and response polled with
//! the attempt context set, each outcome decided by `finish`.
use std::fmt;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use tower_service::Service;

use super::error::Attempted;
use super::{CheckResponse, Error, GaveUp, Resend, StampKey};
use tenacious_runtime::poll::{PollDriver, current_key};
use tenacious_runtime::{Classify, Elapsed, IdempotencyKey, Policy, Refused, StopReason};

pin_project! {
    /// Where a call is between polls.
    #[project = StateProj]
    enum State<F> {
        /// Before an attempt: the backoff after the last one, then the
        /// guards.
        Pacing,
        /// Waiting for the inner service to be ready for the attempt.
        Ready,
        /// The attempt's request is with the inner service.
        Called {
            #[pin]
            future: F,
        },
        /// The call returned.
        Done,
    }
}

pin_project! {
    /// The future of [`RetryService::call`](super::RetryService): the
    /// call's answer once the policy is done with it — the first good
    /// response, the last bad one, or the last error (see
    /// [`RetryService`](super::RetryService)).
    ///
    /// It holds the service it was called on (the one its caller drove
    /// ready), the request it copies for each attempt and, through a
    /// backoff, the failed attempt's response or error. Dropping it
    /// cancels the call: no further attempt is made. `Send` when the
    /// service, its future, its response and error, the request and the
    /// check are.
    #[must_use = "futures do nothing unless polled"]
    pub struct ResponseFuture<S, Req, C, K>
    where
        S: Service<Req>,
        C: CheckResponse<S::Response>,
    {
        #[pin]
        polled: PollDriver<'static, Attempted<S::Error, S::Response, C::Error>>,
        #[pin]
        state: State<S::Future>,
        service: S,
        request: Req,
        check: C,
        key: K,
        // The running attempt's time limit, once armed.
        limit: Option<Duration>,
    }
}

impl<S, Req, C, K> ResponseFuture<S, Req, C, K>
where
    S: Service<Req>,
    S::Error: Classify,
    C: CheckResponse<S::Response>,
{
    /// A call of `request` to `service`, under `policy`. Made inside a
    /// running attempt of another retried call, it is nested in it (see
    /// [`Nested`](tenacious_runtime::Nested)), as `Policy::retry` is.
    pub(crate) fn new(policy: &'static Policy, service: S, request: Req, check: C, key: K) -> Self {
        let mut polled = PollDriver::new(policy);
        // A guard may refuse the first attempt: the call then ends with
        // `Error::GuardRefused`, having sent nothing.
        polled.refusable();
        Self {
            polled,
            state: State::Pacing,
            service,
            request,
            check,
            key,
            limit: None,
        }
    }
}

impl<S, Req, C, K> Future for ResponseFuture<S, Req, C, K>
where
    S: Service<Req>,
    S::Error: Classify,
    Req: Resend,
    C: CheckResponse<S::Response>,
    K: StampKey<Req>,
{
    type Output = Result<S::Response, Error<S::Error>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        loop {
            let result = match this.state.as_mut().project() {
                StateProj::Pacing => {
                    if let Err(last) = ready!(this.polled.as_mut().poll_start(cx)) {
                        // Stopped before the attempt: by the deadline or a
                        // guard after the wait, or by a guard before the
                        // first attempt.
                        this.state.set(State::Done);
                        let polled = this.polled.as_ref().get_ref();
                        return Poll::Ready(match last {
                            Some(last) => answer(this.check, polled, last),
                            None => Err(Error::GuardRefused(
                                polled.refused().unwrap_or(Refused::new(StopReason::Guard)),
                            )),
                        });
                    }
                    // The limit counts from here: an attempt that waits
                    // for the inner service to be ready waits in its time.
                    *this.limit = this.polled.attempt_limit();
                    if let Some(limit) = *this.limit {
                        this.polled.as_mut().arm(limit);
                    }
                    this.state.set(State::Ready);
                    continue;
                }
                StateProj::Ready | StateProj::Called { .. } => {
                    let (state, service, request, key) = (
                        this.state.as_mut(),
                        &mut *this.service,
                        &*this.request,
                        &*this.key,
                    );
                    // One scope of the attempt context for the whole poll:
                    // readiness, the call and its future's first poll.
                    match this
                        .polled
                        .as_mut()
                        .in_attempt(|| drive(state, service, request, key, cx))
                    {
                        Step::Answered(response) => match this.check.check(&response) {
                            Ok(()) => {
                                if let Some(throttle) = this.polled.policy().get_throttle() {
                                    throttle.report(this.check.signals(&response));
                                }
                                Ok(response)
                            }
                            Err(bad) => Err(Attempted::Response { response, bad }),
                        },
                        Step::Failed(error) => Err(Attempted::Service(error)),
                        Step::Pending { sent } => {
                            ready!(this.polled.as_mut().poll_timer(cx));
                            // The attempt's future goes now, with what it
                            // holds of the inner service (a connection, a
                            // permit), before the backoff.
                            this.state.set(State::Pacing);
                            this.polled.as_mut().note_timeout();
                            Err(Attempted::Elapsed {
                                elapsed: Elapsed::new(this.limit.unwrap_or_default()),
                                sent,
                            })
                        }
                    }
                }
                StateProj::Done => panic!("`ResponseFuture` polled after it completed"),
            };
            match this.polled.as_mut().finish(result) {
                ControlFlow::Continue(()) => this.state.set(State::Pacing),
                ControlFlow::Break(Ok(response)) => {
                    this.state.set(State::Done);
                    return Poll::Ready(Ok(response));
                }
                ControlFlow::Break(Err(last)) => {
                    this.state.set(State::Done);
                    return Poll::Ready(answer(this.check, this.polled.as_ref().get_ref(), last));
                }
            }
        }
    }
}

/// Where a poll of the running attempt left it.
enum Step<R, E> {
    /// Not over: waiting for the inner service to be ready (`sent`
    /// false), or for its answer.
    Pending {
        sent: bool,
    },
    Answered(R),
    Failed(E),
}

/// Polls the running attempt, in its context: drives the inner service
/// ready and sends it the attempt's copy of the request, then polls the
/// call's future.
fn drive<S, Req, K>(
    mut state: Pin<&mut State<S::Future>>,
    service: &mut S,
    request: &Req,
    key: &K,
    cx: &mut Context<'_>,
) -> Step<S::Response, S::Error>
where
    S: Service<Req>,
    Req: Resend,
    K: StampKey<Req>,
{
    if let StateProj::Ready = state.as_mut().project() {
        match service.poll_ready(cx) {
            Poll::Pending => return Step::Pending { sent: false },
            Poll::Ready(Err(error)) => return Step::Failed(error),
            Poll::Ready(Ok(())) => {
                let mut copy = request.resend();
                key.stamp(&mut copy, call_key);
                state.set(State::Called {
                    future: service.call(copy),
                });
            }
        }
    }
    let StateProj::Called { future } = state.project() else {
        unreachable!("an attempt is called once its service is ready")
    };
    match future.poll(cx) {
        Poll::Pending => Step::Pending { sent: true },
        Poll::Ready(Ok(response)) => Step::Answered(response),
        Poll::Ready(Err(error)) => Step::Failed(error),
    }
}

/// The key of the call whose attempt runs: drawn the first time.
fn call_key() -> IdempotencyKey {
    current_key().unwrap_or_else(|| unreachable!("the key is asked for inside the attempt"))
}

/// What the call returns when the policy gave up after `last`: the bad
/// response itself, told it was given up on, or the error.
fn answer<E, R, C>(
    check: &C,
    polled: &PollDriver<'_, Attempted<E, R, C::Error>>,
    last: Attempted<E, R, C::Error>,
) -> Result<R, Error<E>>
where
    E: Classify,
    C: CheckResponse<R>,
{
    match last {
        Attempted::Service(error) => Err(Error::Service(error)),
        Attempted::Elapsed { elapsed, .. } => Err(Error::TimedOut(elapsed)),
        Attempted::Response { mut response, bad } => {
            let gave_up = GaveUp::new(
                polled.attempts(),
                polled.stop_reason().unwrap_or(StopReason::Exhausted),
                bad.classify(),
            );
            check.gave_up(&mut response, gave_up);
            Ok(response)
        }
    }
}

impl<S, Req, C, K> fmt::Debug for ResponseFuture<S, Req, C, K>
where
    S: Service<Req>,
    S::Error: Classify,
    C: CheckResponse<S::Response>,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("attempts", &self.polled.attempts())
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}
