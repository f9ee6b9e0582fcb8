//! The functions the `#[retry]` expansion (and the `Policy` loops) call
//! between attempts: [`step`] and its variants for a loop that holds the
//! failed attempt's result through the wait ([`step_held`], then
//! [`resume`]) or returns a [`Failure`] ([`step_failure`],
//! [`step_failure_held`], [`resume_failure`]), and [`timed_out`]. Each
//! takes the attempt's result as a [`RetryResult`], so a type error is
//! reported in the terms of `#[retry]`, and hands it to the [`Engine`].
use std::ops::ControlFlow;
use std::time::Duration;

use crate::classify::failure::{Failure, Provenance};
use crate::engine::Engine;
use crate::engine::hooks::{NotifyFn, RetryResult, WhenFn};
use crate::{Classify, Elapsed, Refused, StopReason};

/// [`Engine::step`] for generated code: bounded by [`RetryResult`] rather
/// than spelled `Result<T, E>`, so a fn returning something else, or an
/// error that is not `Classify`, is reported in the terms of `#[retry]`
/// and on the user's return type.
#[inline]
pub fn step<R, W, N>(
    engine: &mut Engine<'_>,
    result: R,
    when: W,
    notify: N,
) -> ControlFlow<R, Duration>
where
    R: RetryResult,
    W: WhenFn<R::Error>,
    N: NotifyFn<R::Error>,
{
    match engine.step(result.into_result(), when, notify) {
        ControlFlow::Break(result) => ControlFlow::Break(R::from_result(result)),
        ControlFlow::Continue(delay) => ControlFlow::Continue(delay),
    }
}

/// [`step`] for a loop that holds the failed attempt's result through the
/// wait (a call with a deadline): `Continue((delay, last))`, and after the
/// wait [`resume`] returns `last` if the deadline leaves no room for
/// another attempt.
#[inline]
pub fn step_held<R, W, N>(
    engine: &mut Engine<'_>,
    result: R,
    when: W,
    notify: N,
) -> ControlFlow<R, (Duration, R)>
where
    R: RetryResult,
    W: WhenFn<R::Error>,
    N: NotifyFn<R::Error>,
{
    match engine.step_recording(result.into_result(), when, notify, |_, _, _, _| {}) {
        ControlFlow::Break(result) => ControlFlow::Break(R::from_result(result)),
        ControlFlow::Continue((delay, error)) => {
            ControlFlow::Continue((delay, R::from_result(Err(error))))
        }
    }
}

/// After a retry's wait, before the next attempt: `Break(last)` — the
/// call gives up and returns the last attempt's result — if the wait ended
/// with less than a timer tick left before the deadline (a late wake-up;
/// [`StopReason::Deadline`]) or a guard asked again refused the attempt
/// (see `pace`); `Continue(())` to attempt again.
#[inline]
pub fn resume<R>(engine: &mut Engine<'_>, last: R) -> ControlFlow<R> {
    if engine.late() {
        ControlFlow::Break(last)
    } else {
        ControlFlow::Continue(())
    }
}

/// Before a call's first attempt, when its policy names guards: asks them
/// (see `pace`), and returns the call's result if one refused the attempt
/// and the call's error type can say so ([`Classify::refused`]): the
/// error made from the [`Refused`], with no attempt. `O` is what the call
/// returns, so a fn returning `Result<T, Failure<E>>` gets a `Failure`.
#[inline]
pub async fn pace_first<O: RetryResult>(engine: &mut Engine<'_>) -> Option<O> {
    if !engine.wants_pace() {
        return None;
    }
    let make = O::Error::refused();
    if make.is_some() {
        engine.set_refusable();
    }
    crate::call::pace::pace(engine).await;
    refused(engine, make)
}

/// [`pace_first`] for a blocking call.
#[inline]
pub fn pace_first_blocking<O: RetryResult>(engine: &mut Engine<'_>) -> Option<O> {
    if !engine.wants_pace() {
        return None;
    }
    let make = O::Error::refused();
    if make.is_some() {
        engine.set_refusable();
    }
    crate::call::pace::pace_blocking(engine);
    refused(engine, make)
}

