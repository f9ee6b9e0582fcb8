// `#[track_caller]` cannot reach the body, which runs in a closure.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry]
#[track_caller]
fn checked(value: Option<u8>) -> Result<u8, Flaky> {
    Ok(value.expect("a value"))
}

fn main() {}
