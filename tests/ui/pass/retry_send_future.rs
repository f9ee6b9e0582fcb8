// The future of a retried async fn is `Send` when its body's is, so it can be
// spawned on a multi-threaded runtime.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(base = "1ms")]
async fn call(name: &str) -> Result<usize, Flaky> {
    tokio_free_yield().await;
    Ok(name.len())
}

async fn tokio_free_yield() {}

fn assert_send<T: Send>(_: &T) {}

fn main() {
    let future = call("x");
    assert_send(&future);
}
