// Classes in `on` are joined with `|`; a comma starts the next key.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(on = Transient, RateLimited)]
fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
