//! The hook for a networked guard: where a provider guard ([`Breaker`],
//! [`Cooldown`], [`Throttle`], [`RetryBudget`]) bound to a store shared by
//! many processes keeps its networked part, and what it asks of it.
//!
//! Each guard holds a [`StoreSlot`], always compiled: unbound (the
//! default), reading it is one load and the guard decides in process;
//! bound, it holds a `&'static dyn` store interface of the guard's kind
//! ([`BreakerStore`], [`CooldownStore`], [`ThrottleStore`],
//! [`BudgetStore`], [`ConcurrencyStore`]), which the guard asks before it decides and tells
//! what it heard. A store implementation (feature `redis`:
//! `tenacious::redis`) binds a guard by filling its slot once, and calls
//! back into the guard's in-process state when the store does not answer
//! ([`Store::is_up`] false: the guard decides locally and says so with
//! [`Store::local_decision`]).
//!
//! Not a stable API: the guards' side of a store, for the store crates.
//!
//! [`Breaker`]: crate::Breaker
//! [`Cooldown`]: crate::Cooldown
//! [`Throttle`]: crate::Throttle
//! [`RetryBudget`]: crate::RetryBudget
use std::fmt;
use std::mem::ManuallyDrop;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::{Admit, BreakerState, NextAttempt, Outcome, PendingAdmit, RetryBudget, Signals};

/// Where a guard keeps its networked part: set once, when the guard is
/// bound, and read with one load. `ManuallyDrop`, so a guard's `const`
/// builders compile (what it holds lives as long as the `static` guard).
pub struct StoreSlot<S: ?Sized + 'static>(ManuallyDrop<OnceLock<&'static S>>);

impl<S: ?Sized> StoreSlot<S> {
    /// An empty slot: the guard decides in process.
    #[must_use]
    pub const fn new() -> Self {
        Self(ManuallyDrop::new(OnceLock::new()))
    }

    /// The store the guard is bound to, if it is.
    #[inline]
    pub fn get(&self) -> Option<&'static S> {
        self.0.get().copied()
    }

    /// Binds the guard to the store `make` builds, kept for the process's
    /// life: `false` (and `make` not called) when it was bound already.
    pub fn bind(&self, make: impl FnOnce() -> &'static S) -> bool {
        let mut fresh = false;
        self.0.get_or_init(|| {
            fresh = true;
            make()
        });
        fresh
    }
}

impl<S: ?Sized> Default for StoreSlot<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: ?Sized> fmt::Debug for StoreSlot<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.get().is_some() {
            "bound"
        } else {
            "in process"
        })
    }
}

/// What every store of a guard answers: whether it is reachable.
pub trait Store: Send + Sync {
    /// Whether the store answered lately: the guard's decisions are the
    /// store's. When it is not, the guard decides in process.
    fn is_up(&self) -> bool;

    /// Counts a decision the guard made in process because the store did
    /// not answer (reported as the store's local decisions).
    fn local_decision(&self);
}

/// A [`Breaker`](crate::Breaker)'s store.
pub trait BreakerStore: Store {
    /// The answer from the state last read: go while closed, stop while
    /// open, [`Admit::Later`] (ask [`probe`](BreakerStore::probe)) once
    /// half-open.
    fn admit(&self, next: &NextAttempt) -> Admit;

