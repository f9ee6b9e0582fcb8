//! What the guard keys of `#[retry]` (`budget`, `breaker`, `cooldown`,
//! `throttle`, `concurrency`, `guard`) take: a plain `static` of the guard's type, built
//! at compile time by its `const fn new()`.
//!
//! The macro cannot see the type of the path it is given, so the generated
//! policy passes `&PATH` to the policy's builder through the fn here named
//! after the key (`shared_breaker(&PATH)`), which takes the `static` by its
//! own type, never through a deref coercion: a `static` of another type (a
//! `LazyLock<Arc<Breaker>>`, a `Box<Cooldown>`, a `u32`) is one error on
//! the path, in the words of the trait below, rather than the builder's
//! "non-const deref coercion" (one per layer) or a type mismatch in the
//! runtime's terms. The result's type is the trait's projection, which a
//! failed bound leaves unknown, so the builder reports nothing more.

use crate::{Breaker, Concurrency, Cooldown, Guard, RetryBudget, Throttle};

// The four keys' traits and fns below are written out, not made by a
// `macro_rules!`: rustc quotes their source in the notes of the errors they
// exist for ("the trait is implemented for `Breaker`", "required by a bound
// in `shared_breaker`"), and a macro's source there reads `impl $name for
// $ty` to the user.

/// A type `budget` takes a `static` of: [`RetryBudget`].
#[diagnostic::on_unimplemented(
    message = "`budget` takes a plain `static RetryBudget`, but this `static` is a `{Self}`",
    label = "expected a `static` of type `tenacious::RetryBudget`",
    note = "declare `static RETRY_BUDGET: tenacious::RetryBudget = tenacious::RetryBudget::new();` and write `budget = RETRY_BUDGET`: `RetryBudget::new` is a `const fn`, so the budget needs no `LazyLock`, `Arc` or `Box` around it, and every call that names the `static` shares it"
)]
pub trait SharedBudget {
    /// The type itself.
    type Is: ?Sized;
}
impl SharedBudget for RetryBudget {
    type Is = Self;
}

/// A type `breaker` takes a `static` of: [`Breaker`].
#[diagnostic::on_unimplemented(
    message = "`breaker` takes a plain `static Breaker`, but this `static` is a `{Self}`",
    label = "expected a `static` of type `tenacious::Breaker`",
    note = "declare `static PROVIDER_BREAKER: tenacious::Breaker = tenacious::Breaker::new();` and write `breaker = PROVIDER_BREAKER`: `Breaker::new` is a `const fn`, so the breaker needs no `LazyLock`, `Arc` or `Box` around it, and every call that names the `static` shares it"
)]
pub trait SharedBreaker {
    /// The type itself.
    type Is: ?Sized;
}
impl SharedBreaker for Breaker {
    type Is = Self;
}

/// A type `cooldown` takes a `static` of: [`Cooldown`].
#[diagnostic::on_unimplemented(
    message = "`cooldown` takes a plain `static Cooldown`, but this `static` is a `{Self}`",
    label = "expected a `static` of type `tenacious::Cooldown`",
    note = "declare `static PROVIDER_COOLDOWN: tenacious::Cooldown = tenacious::Cooldown::new();` and write `cooldown = PROVIDER_COOLDOWN`: `Cooldown::new` is a `const fn`, so the cooldown needs no `LazyLock`, `Arc` or `Box` around it, and every call that names the `static` shares it"
)]
pub trait SharedCooldown {
    /// The type itself.
    type Is: ?Sized;
}
impl SharedCooldown for Cooldown {
    type Is = Self;
}

/// A type `throttle` takes a `static` of: [`Throttle`].
#[diagnostic::on_unimplemented(
    message = "`throttle` takes a plain `static Throttle`, but this `static` is a `{Self}`",
    label = "expected a `static` of type `tenacious::Throttle`",
    note = "declare `static PROVIDER_THROTTLE: tenacious::Throttle = tenacious::Throttle::new();` and write `throttle = PROVIDER_THROTTLE`: `Throttle::new` is a `const fn`, so the throttle needs no `LazyLock`, `Arc` or `Box` around it, and every call that names the `static` shares it"
)]
pub trait SharedThrottle {
    /// The type itself.
    type Is: ?Sized;
}
impl SharedThrottle for Throttle {
    type Is = Self;
}

/// A type `concurrency` takes a `static` of: [`Concurrency`].
#[diagnostic::on_unimplemented(
    message = "`concurrency` takes a plain `static Concurrency`, but this `static` is a `{Self}`",
    label = "expected a `static` of type `tenacious::Concurrency`",
    note = "declare `static PROVIDER_CONCURRENCY: tenacious::Concurrency = tenacious::Concurrency::new(8);` and write `concurrency = PROVIDER_CONCURRENCY`: `Concurrency::new` is a `const fn`, so the limit needs no `LazyLock`, `Arc` or `Box` around it, and every call that names the `static` shares it"
)]
pub trait SharedConcurrency {
    /// The type itself.
    type Is: ?Sized;
}
impl SharedConcurrency for Concurrency {
    type Is = Self;
}

/// A type `guard` takes a `static` of: any [`Guard`].
#[diagnostic::on_unimplemented(
    message = "`guard` takes a plain `static` whose type implements `Guard`, but this `static` is a `{Self}`",
    label = "expected a `static` whose type implements `tenacious::Guard`",
    note = "declare `static PROVIDER_GUARD: MyGuard = MyGuard::new();`, with a `const fn new` and `impl tenacious::Guard for MyGuard` (`admit` says whether an attempt may start, `observe` hears how it ended), and write `guard = PROVIDER_GUARD`: a guard built at compile time needs no `LazyLock`, `Arc` or `Box` around it, and every call that names the `static` shares it"
)]
pub trait SharedGuard: Guard {}
// Not recommended: a type that is no `Guard` is then reported by the
// message above, which says what `guard` takes, not by `Guard`'s own.
#[diagnostic::do_not_recommend]
impl<G: Guard> SharedGuard for G {}

/// `budget = PATH`: the `static` itself, for [`Policy::budget`](crate::Policy::budget).
#[must_use]
pub const fn shared_budget<G: SharedBudget<Is = G>>(budget: &'static G) -> &'static G::Is {
    budget
}

/// `breaker = PATH`: the `static` itself, for [`Policy::breaker`](crate::Policy::breaker).
#[must_use]
pub const fn shared_breaker<G: SharedBreaker<Is = G>>(breaker: &'static G) -> &'static G::Is {
    breaker
}

/// `cooldown = PATH`: the `static` itself, for [`Policy::cooldown`](crate::Policy::cooldown).
#[must_use]
pub const fn shared_cooldown<G: SharedCooldown<Is = G>>(cooldown: &'static G) -> &'static G::Is {
    cooldown
}

/// `throttle = PATH`: the `static` itself, for [`Policy::throttle`](crate::Policy::throttle).
#[must_use]
pub const fn shared_throttle<G: SharedThrottle<Is = G>>(throttle: &'static G) -> &'static G::Is {
    throttle
}

/// `concurrency = PATH`: the `static` itself, for [`Policy::concurrency`](crate::Policy::concurrency).
#[must_use]
pub const fn shared_concurrency<G: SharedConcurrency<Is = G>>(
    concurrency: &'static G,
) -> &'static G::Is {
    concurrency
}

/// `guard = PATH`: the `static` as a `Guard`, for [`Policy::guard`](crate::Policy::guard).
#[must_use]
pub const fn shared_guard<G: SharedGuard>(guard: &'static G) -> &'static dyn Guard {
    guard
}
