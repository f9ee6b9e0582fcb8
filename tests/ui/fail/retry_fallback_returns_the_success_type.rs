// A fallback returns what the retried fn returns, the whole `Result`:
// one returning the success type alone is one error on its path, and the
// retried fn's return type is not questioned.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn cached(_: Down) -> String {
    "cached".to_owned()
}

#[retry(fallback = cached)]
fn forecast() -> Result<String, Down> {
    Err(Down)
}

fn main() {}
