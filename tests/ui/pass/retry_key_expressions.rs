// `key = EXPR` over the arguments and the receiver, on a plain fn, an
// inherent method and an `#[async_trait]` method (where async-trait has
// moved the receiver into its boxed future by the time `#[retry]` sees it).
// Every key here names the call (an argument, `self`, a name a pattern
// binds, a format string's inline argument), so none is refused as the same
// key for every call.
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

#[retry(key = format!("{}-{}", a, b))]
fn by_pair(a: u64, b: u64) -> Result<(), Flaky> {
    Ok(())
}

#[retry(key = format!("{a}-{b}"))]
fn by_inline_pair(a: u64, b: &str) -> Result<(), Flaky> {
    Ok(())
}

#[retry(key = IdempotencyKey::derive(task, call))]
fn by_task(task: &str, call: &str) -> Result<(), Flaky> {
    Ok(())
}

#[retry(key = id)]
fn by_pattern(Order { id, .. }: &Order) -> Result<(), Flaky> {
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
    async fn note(&self, pair: (u64, &str)) -> Result<(), Flaky>;
}

#[async_trait]
impl Checkout for Cart {
    #[retry(key = self.id)]
    async fn place(&self, note: &str) -> Result<(), Flaky> {
        let _ = note;
        Ok(())
    }

    // async-trait binds `(id, text)` in its future, before `#[retry]`'s
    // loop: the key names those locals.
    #[retry(key = text)]
    async fn note(&self, (id, text): (u64, &str)) -> Result<(), Flaky> {
        let _ = (id, &self.id);
        Ok(())
    }
}

fn main() {
    let order = Order { id: 7, sku: "lamp".to_owned() };
    by_id(&order).unwrap();
    let _ = by_text(&order);
    let _ = by_key(&order);
    by_pair(1, 2).unwrap();
    by_inline_pair(1, "b").unwrap();
    by_task("task-1", "call-1").unwrap();
    by_pattern(&order).unwrap();
    let mut cart = Cart { id: "c-1".to_owned() };
    let _ = cart.checkout();
    let _ = Checkout::place(&Cart { id: "c-2".to_owned() }, "gift");
    let _ = Checkout::note(&Cart { id: "c-3".to_owned() }, (1, "n"));
}
