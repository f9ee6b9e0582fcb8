use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn is_retryable(error: Flaky) -> bool {
    let _ = error;
    true
}

#[retry(when = is_retryable)]
fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
