// Each attempt of a stream awaits its opening: a sync fn that returns a
// stream is an error on `fn`.
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
fn tokens() -> Result<impl Stream<Item = Result<String, Cut>>, Cut> {
    Ok(futures_util::stream::empty())
}

fn main() {}
