// `budget` names a `static RetryBudget`: anything else is a type error on
// the path.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

static LIMIT: u32 = 500;

#[retry(budget = LIMIT)]
async fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
