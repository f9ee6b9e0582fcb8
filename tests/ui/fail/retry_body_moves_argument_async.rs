use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

async fn consume(name: String) -> Result<usize, Flaky> {
    Ok(name.len())
}

#[retry]
async fn call(name: String) -> Result<usize, Flaky> {
    consume(name).await
}

fn main() {}
