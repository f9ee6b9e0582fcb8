// `guard` names a `static` whose type implements `Guard`: anything else is
// one error on the path.
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

static LIMIT: u32 = 500;

#[retry(guard = LIMIT)]
async fn call() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
