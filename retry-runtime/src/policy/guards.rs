//! The guards a policy names (its guard, breaker, cooldown, throttle and
//! budget), and the chain the engine asks them in.
use super::Policy;
use crate::guard::ByAddress;
use crate::{Breaker, Concurrency, Cooldown, Guard, RetryBudget, Throttle};

impl Policy {
    /// Asks `guard` before every attempt whether it may start, and tells it
    /// how each one ended (see [`Guard`] for when it is asked and what it
    /// may answer). Default: none, and a call without a guard runs no guard
    /// code. A policy's [`budget`](Policy::budget) is asked after it.
    ///
    /// ```
    /// use tenacious::{Admit, Guard, NextAttempt, Outcome, Policy};
    ///
    /// #[derive(Debug)]
    /// struct Open;
    ///
    /// impl Guard for Open {
    ///     fn admit(&self, _: &NextAttempt) -> Admit {
    ///         Admit::Go
    ///     }
    ///     fn observe(&self, _: &Outcome) {}
    /// }
    ///
    /// static OPEN: Open = Open;
    /// const POLICY: Policy = Policy::new().guard(&OPEN);
    /// assert!(POLICY.get_guard().is_some());
    /// assert_ne!(POLICY, Policy::new());
    /// ```
    #[must_use]
    pub const fn guard(self, guard: &'static dyn Guard) -> Self {
        Self {
            guard: Some(ByAddress(guard)),
            guards: self.guards | HAS_GUARD,
            ..self
        }
    }

    /// Stops every call at once, with
    /// [`StopReason::CircuitOpen`](crate::StopReason::CircuitOpen) and no
    /// attempt, while a shared circuit [`Breaker`] is open: opened by the
    /// provider's failures (`Transient` and overload, never `Invalid`,
    /// `Fatal` or a rate limit), half-open after its break. Before the
    /// first attempt the call returns its error made from a
    /// [`Refused`](crate::Refused), if its type can say so (see
    /// [`Classify::refused`](crate::Classify::refused)). Default: none.
    /// Asked first of the guards, so an open circuit stops a call before
    /// it waits for anything.
    ///
    /// ```
    /// use tenacious::{Breaker, Policy};
    ///
    /// static PROVIDER: Breaker = Breaker::new();
    /// const POLICY: Policy = Policy::new().breaker(&PROVIDER);
    /// assert!(std::ptr::eq(POLICY.get_breaker().unwrap(), &PROVIDER));
    /// ```
    #[must_use]
    pub const fn breaker(self, breaker: &'static Breaker) -> Self {
        Self {
            breaker: Some(ByAddress(breaker)),
            guards: self.guards | HAS_BREAKER,
            ..self
        }
    }

    /// Waits for a shared [`Cooldown`] before every attempt, the first
    /// included, and closes it when an attempt gets a `RateLimited` error
    /// with a server hint: every call naming it waits out one call's 429.
    /// A wait it cannot serve (longer than
    /// [`max_retry_after`](Policy::max_retry_after), or past the deadline)
    /// stops the call with [`StopReason::Cooldown`](crate::StopReason::Cooldown).
    /// Default: none. The provider guards are asked in a fixed order (see
    /// [`Guard`]), the cooldown before [`guard`](Policy::guard) and
    /// [`budget`](Policy::budget).
    ///
    /// ```
    /// use tenacious::{Cooldown, Policy};
    ///
    /// static OPENAI: Cooldown = Cooldown::new();
    /// const POLICY: Policy = Policy::new().cooldown(&OPENAI);
    /// assert!(std::ptr::eq(POLICY.get_cooldown().unwrap(), &OPENAI));
    /// ```
    #[must_use]
    pub const fn cooldown(self, cooldown: &'static Cooldown) -> Self {
        Self {
            cooldown: Some(ByAddress(cooldown)),
            guards: self.guards | HAS_COOLDOWN,
            ..self
        }
    }

    /// Paces every attempt, the first included, to a shared [`Throttle`]:
    /// an adaptive client-side request rate, off until the provider first
    /// throttles a call naming it, and paced ahead of a 429 by the
    /// provider's rate-limit headers. A wait that leaves no room before
    /// the deadline stops the call with
    /// [`StopReason::Deadline`](crate::StopReason::Deadline). Default:
    /// none. Asked after the [`cooldown`](Policy::cooldown), before
    /// [`guard`](Policy::guard).
    ///
    /// ```
    /// use tenacious::{Policy, Throttle};
    ///
    /// static OPENAI: Throttle = Throttle::new();
    /// const POLICY: Policy = Policy::new().throttle(&OPENAI);
    /// assert!(std::ptr::eq(POLICY.get_throttle().unwrap(), &OPENAI));
    /// ```
    #[must_use]
    pub const fn throttle(self, throttle: &'static Throttle) -> Self {
        Self {
            throttle: Some(ByAddress(throttle)),
            guards: self.guards | HAS_THROTTLE,
            ..self
        }
    }

