// The opened stream yields the item the fn declares, as the body of a fn
// returning `impl Stream<Item = X>` must: another item is one error.
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
async fn tokens() -> Result<impl Stream<Item = Result<String, Cut>>, Cut> {
    Ok(futures_util::stream::iter(vec![Ok::<&'static str, Cut>("a")]))
}

fn main() {}
