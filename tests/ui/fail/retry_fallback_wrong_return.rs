// A `fallback` returns what the retried fn returns: one returning
// something else is an error on its path.
use tenacious::{Classify, ErrorClass, Failure, retry};

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn cached(_: Failure<Down>) -> String {
    "cached".to_owned()
}

#[retry(fallback = cached)]
fn forecast() -> Result<String, Down> {
    Err(Down)
}

fn main() {}
