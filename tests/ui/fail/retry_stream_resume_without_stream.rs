// `resume` reconnects a retried stream: on a fn that opens none, it is an
// error on the key.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(resume = true)]
fn call() -> Result<u32, Flaky> {
    Ok(1)
}

fn main() {}
