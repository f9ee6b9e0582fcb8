use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(max = 3, base = "1s", max = 5)]
fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
