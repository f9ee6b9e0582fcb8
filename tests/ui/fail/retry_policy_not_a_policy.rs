// `policy` names a `const Policy`: another value is a type error on it.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

const OPENAI: u32 = 5;

#[retry(policy = OPENAI)]
fn chat() -> Result<(), Down> {
    Err(Down)
}

fn main() {}