    /// Draws every retry from a shared [`RetryBudget`]; an empty one stops
    /// retrying at once. Default: none (retries are bounded only by `max`).
    ///
    /// ```
    /// use tenacious::{Policy, RetryBudget};
    ///
    /// static BUDGET: RetryBudget = RetryBudget::new();
    /// const POLICY: Policy = Policy::new().budget(&BUDGET);
    /// assert!(std::ptr::eq(POLICY.get_budget().unwrap(), &BUDGET));
    /// ```
    #[must_use]
    pub const fn budget(self, budget: &'static RetryBudget) -> Self {
        Self {
            budget: Some(ByAddress(budget)),
            guards: self.guards | HAS_BUDGET,
            ..self
        }
    }

    /// Holds every attempt to a shared [`Concurrency`] limit: at most its
    /// limit of attempts in flight among every call naming it, each
    /// taking a permit just before it starts (after the other guards and
    /// the backoff) and giving it back when it ends, on every path. A call
    /// that finds none free waits in order, outside the attempt's
    /// `timeout` and inside its `deadline`; a wait it cannot serve stops
    /// it with [`StopReason::Concurrency`](crate::StopReason::Concurrency).
    /// Default: none, and a call without one runs none of it.
    ///
    /// ```
    /// use tenacious::{Concurrency, Policy};
    ///
    /// static PROVIDER: Concurrency = Concurrency::new(16);
    /// const POLICY: Policy = Policy::new().concurrency(&PROVIDER);
    /// assert!(std::ptr::eq(POLICY.get_concurrency().unwrap(), &PROVIDER));
    /// ```
    #[must_use]
    pub const fn concurrency(self, concurrency: &'static Concurrency) -> Self {
        Self {
            concurrency: Some(ByAddress(concurrency)),
            guards: self.guards | HAS_CONCURRENCY,
            ..self
        }
    }

    /// The limit set by [`concurrency`](Policy::concurrency), if any.
    #[must_use]
    pub const fn get_concurrency(&self) -> Option<&'static Concurrency> {
        match self.concurrency {
            Some(ByAddress(concurrency)) => Some(concurrency),
            None => None,
        }
    }

    /// The guard set by [`guard`](Policy::guard), if any.
    #[must_use]
    pub const fn get_guard(&self) -> Option<&'static dyn Guard> {
        match self.guard {
            Some(ByAddress(guard)) => Some(guard),
            None => None,
        }
    }

    /// The breaker set by [`breaker`](Policy::breaker), if any.
    #[must_use]
    pub const fn get_breaker(&self) -> Option<&'static Breaker> {
        match self.breaker {
            Some(ByAddress(breaker)) => Some(breaker),
            None => None,
        }
    }

    /// The cooldown set by [`cooldown`](Policy::cooldown), if any.
    #[must_use]
    pub const fn get_cooldown(&self) -> Option<&'static Cooldown> {
        match self.cooldown {
            Some(ByAddress(cooldown)) => Some(cooldown),
            None => None,
        }
    }

    /// The throttle set by [`throttle`](Policy::throttle), if any.
    #[must_use]
    pub const fn get_throttle(&self) -> Option<&'static Throttle> {
        match self.throttle {
            Some(ByAddress(throttle)) => Some(throttle),
            None => None,
        }
    }

    /// The shared retry budget, if any.
    #[must_use]
    pub const fn get_budget(&self) -> Option<&'static RetryBudget> {
        match self.budget {
            Some(ByAddress(budget)) => Some(budget),
            None => None,
        }
    }

    /// The guards a call asks before each attempt, besides the budget, in
    /// the order it asks them (see [`Guard`]): a slot per kind, `None`
    /// where the policy names none.
    #[inline]
    pub(crate) const fn chain(&self) -> Chain {
        [
            match self.breaker {
                Some(ByAddress(breaker)) => Some(breaker as &'static dyn Guard),
                None => None,
            },
            match self.cooldown {
                Some(ByAddress(cooldown)) => Some(cooldown as &'static dyn Guard),
                None => None,
            },
            match self.throttle {
                Some(ByAddress(throttle)) => Some(throttle as &'static dyn Guard),
                None => None,
            },
            self.get_guard(),
        ]
    }

    /// Whether the policy names a guard besides its budget (a concurrency
    /// limit included): known at compile time for a `const` policy.
    #[inline]
    pub(crate) const fn has_chain(&self) -> bool {
        self.guards & !HAS_BUDGET != 0
    }

    /// Whether the only guard the policy names is a concurrency limit: its
    /// calls take a permit before each attempt, and tell no guard of
    /// their outcomes.
    #[inline]
    pub(crate) const fn only_concurrency(&self) -> bool {
        self.guards == HAS_CONCURRENCY
    }

    /// Whether the policy names a guard that hears of attempts' outcomes:
    /// any but a concurrency limit, its budget included.
    #[inline]
    pub(crate) const fn has_observers(&self) -> bool {
        self.guards & !HAS_CONCURRENCY != 0
    }

    /// Whether the policy names any guard, its budget included.
    #[inline]
    pub(crate) const fn has_guards(&self) -> bool {
        self.guards != 0
    }
}

/// [`Policy`]'s `guards` bits.
const HAS_COOLDOWN: u8 = 1;
const HAS_GUARD: u8 = 2;
const HAS_BUDGET: u8 = 4;
const HAS_THROTTLE: u8 = 8;
const HAS_BREAKER: u8 = 16;
const HAS_CONCURRENCY: u8 = 32;

/// The guards of [`Policy::chain`].
pub(crate) type Chain = [Option<&'static dyn Guard>; 4];