    /// A probe's slot from the shared half-open breaker.
    fn probe(&'static self, next: NextAttempt) -> PendingAdmit<'static>;

    /// Hears how an attempt the breaker admitted ended.
    fn observe(&'static self, outcome: &Outcome);

    /// Where the shared breaker stands at `now`, as last read, and how long
    /// until it admits again.
    fn view(&self, now: Instant) -> (BreakerState, Duration);

    /// Closes the shared breaker by hand, for every process.
    fn reset(&'static self);
}

/// A [`Cooldown`](crate::Cooldown)'s store.
pub trait CooldownStore: Store {
    /// A waiter's turn in the shared queue.
    fn turn(&'static self, next: NextAttempt) -> PendingAdmit<'static>;

    /// Closes the shared cooldown for `hint` from now.
    fn close(&'static self, hint: Duration);

    /// Reopens the shared cooldown by hand, for every process.
    fn reset(&'static self);
}

/// A [`Throttle`](crate::Throttle)'s store.
pub trait ThrottleStore: Store {
    /// Whether the shared throttle paces (it heard a throttle, or the
    /// provider's headers).
    fn is_on(&self) -> bool;

    /// This process's probe, when the throttle probes first: one for the
    /// fleet.
    fn probe(&self) -> Admit;

    /// A token from what the process holds of the shared bucket, or
    /// [`Admit::Later`] (ask [`take`](ThrottleStore::take)).
    fn admit(&self, next: &NextAttempt) -> Admit;

    /// A batch of tokens from the shared bucket.
    fn take(&'static self, next: NextAttempt) -> PendingAdmit<'static>;

    /// Hears how an attempt the throttle admitted ended.
    fn observe(&'static self, outcome: &Outcome);

    /// A rate-limit window the provider reported, for the whole fleet.
    fn report(&'static self, signals: Signals);

    /// Turns the shared throttle off by hand, for every process.
    fn reset(&'static self);
}

/// A [`RetryBudget`]'s store.
pub trait BudgetStore: Store {
    /// A retry's `cost` in tokens from the shared bucket; `local` pays
    /// while the store does not answer.
    fn take<'a>(&'static self, local: &'a RetryBudget, cost: u32) -> PendingAdmit<'a>;

    /// Gives `amount` tokens back to the shared bucket.
    fn refund(&self, amount: u32);

    /// The shared bucket's tokens, as last read.
    fn balance(&self) -> u32;

    /// Fills the shared bucket by hand, for every process.
    fn reset(&'static self);
}

/// A [`Concurrency`](crate::Concurrency)'s store: the fleet's permits as
/// leases, each held by one process and renewed while its attempt runs.
pub trait ConcurrencyStore: Store {
    /// A permit for this process's next attempt, waiting at most `bound`:
    /// [`Admit::Go`] when the process holds one more (a lease, or while
    /// the store is down one of its share of the limit), else the refusal
    /// ([`StopReason::Concurrency`](crate::StopReason::Concurrency)).
    fn take(&'static self, bound: Duration) -> PendingAdmit<'static>;

    /// Gives one of the process's permits back: an attempt ended.
    fn give_back(&'static self);

    /// The permits the process holds.
    fn in_flight(&self) -> u32;

    /// Lets every lease go, for every process (by hand).
    fn reset(&'static self);
}

/// The hidden accessors a store reaches a provider guard by: its
/// statistics record (a store that decides for it counts its waits and
/// refusals there) and its slot (what the store binds).
macro_rules! store_hooks {
    ($guard:ty, $store:ident) => {
        impl $guard {
            /// Its statistics record, for a store that decides for it.
            #[doc(hidden)]
            #[must_use]
            pub const fn guard_record(&self) -> &crate::stats::GuardRecord {
                &self.record
            }

            /// The slot a store binds it by.
            #[doc(hidden)]
            #[must_use]
            pub const fn store_slot(&self) -> &crate::store::StoreSlot<dyn crate::store::$store> {
                &self.shared
            }
        }
    };
}
pub(crate) use store_hooks;

/// What a store implementation needs of the core beyond the guards' public
/// API: the clock the guards keep their times on, the bounds they clamp
/// to, and how they read an outcome. Re-exported, not copied, so a store
/// decides by the same rules as the guards in process.
pub mod hooks {
    pub use crate::clock::{
        MIN_ATTEMPT_NANOS, TIMER_ROUNDING_NANOS, saturating_nanos, since_epoch,
    };
    pub use crate::guard::breaker::counted;
    pub use crate::guard::guard_name::{MAX_BYTES, REFUSED, check as check_name};
    pub use crate::guard::throttle::{MAX_RESET, overload_only, throttled};
    pub use crate::guard::{LONGEST_HOLD, blocked_on};
}
