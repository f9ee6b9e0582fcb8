// `#[retry]` reads its policy where the fn is written: an argument of the
// fn, known only at run time, cannot be it. One error on the path, saying
// to run the call through the policy by hand.
use tenacious::{Classify, ErrorClass, Policy, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(policy = policy)]
async fn complete(policy: Policy, prompt: &str) -> Result<(), Flaky> {
    let _ = (policy, prompt);
    Ok(())
}

fn main() {}
