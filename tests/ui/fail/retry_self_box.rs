use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Client;

impl Client {
    #[retry]
    fn call(self: Box<Self>) -> Result<(), Flaky> {
        Ok(())
    }
}

fn main() {}
