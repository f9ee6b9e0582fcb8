// Sync fns: each attempt is a closure called in place, so `return` and `?`
// end the attempt.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<std::num::ParseIntError> for Flaky {
    fn from(_: std::num::ParseIntError) -> Self {
        Flaky
    }
}

#[retry(max = 2, base = "1ms", jitter = "none", on = Transient)]
fn parse(text: &str) -> Result<u32, Flaky> {
    if text.is_empty() {
        return Err(Flaky);
    }
    let n: u32 = text.parse()?;
    Ok(n)
}

#[retry(jitter = "equal")]
pub fn public() -> Result<(), Flaky> {
    Ok(())
}

fn main() {
    assert_eq!(parse("7").unwrap(), 7);
    public().unwrap();
}
