// Sync fns: each attempt is a closure called in place, so `return` and `?`
// end the attempt.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
pub struct Flaky;

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

// The return type drives inference in the body, as it would without the
// attribute.
#[retry]
fn collected() -> Result<Vec<u8>, Flaky> {
    (1..4).map(Ok).collect()
}

#[retry]
fn defaulted() -> Result<(String, u64), Flaky> {
    Ok(Default::default())
}

fn main() {
    assert_eq!(parse("7").unwrap(), 7);
    assert_eq!(collected().unwrap(), [1, 2, 3]);
    assert_eq!(defaulted().unwrap(), (String::new(), 0));
    public().unwrap();
}
