// `key = EXPR` over the arguments and the receiver, on a plain fn, an
// inherent method and an `#[async_trait]` method (where async-trait has
// moved the receiver into its boxed future by the time `#[retry]` sees it).
use async_trait::async_trait;
use tenacious::{Classify, ErrorClass, IdempotencyKey, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Order {
    id: u64,
    sku: String,
}

#[retry(key = order.id)]
fn by_id(order: &Order) -> Result<(), Flaky> {
    let _ = &order.sku;
    Ok(())
}

#[retry(key = format!("{}-{}", order.sku, order.id))]
async fn by_text(order: &Order) -> Result<(), Flaky> {
    Ok(())
}

#[retry(key = IdempotencyKey::derive("task-1", &order.sku))]
async fn by_key(order: &Order) -> Result<(), Flaky> {
    Ok(())
}

struct Cart {
    id: String,
}

impl Cart {
    #[retry(key = self.id)]
    async fn checkout(&mut self) -> Result<(), Flaky> {
        self.id.push('!');
        Ok(())
    }
}

#[async_trait]
trait Checkout {
    async fn place(&self, note: &str) -> Result<(), Flaky>;
}

#[async_trait]
impl Checkout for Cart {
    #[retry(key = self.id)]
    async fn place(&self, note: &str) -> Result<(), Flaky> {
        let _ = note;
        Ok(())
    }
}

fn main() {
    let order = Order { id: 7, sku: "lamp".to_owned() };
    by_id(&order).unwrap();
    let _ = by_text(&order);
    let _ = by_key(&order);
    let mut cart = Cart { id: "c-1".to_owned() };
    let _ = cart.checkout();
    let _ = Checkout::place(&Cart { id: "c-2".to_owned() }, "gift");
}
