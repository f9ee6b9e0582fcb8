// `first_item` and `idle` time a retried stream: on a fn that opens none,
// each is an error on its key.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(first_item = "10s", idle = "30s")]
async fn call() -> Result<u32, Flaky> {
    Ok(1)
}

fn main() {}
