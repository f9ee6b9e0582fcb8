// A retried stream's items are `Result<T, E>`: the consumer must see a cut.
use futures_util::Stream;
use tenacious::{Classify, Elapsed, ErrorClass, retry};

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

#[retry(first_item = "10s")]
async fn tokens() -> Result<impl Stream<Item = String>, Cut> {
    Ok(futures_util::stream::iter(vec![String::new()]))
}

fn main() {}
