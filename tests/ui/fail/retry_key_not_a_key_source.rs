use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Order {
    id: (u32, u32),
}

// A tuple names no call: `key` takes a string, an integer or a key.
#[retry(key = order.id)]
fn create_order(order: &Order) -> Result<(), Flaky> {
    let _ = order;
    Ok(())
}

fn main() {}
