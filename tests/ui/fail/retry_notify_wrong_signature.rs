use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn log_retry(error: &Flaky) {
    let _ = error;
}

#[retry(notify = log_retry)]
fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