/// [`pace_first`] for a fn that names a guard in its attribute: its error
/// type must be able to say a guard refused the call ([`Refusable`]), or
/// the guard could not stop its first attempt. The macro spans the call on
/// the guard's path, so a type that cannot is reported there.
///
/// [`Refusable`]: crate::Refusable
#[inline]
pub async fn pace_first_refusable<O: RetryResult>(engine: &mut Engine<'_>) -> Option<O>
where
    O::Error: crate::Refusable,
{
    pace_first(engine).await
}

/// [`pace_first_refusable`] for a blocking call.
#[inline]
pub fn pace_first_blocking_refusable<O: RetryResult>(engine: &mut Engine<'_>) -> Option<O>
where
    O::Error: crate::Refusable,
{
    pace_first_blocking(engine)
}

/// [`pace_first`] for a fn bound to a `const` or `static` policy:
/// `GUARDED` is whether the policy names a guard, read at compile time,
/// and then the error type must be able to say a guard refused the call
/// (see [`pace_first_refusable`]). The macro spans the call on the
/// policy's path.
#[inline]
pub async fn pace_first_if<O: RetryResult, const GUARDED: bool>(
    engine: &mut Engine<'_>,
) -> Option<O>
where
    O::Error: RefusableIf<GUARDED>,
{
    pace_first(engine).await
}

/// [`pace_first_if`] for a blocking call.
#[inline]
pub fn pace_first_blocking_if<O: RetryResult, const GUARDED: bool>(
    engine: &mut Engine<'_>,
) -> Option<O>
where
    O::Error: RefusableIf<GUARDED>,
{
    pace_first_blocking(engine)
}

/// Holds for every type when `GUARDED` is false, and for a
/// [`Refusable`](crate::Refusable) one when it is true: the bound of
/// [`pace_first_if`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot say a guard refused the call, so the policy's guards could not stop its first attempt",
    label = "this policy has a guard, which may refuse a call before its first attempt",
    note = "add a variant `#[classify(refused)] Refused(tenacious::Refused)` to the error type: a call the guard stops returns it, sending nothing"
)]
pub trait RefusableIf<const GUARDED: bool> {}

impl<E: ?Sized> RefusableIf<false> for E {}

impl<E: crate::Refusable + ?Sized> RefusableIf<true> for E {}

/// The call's result when a guard refused its first attempt.
#[cold]
fn refused<O: RetryResult>(
    engine: &Engine<'_>,
    make: Option<fn(Refused) -> O::Error>,
) -> Option<O> {
    let reason = engine.refusal()?;
    let make = make?;
    Some(O::from_result(Err(make(engine.refused_error(reason)))))
}

/// [`Engine::step`] for a `#[retry]` fn declared to return
/// `Result<T, Failure<E>>`: the attempt still returns `Result<T, E>`; each
/// failed attempt is recorded in `provenance`, and a give-up returns the
/// [`Failure`].
pub fn step_failure<R, W, N>(
    engine: &mut Engine<'_>,
    provenance: &mut Provenance,
    result: R,
    when: W,
    notify: N,
) -> ControlFlow<Result<R::Ok, Failure<R::Error>>, Duration>
where
    R: RetryResult,
    W: WhenFn<R::Error>,
    N: NotifyFn<R::Error>,
{
    match step_failure_held(engine, provenance, result, when, notify) {
        ControlFlow::Break(result) => ControlFlow::Break(result),
        ControlFlow::Continue((delay, _)) => ControlFlow::Continue(delay),
    }
}

/// What a fn declared to return `Result<T, Failure<E>>` returns, for an
/// attempt's result `R = Result<T, E>`.
type FailureResult<R> = Result<<R as RetryResult>::Ok, Failure<<R as RetryResult>::Error>>;

/// [`step_failure`] holding the failed attempt's error through the wait,
/// as [`step_held`]; after the wait, [`resume_failure`].
pub fn step_failure_held<R, W, N>(
    engine: &mut Engine<'_>,
    provenance: &mut Provenance,
    result: R,
    when: W,
    notify: N,
) -> ControlFlow<FailureResult<R>, (Duration, R::Error)>
where
    R: RetryResult,
    W: WhenFn<R::Error>,
    N: NotifyFn<R::Error>,
{
    let step = engine.step_recording(
        result.into_result(),
        when,
        notify,
        |n, error, class, delay| {
            provenance.record(n, error, class, delay);
        },
    );
    match step {
        ControlFlow::Break(Ok(value)) => ControlFlow::Break(Ok(value)),
        ControlFlow::Break(Err(error)) => {
            let stop = engine.stop_reason().unwrap_or(StopReason::Exhausted);
            let provenance = std::mem::take(provenance);
            let failure = provenance.into_failure(stop, error);
            ControlFlow::Break(Err(failure.with_retry_in(engine.retry_in())))
        }
        ControlFlow::Continue(held) => ControlFlow::Continue(held),
    }
}

/// [`resume`] for a fn returning `Result<T, Failure<E>>`: a give-up there
/// returns the [`Failure`] of the attempts made, stopped by the deadline
/// (or by a guard asked again after the wait).
pub fn resume_failure<T, E: Classify>(
    engine: &mut Engine<'_>,
    provenance: &mut Provenance,
    last: E,
) -> ControlFlow<Result<T, Failure<E>>> {
    if engine.late() {
        let provenance = std::mem::take(provenance);
        let stop = engine.stop_reason().unwrap_or(StopReason::Deadline);
        let failure = provenance.into_failure(stop, last);
        ControlFlow::Break(Err(failure.with_retry_in(engine.retry_in())))
    } else {
        ControlFlow::Continue(())
    }
}

