// A `check` reads the attempt's value by reference: one taking it by
// value is one error on its path, naming the shape it needs.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Empty;

impl Classify for Empty {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

fn is_complete(text: String) -> bool {
    !text.is_empty()
}

#[retry(check = is_complete)]
fn completion() -> Result<String, Empty> {
    Ok(String::new())
}

fn main() {}
