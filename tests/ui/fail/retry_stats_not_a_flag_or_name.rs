use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(stats = off)]
fn unquoted() -> Result<(), Flaky> {
    Ok(())
}

#[retry(stats = 0)]
fn number() -> Result<(), Flaky> {
    Ok(())
}

#[retry(stats = "")]
fn empty_name() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
