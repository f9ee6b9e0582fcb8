// The future of a retried async fn is `Send` when its body's is, so it can be
// spawned on a multi-threaded runtime, whatever keys it uses.
use tenacious::{Classify, Elapsed, ErrorClass, Failure, RetryBudget, retry};

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

impl From<Elapsed> for Flaky {
    fn from(_: Elapsed) -> Self {
        Flaky
    }
}

static BUDGET: RetryBudget = RetryBudget::new();

#[retry(base = "1ms", timeout = "1s", deadline = "2s", budget = BUDGET)]
async fn guarded(name: &str) -> Result<usize, Failure<Flaky>> {
    tokio_free_yield().await;
    let _ = tenacious::Attempt::current();
    Ok(name.len())
}

// Arguments by value: a `Sync` one, and a `mut` one that is `Send` but not
// `Sync`, which every attempt borrows mutably (`&mut Cell<u32>` is `Send`).
#[retry(base = "1ms")]
async fn owned(name: String, mut count: std::cell::Cell<u32>) -> Result<usize, Flaky> {
    tokio_free_yield().await;
    *count.get_mut() += 1;
    Ok(name.len())
}

// A `Send` but not `Sync` argument that every attempt only reads a `Sync`
// field of (an async block captures `&request.name` alone), and one no
// attempt names: neither is borrowed whole, so the future is `Send`, as
// the fn's without `#[retry]` is.
struct Request {
    name: String,
    #[allow(dead_code)]
    hits: std::cell::Cell<u32>,
}

#[retry(base = "1ms")]
async fn by_field(request: Request, _unused: std::cell::Cell<u32>) -> Result<usize, Flaky> {
    tokio_free_yield().await;
    Ok(request.name.len())
}

async fn tokio_free_yield() {}

fn assert_send<T: Send>(_: &T) {}

fn main() {
    let future = call("x");
    assert_send(&future);
    let future = guarded("x");
    assert_send(&future);
    let future = owned(String::from("x"), std::cell::Cell::new(0));
    assert_send(&future);
    let request = Request {
        name: String::from("x"),
        hits: std::cell::Cell::new(0),
    };
    let future = by_field(request, std::cell::Cell::new(0));
    assert_send(&future);
}
