//! How a logical call starts: the constructors of [`Engine`], which ask
//! the attempt context whether the call is nested in a running attempt
//! and, if it is, derive its key from the outer call's (see
//! [`Nested`](crate::Nested)). Apart from `engine.rs` so that the engine
//! never reaches into the context, which points at engines.
use crate::Policy;
use crate::call::context::{attempt_running, enter_nested, in_attempt};
use crate::clock::Clock;
use crate::engine::Engine;
use crate::engine::call_key::ArgHasher;
use crate::engine::key::IdempotencyKey;

impl<'p> Engine<'p> {
    /// Starts a logical call run by a [`Policy`] loop on `clock`.
    ///
    /// Inside another retried call's attempt, this is a nested call (see
    /// [`Nested`](crate::Nested)).
    #[must_use]
    #[inline]
    pub fn new(policy: &'p Policy, clock: Clock) -> Self {
        // A closure's arguments are not seen: nested, it is told apart by
        // its place among its attempt's calls.
        Self::named(policy, "", clock, ArgHasher::mark_incomplete)
    }

    /// Starts a logical call of the fn `name` on `clock` (`#[retry]` passes
    /// the fn's name and a closure writing the fingerprint of its
    /// arguments; both feed the idempotency key of a nested call, and the
    /// closure runs only for one).
    #[must_use]
    #[inline]
    pub fn named(
        policy: &'p Policy,
        name: &str,
        clock: Clock,
        args: impl FnOnce(&mut ArgHasher),
    ) -> Self {
        // Out of line: a call outside any attempt (the common case) costs
        // one thread-local read, and the arguments are not fingerprinted
        // (nor their addresses taken) on its path. Only the key comes back
        // from out of line, not the engine, so the policy stays a constant
        // the retried fn's code folds.
        let key = if attempt_running() {
            nested_key(name, args)
        } else {
            None
        };
        Self::started(policy, clock, key)
    }

    /// Starts a logical call of the fn `name` whose key is given
    /// (`#[retry(key = ...)]`): the same on every attempt, nested or not.
    #[must_use]
    pub fn keyed(policy: &'p Policy, clock: Clock, key: IdempotencyKey) -> Self {
        let mut engine = Self::started(policy, clock, None);
        if in_attempt() {
            engine.nest();
        }
        engine.set_key(key);
        engine
    }
}

/// The key of a call to `name` nested in the running attempt, if one runs
/// in this task: out of line, as only a call made inside another's attempt
/// comes here.
#[cold]
#[inline(never)]
fn nested_key(name: &str, args: impl FnOnce(&mut ArgHasher)) -> Option<IdempotencyKey> {
    enter_nested(name, args)
}
