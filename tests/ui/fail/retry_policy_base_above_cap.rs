// A `base` beside a policy whose `cap` is lower gets the error the two
// keys would: on the key's value, at compile time.
use std::time::Duration;

use tenacious::{Classify, Elapsed, ErrorClass, Policy, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<Elapsed> for Flaky {
    fn from(_: Elapsed) -> Self {
        Flaky
    }
}

const SHORT: Policy = Policy::new()
    .base(Duration::from_millis(100))
    .cap(Duration::from_secs(1))
    .timeout(Duration::from_secs(5))
    .deadline(Duration::from_secs(10));

#[retry(policy = SHORT, base = "2s")]
fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
