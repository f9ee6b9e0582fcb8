// A `Pin<Box<Self>>` receiver is moved by the first attempt: the error says
// to take `Pin<&mut Self>` instead.
use std::pin::Pin;

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
    fn call(self: Pin<Box<Self>>) -> Result<(), Flaky> {
        Ok(())
    }
}

fn main() {}
