// A `when` fn must return `bool`: one error, naming the return type.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn is_retryable(error: &Flaky) -> u8 {
    let _ = error;
    1
}

#[retry(when = is_retryable)]
fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
