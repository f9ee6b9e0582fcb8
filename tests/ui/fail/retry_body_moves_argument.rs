use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

// Every attempt borrows the arguments; a body that moves one out cannot run
// twice. Clone inside the body instead: `consume(name.clone())`.
fn consume(name: String) -> Result<usize, Flaky> {
    Ok(name.len())
}

#[retry]
fn call(name: String) -> Result<usize, Flaky> {
    consume(name)
}

fn main() {}
