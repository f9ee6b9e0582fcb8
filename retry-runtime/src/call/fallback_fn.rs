//! The call of a `#[retry(fallback = path)]` fn after a give-up, and the
//! check of its shape.
//!
//! Bounded directly by `FnOnce(Failure<E>) -> R` (or `FnOnce(E) -> R`), a
//! fallback of the wrong shape gets rustc's account of the closest bound
//! ("type mismatch in function arguments", a suggestion to `.await`, or
//! `R` inferred from the fallback, so the retried fn is said not to return
//! a `Result`), none in the terms of `fallback`. So the fn's signature is
//! read first with free types ([`FallbackSignature`]: its arguments as a
//! tuple, its output), and each part is then checked on its own, with a
//! message that names the shape it needs: one argument ([`OneArgument`]),
//! the give-up by value ([`GiveUp`]), what the retried fn returns
//! ([`Answers`]). `R`, the retried fn's return type, is read from the
//! attempts' result, so it decides the fallback's, not the other way
//! round. A
//! check that fails leaves the later ones a type error to check, which
//! rustc does not report: one error, on the path.
use crate::classify::failure::Failure;
use crate::engine::Engine;

/// How a `fallback` fn takes the give-up: the whole [`Failure`].
#[doc(hidden)]
#[derive(Debug)]
pub struct ByFailure;

/// How a `fallback` fn takes the give-up: the last error alone.
#[doc(hidden)]
#[derive(Debug)]
pub struct ByError;

/// A fn of up to three arguments, `Args` their types as a tuple: what the
/// path of `fallback` must name.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`fallback` must name a fn, `fn(Failure<E>) -> R` or `fn(E) -> R`, not `{Self}`",
    label = "not a fn",
    note = "the fallback is called with the give-up and answers for the retried fn: `fn cached(failure: Failure<E>) -> R` for a fn returning `R`"
)]
pub trait FallbackSignature<Args> {
    /// What the fn returns.
    type Output;
}

impl<F: FnOnce() -> O, O> FallbackSignature<()> for F {
    type Output = O;
}

impl<F: FnOnce(A) -> O, A, O> FallbackSignature<(A,)> for F {
    type Output = O;
}

impl<F: FnOnce(S, A) -> O, S, A, O> FallbackSignature<(S, A)> for F {
    type Output = O;
}

impl<F: FnOnce(S, A, B) -> O, S, A, B, O> FallbackSignature<(S, A, B)> for F {
    type Output = O;
}

/// The arguments of a fallback, `Self`: exactly one, the give-up. `E` is
/// the retried fn's error, `R` what it returns, for the message.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a `fallback` takes one argument, the give-up: `fn(Failure<{E}>) -> {R}` or `fn({E}) -> {R}`",
    label = "this fn takes `{Self}`",
    note = "a fallback cannot take `self`: it is called after the give-up with the give-up alone; make it a free fn or an associated fn without `self`, reaching any state it needs through a `static` (and to ignore the give-up, take `_: {E}`)"
)]
pub trait OneArgument<F, E, R> {
    /// The argument's type.
    type Arg;
    /// What the fn returns.
    type Output;
    /// Calls `f` with `arg`.
    fn call(f: F, arg: Self::Arg) -> Self::Output;
}

impl<F: FnOnce(A) -> O, A, O, E, R> OneArgument<F, E, R> for (A,) {
    type Arg = A;
    type Output = O;
    #[inline]
    fn call(f: F, arg: A) -> O {
        f(arg)
    }
}

/// What a fallback's argument may be, `Self`: the give-up by value, the
/// whole [`Failure`] (`M = ByFailure`) or its last error (`M = ByError`).
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a `fallback` takes the give-up by value: `Failure<{E}>` or `{E}`, not `{Self}`",
    label = "this fn takes `{Self}`",
    note = "the give-up is the fallback's to keep (to return it, or the error in it): declare its argument as `failure: Failure<{E}>` (every attempt and why the call stopped) or `error: {E}` (the last error)"
)]
pub trait GiveUp<E, M>: Sized {
    /// The argument, from the give-up.
    fn from_failure(failure: Failure<E>) -> Self;
}

impl<E> GiveUp<E, ByFailure> for Failure<E> {
    #[inline]
    fn from_failure(failure: Failure<E>) -> Self {
        failure
    }
}

impl<E> GiveUp<E, ByError> for E {
    #[inline]
    fn from_failure(failure: Failure<E>) -> Self {
        failure.into_inner()
    }
}

/// What a fallback returns, `Self`, is what the retried fn returns, `R`.
/// (On the fallback's output rather than on `R`: rustc reads the output of
/// a fn from its signature, where with `R` as `Self` it would take it from
/// the one impl, and then report the fallback as a mismatch of `FnOnce`'s
/// output, in terms of this module.)
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a `fallback` returns what the retried fn returns, `{R}`, not `{Self}`",
    label = "this fn returns `{Self}`",
    note = "the fallback's answer is the retried fn's: declare it `-> {R}`; it is called, not awaited, so it is a plain `fn`, not an `async fn`"
)]
pub trait Answers<R> {
    /// The fallback's answer, as the retried fn's.
    fn answer(self) -> R;
}

impl<R> Answers<R> for R {
    #[inline]
    fn answer(self) -> R {
        self
    }
}

/// The fallback `f` called on `failure`, counted in the statistics.
#[cold]
fn answer<R, E, Args, M, F>(engine: &Engine<'_>, failure: Failure<E>, f: F) -> R
where
    F: FallbackSignature<Args>,
    Args: OneArgument<F, E, R>,
    Args::Arg: GiveUp<E, M>,
    Args::Output: Answers<R>,
{
    if let Some(stats) = engine.policy().get_stats() {
        crate::observe::fallback(stats);
    }
    Args::call(f, Args::Arg::from_failure(failure)).answer()
}

/// What a fn with a `fallback` returns, for a fn declared to return
/// `Result<T, E>`: `result` itself on success; on a give-up, what the
/// fallback makes of its [`Failure`] (counted in the statistics).
#[inline]
pub fn fall_back<T, E, Args, M, F>(
    engine: &Engine<'_>,
    result: Result<T, Failure<E>>,
    fallback: F,
) -> Result<T, E>
where
    F: FallbackSignature<Args>,
    Args: OneArgument<F, E, Result<T, E>>,
    Args::Arg: GiveUp<E, M>,
    Args::Output: Answers<Result<T, E>>,
{
    match result {
        Ok(value) => Ok(value),
        Err(failure) => answer(engine, failure, fallback),
    }
}

/// [`fall_back`] for a fn declared to return `Result<T, Failure<E>>`.
#[inline]
pub fn fall_back_failure<T, E, Args, M, F>(
    engine: &Engine<'_>,
    result: Result<T, Failure<E>>,
    fallback: F,
) -> Result<T, Failure<E>>
where
    F: FallbackSignature<Args>,
    Args: OneArgument<F, E, Result<T, Failure<E>>>,
    Args::Arg: GiveUp<E, M>,
    Args::Output: Answers<Result<T, Failure<E>>>,
{
    match result {
        Ok(value) => Ok(value),
        Err(failure) => answer(engine, failure, fallback),
    }
}
