// A `const` or `static` policy with a `timeout` bounds an async fn's
// attempts, so the fn's error must be able to say one timed out, as it
// must for `timeout = "..."` written as a key: an error that cannot is one
// error on the policy's path (the timeout is not silently dropped).
use std::time::Duration;

use tenacious::{Classify, ErrorClass, Policy, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

const BOUNDED: Policy = Policy::new().timeout(Duration::from_secs(1));
static BOUNDED_STATIC: Policy = Policy::new().timeout(Duration::from_secs(1));

#[retry(policy = BOUNDED)]
async fn hangs() -> Result<(), Flaky> {
    std::future::pending().await
}

#[retry(policy = BOUNDED_STATIC, max = 2)]
async fn hangs_too() -> Result<(), Flaky> {
    std::future::pending().await
}

fn main() {}
