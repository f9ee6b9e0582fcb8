// The user's own lints see a retried fn as they see the plain fn: an
// unused private one is `dead_code`.
#![deny(dead_code)]

use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry]
fn never_called() -> Result<u8, Flaky> {
    Ok(1)
}

#[retry]
async fn never_awaited(name: &str) -> Result<usize, Flaky> {
    Ok(name.len())
}

fn main() {
    let _ = Flaky;
}
