use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

trait Tool {
    #[retry]
    fn call(&self) -> Result<(), Flaky>;
}

fn main() {}
