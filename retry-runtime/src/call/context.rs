//! The attempt context: which attempt of which logical call is running.
//!
//! One thread-local holds the context of the attempt running on this thread.
//! A sync attempt sets it for its duration; an async attempt sets it around
//! each poll of its future (what a tokio task-local does, without needing
//! tokio's `rt`), so it follows the attempt wherever the runtime polls it and
//! never leaks into other tasks polled on the same thread. Its frame points
//! at the call's engine: this module depends on `engine.rs`, never the
//! other way ([`Attempt`](crate::Attempt) and the call's constructors in
//! `start.rs` read the context through the functions here).
use std::cell::Cell;
use std::future::Future;
use std::hash::Hasher;
use std::marker::PhantomData;
use std::pin::Pin;
use std::ptr;
use std::task::{Context, Poll};

use crate::engine::call_key::ArgHasher;
use crate::engine::key::IdempotencyKey;
use crate::engine::{AttemptSpan, Engine};

/// The context of a running attempt: its call's engine, mutably borrowed,
/// so the clock (once read) and the key (once drawn) land there at once,
/// and a count of the retried calls it started whose arguments could not
/// all be fingerprinted. Made afresh for each attempt, beside its future;
/// the thread-local points at it while the attempt runs. Two words: the
/// attempt's number and limit are read from the engine only when asked
/// for, so the happy path writes nothing else.
#[derive(Debug)]
pub(crate) struct Frame<'e, 'p> {
    pub(crate) engine: &'e mut Engine<'p>,
    /// Retried calls this attempt started with an incomplete fingerprint.
    pub(crate) unnamed_calls: u32,
}

impl Frame<'_, '_> {
    /// The key of a retried call to `name` started by this attempt, whose
    /// arguments `args` fingerprinted.
    ///
    /// A complete fingerprint (every argument but the receiver and `&mut`
    /// ones hashed) names the call by what it asks for: the same on every
    /// attempt whatever other calls the attempt skips, adds or reorders,
    /// and shared by calls of one fn with equal arguments, which are one
    /// request. Otherwise the call is told apart by its place among this
    /// attempt's calls with incomplete fingerprints.
    #[cold]
    fn nested_key(&mut self, name: &str, args: &ArgHasher) -> IdempotencyKey {
        let place = if args.is_complete() {
            0
        } else {
            let ordinal = self.unnamed_calls;
            self.unnamed_calls = ordinal.saturating_add(1);
            ordinal
        };
        self.engine.key().child(name, args.finish(), place)
    }
}

impl<'p> Engine<'p> {
    /// The context of the next attempt (see [`Attempt`](crate::Attempt)).
    #[inline]
    pub(crate) fn frame(&mut self) -> Frame<'_, 'p> {
        self.attempt_starts();
        Frame {
            engine: self,
            unnamed_calls: 0,
        }
    }
}

thread_local! {
    // The frame of the attempt running on this thread, or null. Only a
    // `Scope` sets it, to a frame borrowed for the scope's whole life, and
    // puts back what was there when it ends, unwinding included.
    // (The lifetimes are erased: `with_current` lends the frame out under
    // lifetimes of its own.)
    static CURRENT: Cell<*mut Frame<'static, 'static>> = const { Cell::new(ptr::null_mut()) };
    // The tokio task that set `CURRENT` (`None` outside a task): a task
    // that a `LocalSet` or a runtime driven inside the attempt polls on
    // this thread, while `CURRENT` is set, is another task and sees no
    // attempt.
    static CURRENT_TASK: Cell<Option<tokio::task::Id>> = const { Cell::new(None) };
}

/// Runs `f` on the running attempt's frame, if an attempt runs on this
/// thread, in this task.
///
/// `f` must run no user code (no `Hash`, `Debug` or other trait impl of the
/// caller's types): user code can call `Attempt::current()`, which would
/// lend out the frame a second time while `f` holds it.
#[inline]
#[allow(unsafe_code)]
pub(crate) fn with_current<T>(f: impl FnOnce(&mut Frame<'_, '_>) -> T) -> Option<T> {
    let frame = CURRENT.try_with(Cell::get).ok()?.cast::<Frame<'_, '_>>();
    if frame.is_null() || CURRENT_TASK.try_with(Cell::get).ok()? != tokio::task::try_id() {
        return None;
    }
    // SAFETY: a non-null pointer was set by a live `Scope`, whose frame is
    // mutably borrowed, and touched by nothing else, while the scope lasts
    // (see `Scope`), and its lifetimes outlive the scope. `f` takes the
    // frame under lifetimes of its own, so it cannot keep a borrow past its
    // return, and cannot reach the thread-local's pointer, so this is the
    // only reference to the frame while it runs.
    unsafe { frame.as_mut() }.map(f)
}

