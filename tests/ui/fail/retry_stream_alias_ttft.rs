// Another library's name for the time to the first token points at
// `first_item`.
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

#[retry(ttft = "10s")]
async fn tokens() -> Result<impl Stream<Item = Result<String, Cut>>, Cut> {
    Ok(futures_util::stream::empty())
}

fn main() {}
