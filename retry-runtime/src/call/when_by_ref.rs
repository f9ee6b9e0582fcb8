//! The check that a `when` fn borrows the error, for `#[retry(when = path)]`.
//!
//! Passed straight to [`crate::__private::step`], a `fn(MyError) -> bool`
//! fails the `FnMut(&E) -> bool` bound of [`WhenFn`](crate::__private::WhenFn)'s
//! blanket impl, and rustc reports that bound ("type mismatch in function
//! arguments") with a suggestion to wrap the fn in a closure, which `when`
//! does not take; `#[diagnostic::on_unimplemented]` is not consulted for
//! it. So the generated code passes the path through [`when`] first: its
//! argument type `A` is read from the fn's signature, and [`WhenByRef`]
//! holds only for `A = &E`, with a message that names the error type. The
//! fn's type comes back through an associated type, so a fn that fails the
//! check leaves `step` with nothing more to report: one error.

/// A `when` fn whose argument is the error by reference.
#[diagnostic::on_unimplemented(
    message = "`when` must take the error by reference: `&{A}`, not `{A}`",
    label = "this fn takes `{A}` by value",
    note = "declare the fn's argument as `error: &{A}`: the retry loop keeps the error to return it, so `when` only borrows it"
)]
pub trait WhenByRef<A> {
    /// The fn, unchanged.
    type Fn;
    /// Hands the fn back.
    fn pass(self) -> Self::Fn;
}

impl<E: ?Sized, F> WhenByRef<&E> for F {
    type Fn = F;
    #[inline(always)]
    fn pass(self) -> F {
        self
    }
}

/// The `when` fn `f`, unchanged, once its argument is seen to be a reference.
/// The return type is left to `step`'s bound, which names it.
///
/// ```
/// use tenacious::__private::when;
///
/// fn is_retryable(error: &std::io::Error) -> bool {
///     error.kind() == std::io::ErrorKind::TimedOut
/// }
///
/// let check = when(is_retryable);
/// assert!(check(&std::io::ErrorKind::TimedOut.into()));
/// ```
#[inline(always)]
pub fn when<A, R, F>(f: F) -> <F as WhenByRef<A>>::Fn
where
    F: FnMut(A) -> R + WhenByRef<A>,
{
    f.pass()
}
