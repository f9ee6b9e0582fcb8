// A `check` reads the attempt's value by reference and returns
// `Result<(), E>`: one that returns a bool is an error on its path.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Empty;

impl Classify for Empty {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn is_complete(text: &str) -> bool {
    !text.is_empty()
}

#[retry(check = is_complete)]
fn completion() -> Result<String, Empty> {
    Ok(String::new())
}

fn main() {}
