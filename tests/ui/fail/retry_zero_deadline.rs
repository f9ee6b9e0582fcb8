use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(deadline = "0s")]
async fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
