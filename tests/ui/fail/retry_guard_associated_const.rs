// A guard named by an associated item is a `const` (Rust has no associated
// `static`): a fresh breaker at every use, shared by no other call. One
// error on the path, with the `static` to declare instead.
use tenacious::{Breaker, Classify, ErrorClass, retry};

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

struct Provider;

impl Provider {
    const HEALTH: Breaker = Breaker::new();

    #[retry(breaker = Self::HEALTH)]
    async fn complete(&self) -> Result<(), Flaky> {
        Ok(())
    }
}

fn main() {}
