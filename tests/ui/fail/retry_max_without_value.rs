// `max =` with nothing after it: the error is on the key, with an example.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(max = )]
fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
