// A `const` budget would be a fresh bucket at every use, shared by no one:
// it must be a `static`.
use tenacious::RetryBudget;
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

const BUDGET: RetryBudget = RetryBudget::new();

#[retry(budget = BUDGET)]
async fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
