use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(nested = "never")]
async fn call() -> Result<(), Flaky> {
    Ok(())
}

#[retry(nested = "Retry")]
async fn typo() -> Result<(), Flaky> {
    Ok(())
}

#[retry(nested = retry)]
async fn bare() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
