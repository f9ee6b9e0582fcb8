//! The mark a retried `async fn` (or stream) puts beside each argument it
//! takes by value, for `#[retry]`: [`SharedByEveryAttempt`].
//!
//! Every attempt borrows the arguments again (the body is a non-`move`
//! `async` block made afresh per attempt), so the call's future holds
//! `&T` of each argument `T`, and is `Send` only if `T` is `Sync`. The same
//! fn without `#[retry]` holds `T` itself, `Send` if `T` is: an argument
//! that is `Send` but not `Sync` (`std::sync::mpsc::Receiver`,
//! `Cell<u32>`, a `RefCell`) can be spawned with then, not with the retried
//! fn. Left there, rustc says so in terms of the expansion (an `async`
//! block on the attribute, the runtime's `Attempting`), naming neither the
//! argument nor what to do.
//!
//! The mark is a zero-sized local, one per such argument the body borrows
//! whole (none for one it does not name, nor for one it only reads fields
//! of, which an `async` block borrows alone), declared before the retry
//! loop on the argument's own tokens, under its name, and kept
//! alive across every `.await` of the call: it is `Send` exactly when
//! `&T` is, so it adds no bound, but it is what rustc finds first and
//! names in its "future is not `Send`" note: "this value is used across an
//! await" on the argument, "has type `SharedByEveryAttempt<'_, T>` which is
//! not `Send`". It holds no borrow (its lifetime is free), so the
//! argument stays free for the body; it compiles to nothing.

use core::marker::PhantomData;

/// An argument of a retried `async fn` taken by value, as every attempt
/// of the call holds it: by shared reference, `&'a T`. `Send` (and
/// `Sync`) exactly when `T` is `Sync`.
///
/// When rustc says a future or stream is not `Send` because it holds
/// `SharedByEveryAttempt<'_, T>`, an argument of type `T` is `Send` but not
/// `Sync`, and every attempt borrows it. Either:
///
/// - take it shared, by value, `Arc<Mutex<T>>` (or
///   `Arc<tokio::sync::Mutex<T>>` to hold it across an `.await`), and lock
///   it in the body: `rx: Arc<Mutex<Receiver<u32>>>`, `rx.lock()`;
/// - or take what it can be made from (a `Sync` value: a `Sender` to clone,
///   a config, an address) and make a fresh `T` in each attempt's body.
pub struct SharedByEveryAttempt<'a, T: ?Sized>(PhantomData<&'a T>);

impl<'a, T: ?Sized> SharedByEveryAttempt<'a, T> {
    /// The mark of `argument`. The borrow ends here: the mark's lifetime is
    /// free, only as long as the mark is used.
    #[inline(always)]
    #[must_use]
    pub const fn of(argument: &T) -> Self {
        let _ = argument;
        Self(PhantomData)
    }
}

impl<T: ?Sized> core::fmt::Debug for SharedByEveryAttempt<'_, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SharedByEveryAttempt")
    }
}

/// Keeps the mark alive to the end of the call, across every `.await`,
/// so that a future that is not `Send` because of the argument is said to
/// be so because of the mark. Does nothing.
impl<T: ?Sized> Drop for SharedByEveryAttempt<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {}
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::SharedByEveryAttempt;

    fn is_send<T: Send>(_: &T) -> bool {
        true
    }

    #[test]
    fn a_mark_is_free_and_send_when_the_argument_is_sync() {
        let argument = String::from("x");
        let mark = SharedByEveryAttempt::of(&argument);
        // The borrow ended: the argument can be moved while the mark lives.
        drop(argument);
        assert!(is_send(&mark));
        assert_eq!(size_of::<SharedByEveryAttempt<'_, Cell<u32>>>(), 0);
    }
}
