// A timed-out attempt becomes `E::from(Elapsed)`: without the impl, the
// error names it, on the `timeout` key.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(timeout = "1s")]
async fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