/// If a retried call is running on this thread, in this task, counts a new
/// call to fn `name` started by its attempt and returns that call's key:
/// derived from the attempt's key, `name` and the fingerprint `args`
/// writes of the call's arguments (see `Frame::nested_key`). `args` runs
/// only then.
#[inline]
pub(crate) fn enter_nested(
    name: &str,
    args: impl FnOnce(&mut ArgHasher),
) -> Option<IdempotencyKey> {
    if !in_attempt() {
        return None;
    }
    // The fingerprint runs the arguments' `Hash` impls, user code that may
    // ask for the attempt itself: it runs before the frame is borrowed, so
    // that no second borrow of the frame can be made while one is held.
    let mut hasher = ArgHasher::new();
    args(&mut hasher);
    with_current(|frame| frame.nested_key(name, &hasher))
}

/// Whether a frame is set on this thread, from this task or another: the
/// quick test before [`enter_nested`], one thread-local read.
#[inline]
pub(crate) fn attempt_running() -> bool {
    CURRENT
        .try_with(|current| !current.get().is_null())
        .unwrap_or(false)
}

/// Whether an attempt of a retried call runs on this thread, in this task.
#[inline]
pub(crate) fn in_attempt() -> bool {
    with_current(|_| ()).is_some()
}

/// Whether the attempt running on this thread, in this task, holds a
/// permit of `concurrency`: a call nested in it under the same limit goes
/// on that permit, rather than wait for one its own caller holds.
pub(crate) fn attempt_holds(concurrency: &'static crate::Concurrency) -> bool {
    with_current(|frame| {
        frame.engine.holds_permit()
            && frame
                .engine
                .policy()
                .get_concurrency()
                .is_some_and(|held| ptr::eq(held, concurrency))
    })
    .unwrap_or(false)
}

/// Points this thread's context at a frame until the scope ends, then
/// restores the one before (so attempts nest, and a panicking attempt does
/// not leave its frame behind).
struct Scope<'f, 'e, 'p> {
    prev: *mut Frame<'static, 'static>,
    prev_task: Option<tokio::task::Id>,
    frame: PhantomData<&'f mut Frame<'e, 'p>>,
}

impl<'f, 'e, 'p> Scope<'f, 'e, 'p> {
    /// Sets `frame` as the running attempt's. The scope holds the frame's
    /// mutable borrow, so nothing else touches it until the scope ends.
    #[inline]
    fn enter(frame: &'f mut Frame<'e, 'p>) -> Self {
        // tokio's task id first, before the frame is published: a call
        // the optimizer cannot see into, made while the thread-local
        // points at the engine, would make it reload the engine's policy
        // after it instead of folding the constant policy in.
        let task = tokio::task::try_id();
        let frame = ptr::from_mut(frame).cast::<Frame<'static, 'static>>();
        let prev = CURRENT
            .try_with(|current| current.replace(frame))
            .unwrap_or(ptr::null_mut());
        let prev_task = CURRENT_TASK
            .try_with(|current| current.replace(task))
            .unwrap_or(None);
        Self {
            prev,
            prev_task,
            frame: PhantomData,
        }
    }
}

impl Drop for Scope<'_, '_, '_> {
    #[inline]
    fn drop(&mut self) {
        let _ = CURRENT.try_with(|current| current.set(self.prev));
        let _ = CURRENT_TASK.try_with(|current| current.set(self.prev_task));
    }
}

/// Runs `f` with `frame` as the running attempt's frame.
#[inline]
pub(crate) fn scoped_blocking<T>(frame: &mut Frame<'_, '_>, f: impl FnOnce() -> T) -> T {
    if frame.engine.spans_on() {
        return traced_blocking(frame, f);
    }
    let _scope = Scope::enter(frame);
    f()
}

