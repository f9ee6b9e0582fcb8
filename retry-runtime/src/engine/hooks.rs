//! The traits the expansion checks the user's types and hooks against,
//! each with a `#[diagnostic::on_unimplemented]` message in the terms of
//! `#[retry]` (the return type `RetryResult`, the `when` and `notify` paths
//! `WhenFn` and `NotifyFn`), and the defaults used when a key is left out.
use crate::{Classify, RetryEvent};

/// A `Result<T, E>` whose `E` is `Classify`: the return type `#[retry]` accepts.
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a fn returning `Result<T, E>` with `E: Classify`, found `{Self}`",
    note = "return `Result<T, E>` with `E` an error type of your own that derives `tenacious::Classify`"
)]
pub trait RetryResult: Sized {
    /// The success type.
    type Ok;
    /// The error type.
    type Error: Classify;
    /// As a `Result`.
    fn into_result(self) -> Result<Self::Ok, Self::Error>;
    /// Back from a `Result`.
    fn from_result(result: Result<Self::Ok, Self::Error>) -> Self;
}
impl<T, E: Classify> RetryResult for Result<T, E> {
    type Ok = T;
    type Error = E;
    fn into_result(self) -> Self {
        self
    }
    fn from_result(result: Self) -> Self {
        result
    }
}

/// The `when` predicate: `fn(&E) -> bool`.
#[diagnostic::on_unimplemented(
    message = "`when` must be a `fn(&{E}) -> bool`",
    label = "expected a path to a `fn(&{E}) -> bool`"
)]
pub trait WhenFn<E: ?Sized> {
    /// Whether to retry this error (AND-ed with `on`).
    fn call(&mut self, error: &E) -> bool;
}
impl<E: ?Sized, F: FnMut(&E) -> bool> WhenFn<E> for F {
    fn call(&mut self, error: &E) -> bool {
        self(error)
    }
}

/// The `check` of a success: `fn(&T) -> Result<(), E>` (or a borrowed
/// form of `T`: `&str` for a `String`, `&[u8]` for a `Vec<u8>`), which
/// turns a bad `Ok` (an empty completion, truncated JSON) into a
/// classified error. `A` and `O` are the fn's argument and return types,
/// as it declares them.
///
/// The fn's shape is read off `A` and `O` ([`CheckShape`]) before the
/// higher-ranked bound that calls it is asked, so a fn of another shape
/// is reported in the words below: a fn taking the value by value would
/// otherwise get rustc's signature mismatch for that bound, with the
/// suggestion to wrap the fn in a closure (which `check` refuses), and an
/// `async fn` the suggestion to `.await` the path.
#[diagnostic::on_unimplemented(
    message = "`check` must be a `fn(&{T}) -> Result<(), {E}>`",
    label = "expected a path to a `fn(&{T}) -> Result<(), {E}>` (or one taking a borrowed form of `{T}`, like `&str` for a `String`): it reads the attempt's value and says which error it is, if it is a bad one",
    note = "a `check` is a plain fn, not an `async fn`, that borrows the value (the attempt returns it after the check) and answers at once: `fn is_complete(value: &{T}) -> Result<(), {E}>`, `Ok(())` for a good value"
)]
pub trait CheckFn<T, E, A, O> {
    /// `Err(error)` when the value is a bad answer.
    fn call(&mut self, value: &T) -> Result<(), E>;
}
// Not recommended: a fn of another shape is then reported as not being a
// `check` (the message above, the shape to write) rather than in the terms
// of the bounds below. `F: FnMut(A) -> O` first: it reads the fn's own
// types, which the shape is then asked about.
#[diagnostic::do_not_recommend]
impl<T, E, A, O, F> CheckFn<T, E, A, O> for F
where
    F: FnMut(A) -> O,
    (A, O): CheckShape<T, E, F>,
{
    fn call(&mut self, value: &T) -> Result<(), E> {
        <(A, O) as CheckShape<T, E, F>>::call(self, value)
    }
}

/// The shape of a `check` `F` whose argument and return types are the
/// pair: a borrow of the value, or of a borrowed form of it, and
/// `Result<(), E>`. Only a pair of that shape has an impl, so a fn of
/// another one fails here, before the fn is asked for the higher-ranked
/// `FnMut` bound that calls it.
pub trait CheckShape<T, E, F> {
    /// `check` of `value`.
    fn call(check: &mut F, value: &T) -> Result<(), E>;
}
impl<T, E, B, F> CheckShape<T, E, F> for (&B, Result<(), E>)
where
    T: std::borrow::Borrow<B>,
    B: ?Sized,
    F: FnMut(&B) -> Result<(), E>,
{
    fn call(check: &mut F, value: &T) -> Result<(), E> {
        check(value.borrow())
    }
}

/// An attempt's result after its `check`: an `Ok` the check rejects
/// becomes the check's error, decided as any failed attempt is.
#[inline]
pub fn checked<R, C, A, O>(result: R, mut check: C) -> R
where
    R: RetryResult,
    C: CheckFn<R::Ok, R::Error, A, O>,
{
    match result.into_result() {
        Ok(value) => match check.call(&value) {
            Ok(()) => R::from_result(Ok(value)),
            Err(error) => R::from_result(Err(error)),
        },
        Err(error) => R::from_result(Err(error)),
    }
}

/// The `notify` hook: `fn(&E, &RetryEvent)`.
#[diagnostic::on_unimplemented(
    message = "`notify` must be a `fn(&{E}, &tenacious::RetryEvent)`",
    label = "expected a path to a `fn(&{E}, &tenacious::RetryEvent)`"
)]
pub trait NotifyFn<E: ?Sized> {
    /// Called before each sleep.
    fn call(&mut self, error: &E, event: &RetryEvent);
}
impl<E: ?Sized, F: FnMut(&E, &RetryEvent)> NotifyFn<E> for F {
    fn call(&mut self, error: &E, event: &RetryEvent) {
        self(error, event);
    }
}

/// The default `when`: retry whatever `on` allows.
#[must_use]
pub fn always<E: ?Sized>(_: &E) -> bool {
    true
}

/// The default `notify`: nothing.
pub fn ignore<E: ?Sized>(_: &E, _: &RetryEvent) {}
