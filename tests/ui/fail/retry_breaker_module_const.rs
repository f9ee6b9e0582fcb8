// A `const` breaker in a module is a fresh breaker at every use, shared by
// no other call: it must be a `static`. The path alone cannot tell a
// `const` from a `static`, so the error is rustc's (a `const` has no
// address), one, on the path.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
    fn refused() -> Option<fn(tenacious::Refused) -> Self> {
        Some(|_| Flaky)
    }
}

impl tenacious::Refusable for Flaky {}

mod health {
    use tenacious::Breaker;

    pub const PROVIDER: Breaker = Breaker::new();
}

#[retry(breaker = health::PROVIDER)]
fn complete() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
