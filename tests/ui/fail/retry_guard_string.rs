// Every guard key takes the path of a `static`: a string (a name, as
// `policy = "openai"` takes) is an error on it, showing the declaration.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(cooldown = "openai")]
async fn cooldown() -> Result<(), Flaky> {
    Ok(())
}

#[retry(breaker = "openai")]
async fn breaker() -> Result<(), Flaky> {
    Ok(())
}

#[retry(throttle = "openai")]
async fn throttle() -> Result<(), Flaky> {
    Ok(())
}

#[retry(budget = "openai")]
async fn budget() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
