// `check` takes a path to a fn, like `when` and `notify`.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Empty;

impl Classify for Empty {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(check = |text: &String| if text.is_empty() { Err(Empty) } else { Ok(()) })]
fn completion() -> Result<String, Empty> {
    Ok(String::new())
}

fn main() {}
