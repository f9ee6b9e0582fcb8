// Keys beside a `const` or `static` policy that fit it compile: a
// timeout within its deadline, a base under its cap (both given, or one
// against the policy's other), a policy without a timeout on an error
// that cannot hold an `Elapsed`, one with a timeout on a sync fn (whose
// attempts no timeout bounds) and on a fn whose error can.
use std::time::Duration;

use tenacious::{Classify, Elapsed, ErrorClass, Policy, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<Elapsed> for Flaky {
    fn from(_: Elapsed) -> Self {
        Flaky
    }
}

const SHORT: Policy = Policy::new()
    .base(Duration::from_millis(100))
    .cap(Duration::from_secs(1))
    .timeout(Duration::from_secs(5))
    .deadline(Duration::from_secs(10));

#[derive(Debug)]
struct Plain;

impl Classify for Plain {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

const UNBOUNDED: Policy = Policy::new().max(2);

#[retry(policy = SHORT, timeout = "2s", base = "500ms")]
async fn within() -> Result<(), Flaky> {
    Ok(())
}

#[retry(policy = SHORT, base = "5s", cap = "10s", deadline = "20s")]
async fn both_halves() -> Result<(), Flaky> {
    Ok(())
}

#[retry(policy = SHORT, cap = "200ms", deadline = "1s")]
fn blocking() -> Result<(), Plain> {
    Ok(())
}

#[retry(policy = UNBOUNDED)]
async fn unbounded() -> Result<(), Plain> {
    Ok(())
}

struct Client;

impl Client {
    const POLICY: Policy = SHORT;

    #[retry(policy = Self::POLICY, base = "200ms")]
    async fn call(&self) -> Result<(), Flaky> {
        Ok(())
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        within().await.unwrap();
        both_halves().await.unwrap();
        unbounded().await.unwrap();
        Client.call().await.unwrap();
    });
    blocking().unwrap();
}
