// A retried stream is `Send + Sync` when its parts are: declared so, it
// compiles, and the caller can share it across threads, with a guard too
// (whose pending answer the stream polls through `&mut` only).
use futures_util::Stream;
use tenacious::{Breaker, Classify, Elapsed, ErrorClass, retry};

#[derive(Debug)]
struct Cut;

impl Classify for Cut {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<Elapsed> for Cut {
    fn from(_: Elapsed) -> Self {
        Cut
    }
}

static HEALTH: Breaker = Breaker::new();

#[retry(first_item = "10s", breaker = HEALTH)]
async fn tokens() -> Result<impl Stream<Item = Result<String, Cut>> + Send + Sync, Cut> {
    Ok(futures_util::stream::iter(vec![Ok("a".to_string())]))
}

fn assert_send_sync<T: Send + Sync>(_: &T) {}

fn main() {
    let stream = tokens();
    assert_send_sync(&stream);
}
