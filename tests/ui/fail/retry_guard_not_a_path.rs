// `guard` names a `static`: a string or an expression is an error on the
// value, saying what to write.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(guard = "PROVIDER")]
async fn quoted() -> Result<(), Flaky> {
    Ok(())
}

#[retry(guard = Provider::new())]
fn constructed() -> Result<(), Flaky> {
    Ok(())
}

struct Provider;

fn main() {}