/// The error a timed-out attempt of a `#[retry(timeout = "...")]` fn
/// becomes: `E::from(elapsed)`. Tells `engine`, so the retry after it
/// costs the budget what a timed-out attempt's does.
pub fn timed_out<R>(engine: &mut Engine<'_>, elapsed: Elapsed) -> R
where
    R: RetryResult,
    R::Error: From<Elapsed>,
{
    engine.note_timeout();
    R::from_result(Err(R::Error::from(elapsed)))
}

/// How a timed-out attempt becomes its output, and its time limit.
pub type Bound<R> = (fn(Elapsed) -> R, Duration);

/// How an attempt of a `#[retry(policy = "name")]` fn is bounded: by the
/// engine's attempt limit (the timeout, cut to what is left of the
/// deadline) if the policy has a `timeout` and `to_error` can make the
/// attempt's output of its expiry; else `None`, and the attempt runs
/// unbounded, as that of a `#[retry]` fn without `timeout` does.
#[inline]
pub fn bounded<R>(engine: &Engine<'_>, to_error: Option<fn(Elapsed) -> R>) -> Option<Bound<R>> {
    let to_error = to_error?;
    if !engine.has_timeout() {
        return None;
    }
    Some((to_error, engine.attempt_limit()?))
}

/// Whether the `const` or `static` policy `policy` names a guard (its
/// budget included): evaluated in a `const` block by the expansion of
/// `#[retry(policy = PATH)]`, so a policy without one asks none, at no
/// cost.
#[doc(hidden)]
#[must_use]
pub const fn policy_has_guards(policy: &crate::Policy) -> bool {
    policy.has_guards()
}

/// Whether the `const` or `static` policy `policy` bounds each attempt
/// (`timeout`): evaluated in a `const` block by the expansion of
/// `#[retry(policy = PATH)]`, so an attempt it does not bound is awaited
/// as any fn's is.
#[doc(hidden)]
#[must_use]
pub const fn policy_has_timeout(policy: &crate::Policy) -> bool {
    policy.get_timeout().is_some()
}

/// Whether the guards are to be asked before the attempt: a
/// `#[retry(policy = "name")]` fn, whose loaded policy may have guards or
/// not, asks this before it awaits [`pace_first`].
#[inline]
#[must_use]
pub fn wants_pace(engine: &Engine<'_>) -> bool {
    engine.wants_pace()
}

/// The output a timed-out attempt of a `#[retry(policy = "name")]` fn
/// became ([`attempt_bounded`](crate::call::driver::attempt_bounded)'s `Err`).
/// Tells `engine`, as [`timed_out`] does.
pub fn timed_out_as<R>(engine: &mut Engine<'_>, output: R) -> R {
    engine.note_timeout();
    output
}

/// The output type of an attempt's future, for [`ElapsedInto`] and
/// [`ElapsedNot`] to tell, by method resolution, whether its error can
/// hold an [`Elapsed`]: `(&OutputOf::of(&fut)).elapsed_into()` is `Some`
/// if it can, `None` if not (or if a generic fn's bounds do not say).
#[doc(hidden)]
pub struct OutputOf<O>(std::marker::PhantomData<fn() -> O>);

impl<O> OutputOf<O> {
    /// For the future `fut` is.
    #[must_use]
    pub fn of<F: std::future::Future<Output = O>>(fut: &F) -> Self {
        let _ = fut;
        Self(std::marker::PhantomData)
    }
}

/// An output whose error converts from an [`Elapsed`]: `Some`.
#[doc(hidden)]
pub trait ElapsedInto<O> {
    /// How the expiry becomes the output.
    fn elapsed_into(&self) -> Option<fn(Elapsed) -> O>;
}

impl<O> ElapsedInto<O> for OutputOf<O>
where
    O: RetryResult,
    O::Error: From<Elapsed>,
{
    fn elapsed_into(&self) -> Option<fn(Elapsed) -> O> {
        Some(|elapsed| O::from_result(Err(O::Error::from(elapsed))))
    }
}

/// Any other output (found by autoref, after [`ElapsedInto`]): `None`.
#[doc(hidden)]
pub trait ElapsedNot<O> {
    /// None.
    fn elapsed_into(&self) -> Option<fn(Elapsed) -> O>;
}

impl<O> ElapsedNot<O> for &OutputOf<O> {
    fn elapsed_into(&self) -> Option<fn(Elapsed) -> O> {
        None
    }
}
