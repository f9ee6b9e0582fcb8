// `fallback` names a fn: a path to a value of another type is one error
// on it.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

const CACHED: &str = "cached";

#[retry(fallback = CACHED)]
fn forecast() -> Result<String, Down> {
    Err(Down)
}

fn main() {}
