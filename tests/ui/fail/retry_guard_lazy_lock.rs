// A guard is a plain `static` of its type, built by its `const fn new()`:
// one behind a `LazyLock` (or an `Arc`) is one error on its path, for every
// guard key, saying how to declare it.
use std::sync::{Arc, LazyLock};

use tenacious::{
    Admit, Breaker, Classify, Cooldown, ErrorClass, Guard, NextAttempt, Outcome, RetryBudget,
    Throttle, retry,
};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
    fn refused() -> Option<fn(tenacious::Refused) -> Self> {
        Some(|_| Flaky)
    }
}

impl tenacious::Refusable for Flaky {}

#[derive(Debug)]
struct Quota;

impl Guard for Quota {
    fn admit(&self, _: &NextAttempt) -> Admit {
        Admit::Go
    }
    fn observe(&self, _: &Outcome) {}
}

static HEALTH: LazyLock<Arc<Breaker>> = LazyLock::new(|| Arc::new(Breaker::new()));
static BREAKER: LazyLock<Breaker> = LazyLock::new(Breaker::new);
static COOLDOWN: LazyLock<Cooldown> = LazyLock::new(Cooldown::new);
static THROTTLE: LazyLock<Arc<Throttle>> = LazyLock::new(|| Arc::new(Throttle::new()));
static BUDGET: LazyLock<RetryBudget> = LazyLock::new(RetryBudget::new);
static QUOTA: LazyLock<Quota> = LazyLock::new(|| Quota);

#[retry(breaker = HEALTH)]
async fn arc_breaker() -> Result<(), Flaky> {
    Ok(())
}

#[retry(breaker = BREAKER)]
fn lazy_breaker() -> Result<(), Flaky> {
    Ok(())
}

#[retry(cooldown = COOLDOWN)]
async fn lazy_cooldown() -> Result<(), Flaky> {
    Ok(())
}

#[retry(throttle = THROTTLE)]
async fn arc_throttle() -> Result<(), Flaky> {
    Ok(())
}

#[retry(budget = BUDGET)]
async fn lazy_budget() -> Result<(), Flaky> {
    Ok(())
}

#[retry(guard = QUOTA)]
async fn lazy_guard() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
