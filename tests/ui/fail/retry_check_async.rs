// A `check` is a plain fn, called on each attempt's value: an `async fn`
// is one error on its path, naming the shape it needs.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Empty;

impl Classify for Empty {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

async fn is_complete(text: &String) -> Result<(), Empty> {
    if text.is_empty() { Err(Empty) } else { Ok(()) }
}

#[retry(check = is_complete)]
async fn completion() -> Result<String, Empty> {
    Ok(String::new())
}

fn main() {}
