// Other libraries' names for the guards get a "did you mean".
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

static PROVIDER_BREAKER: tenacious::Breaker = tenacious::Breaker::new();
static PROVIDER_THROTTLE: tenacious::Throttle = tenacious::Throttle::new();
static PROVIDER_LIMIT: tenacious::Concurrency = tenacious::Concurrency::new(8);

#[retry(circuit_breaker = PROVIDER_BREAKER)]
fn breaker() -> Result<(), Flaky> {
    Ok(())
}

#[retry(rate_limiter = PROVIDER_THROTTLE)]
fn throttle() -> Result<(), Flaky> {
    Ok(())
}

#[retry(bulkhead = PROVIDER_LIMIT)]
fn bulkhead() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
