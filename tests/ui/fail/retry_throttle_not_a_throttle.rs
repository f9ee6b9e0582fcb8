// `throttle` names a `static Throttle`: an expression is an error on the value,
// saying what to write, and a `static` of another type is a type error on
// its path.
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

#[retry(throttle = tenacious::Throttle::new())]
async fn constructed() -> Result<(), Flaky> {
    Ok(())
}

static COOLDOWN: Cooldown = Cooldown::new();

#[retry(throttle = COOLDOWN)]
fn cooldown() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
