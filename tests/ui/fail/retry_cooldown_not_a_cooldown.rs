// `cooldown` names a `static Cooldown`: a string is an error on the value,
// and a `static` of another type is a type error on its path.
use tenacious::{Classify, ErrorClass, RetryBudget, retry};

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

#[retry(cooldown = "PROVIDER")]
async fn quoted() -> Result<(), Flaky> {
    Ok(())
}

static BUDGET: RetryBudget = RetryBudget::new();

#[retry(cooldown = BUDGET)]
fn budget() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
