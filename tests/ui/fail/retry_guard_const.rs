// A `const` guard with state would be a fresh guard at every use, shared
// by no one: it must be a `static`.
use std::sync::atomic::AtomicU32;

use tenacious::{Admit, Classify, ErrorClass, Guard, NextAttempt, Outcome, retry};

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
struct Quota(AtomicU32);

impl Guard for Quota {
    fn admit(&self, _: &NextAttempt) -> Admit {
        Admit::Go
    }
    fn observe(&self, _: &Outcome) {}
}

const QUOTA: Quota = Quota(AtomicU32::new(10));

#[retry(guard = QUOTA)]
async fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
