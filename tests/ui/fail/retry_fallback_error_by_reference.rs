// A fallback takes the give-up by value: one borrowing the error is one
// error on its path, in the terms of `fallback`.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn cached(_: &Down) -> Result<String, Down> {
    Ok("cached".to_owned())
}

#[retry(fallback = cached)]
fn forecast() -> Result<String, Down> {
    Err(Down)
}

fn main() {}
