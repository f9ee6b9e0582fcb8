// An async builder-style `&mut self` method returning `&mut Self`.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Request {
    tries: u32,
}

impl Request {
    #[retry]
    async fn send(&mut self) -> Result<&mut Self, Flaky> {
        self.tries += 1;
        Ok(self)
    }
}

fn main() {}
