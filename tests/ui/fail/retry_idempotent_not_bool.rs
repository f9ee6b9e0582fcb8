// `idempotent` takes `true` or `false`.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Declined;

impl Classify for Declined {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(idempotent = "no")]
fn charge() -> Result<(), Declined> {
    Ok(())
}

fn main() {}
