// A `key` that names no argument and no `self` (a constant, a call of
// nothing the call was given) is the same key for every call: an error on
// it, with the fix; for a fn without arguments, saying so.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

const KEY: &str = "orders";

struct Client {
    id: u64,
}

impl Client {
    #[retry(key = KEY)]
    fn create(&self, order_id: u64) -> Result<(), Flaky> {
        let _ = (self.id, order_id);
        Ok(())
    }
}

#[retry(key = format!("{}-{}", KEY, 1))]
fn refresh() -> Result<(), Flaky> {
    Ok(())
}

fn main() {}
