// Two `#[retry]` on one fn: the upper one reports the lower one.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(max = 5)]
#[tenacious::retry(base = "1s")]
fn call() -> Result<u8, Flaky> {
    Ok(1)
}

fn main() {}
