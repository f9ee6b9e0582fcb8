use tenacious::RetryBudget;
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

static BUDGET: RetryBudget = RetryBudget::new();

#[retry(budget = "BUDGET")]
async fn quoted() -> Result<(), Flaky> {
    Ok(())
}

#[retry(budget = RetryBudget::new())]
async fn constructed() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
