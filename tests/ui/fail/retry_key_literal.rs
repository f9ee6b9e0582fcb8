// `key` names the call's idempotency key from the call: a literal is the
// same key for every call (a server that honours it would answer every
// later order with the first one's result), one error on it.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Order {
    id: u64,
}

#[retry(key = "order-1")]
fn create_order(order: &Order) -> Result<(), Flaky> {
    let _ = order.id;
    Ok(())
}

fn main() {}
