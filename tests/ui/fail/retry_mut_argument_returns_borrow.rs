// A fn returning a borrow of its only (`&mut`) argument, through a named
// lifetime.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry]
fn newest<'a>(log: &'a mut Vec<String>, line: &str) -> Result<&'a String, Flaky> {
    log.push(line.to_owned());
    log.last().ok_or(Flaky)
}

fn main() {}
