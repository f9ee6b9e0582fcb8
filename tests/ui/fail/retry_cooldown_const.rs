// A `const` cooldown would be a fresh cooldown at every use, shared by no
// one: it must be a `static`. The error is on its path.
use tenacious::{Classify, Cooldown, ErrorClass, retry};

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

const FRESH: Cooldown = Cooldown::new();

#[retry(cooldown = FRESH)]
async fn complete() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
