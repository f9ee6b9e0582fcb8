use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(deadline = "1 minute")]
async fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
