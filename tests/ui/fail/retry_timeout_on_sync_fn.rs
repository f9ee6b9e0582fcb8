// A running sync fn cannot be interrupted: `timeout` needs an `async fn`.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<tenacious::Elapsed> for Flaky {
    fn from(_: tenacious::Elapsed) -> Self {
        Flaky
    }
}

#[retry(timeout = "1s")]
fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
