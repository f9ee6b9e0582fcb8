use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<tenacious::Elapsed> for Flaky {
    fn from(_: tenacious::Elapsed) -> Self {
        Flaky
    }
}

#[retry(timeout = "30s", deadline = "10s")]
async fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