/// [`scoped_blocking`] inside the attempt's span, when a subscriber wants
/// it: out of line, so the path without one holds no span to drop.
#[inline(never)]
fn traced_blocking<T>(frame: &mut Frame<'_, '_>, f: impl FnOnce() -> T) -> T {
    let span = frame.engine.attempt_span();
    let _entered = span.as_ref().map(AttemptSpan::enter);
    let _scope = Scope::enter(frame);
    f()
}

/// Polls `fut` once with `frame` as the running attempt's frame, so a key
/// drawn by an attempt that is then dropped (timed out, cancelled) stays
/// the call's.
#[inline]
pub(crate) fn poll_scoped<F: Future + ?Sized>(
    frame: &mut Frame<'_, '_>,
    fut: Pin<&mut F>,
    cx: &mut Context<'_>,
) -> Poll<F::Output> {
    if frame.engine.spans_on() {
        return poll_traced(frame, fut, cx);
    }
    let _scope = Scope::enter(frame);
    fut.poll(cx)
}

/// [`poll_scoped`] inside the attempt's span, when a subscriber wants it.
#[inline(never)]
fn poll_traced<F: Future + ?Sized>(
    frame: &mut Frame<'_, '_>,
    fut: Pin<&mut F>,
    cx: &mut Context<'_>,
) -> Poll<F::Output> {
    let span = frame.engine.attempt_span();
    let _entered = span.as_ref().map(AttemptSpan::enter);
    let _scope = Scope::enter(frame);
    fut.poll(cx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Attempt;

    use crate::clock::Clock;
    use crate::engine::Engine;

    const POLICY: crate::Policy = crate::Policy::new();

    #[test]
    fn the_frame_is_restored_after_a_panicking_attempt() {
        let mut outer = Engine::new(&POLICY, Clock::System);
        scoped_blocking(&mut outer.frame(), || {
            let outer_key = Attempt::current().unwrap().idempotency_key();
            let mut inner = Engine::new(&POLICY, Clock::System);
            let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                scoped_blocking(&mut inner.frame(), || {
                    assert!(Attempt::current().is_some());
                    panic!("attempt panicked");
                })
            }));
            assert!(unwound.is_err());
            assert_eq!(
                Attempt::current().map(|a| a.idempotency_key()),
                Some(outer_key),
                "the outer frame is back"
            );
        });
        assert!(Attempt::current().is_none());
    }

    #[test]
    fn frames_nest_and_unnest() {
        let mut outer = Engine::new(&POLICY, Clock::System);
        let mut frame = outer.frame();
        let mut nested = Vec::new();
        let hashed = |h: &mut ArgHasher| h.write_u8(1);
        let unhashed = |h: &mut ArgHasher| h.mark_incomplete();
        scoped_blocking(&mut frame, || {
            let mut inner = Engine::named(&POLICY, "inner", Clock::System, hashed);
            scoped_blocking(&mut inner.frame(), || {
                let attempt = Attempt::current().unwrap();
                nested.push(attempt.idempotency_key());
                assert_eq!((attempt.number(), attempt.max()), (1, 1));
            });
            nested.push(enter_nested("inner", hashed).unwrap());
            nested.push(enter_nested("inner", unhashed).unwrap());
            nested.push(enter_nested("inner", unhashed).unwrap());
            let attempt = Attempt::current().unwrap();
            assert_eq!((attempt.number(), attempt.max()), (1, 3));
        });
        assert_eq!(nested[0], nested[1], "equal arguments, one request");
        assert_ne!(
            nested[2], nested[3],
            "unhashed arguments are told apart by place"
        );
        assert_eq!(frame.unnamed_calls, 2);
        let drawn = outer.key();
        let fingerprint = |f: &dyn Fn(&mut ArgHasher)| {
            let mut hasher = ArgHasher::new();
            f(&mut hasher);
            hasher.finish()
        };
        assert_eq!(nested[0], drawn.child("inner", fingerprint(&hashed), 0));
        assert_eq!(nested[2], drawn.child("inner", fingerprint(&unhashed), 0));
        assert_eq!(nested[3], drawn.child("inner", fingerprint(&unhashed), 1));
        assert!(Attempt::current().is_none());
    }
}
