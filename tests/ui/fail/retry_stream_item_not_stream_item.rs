// The wrapper must tell content from keepalives: an item type that is no
// `StreamItem` is an error that says how to make it one.
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

struct Chunk;

#[retry(first_item = "10s")]
async fn tokens() -> Result<impl Stream<Item = Result<Chunk, Cut>>, Cut> {
    Ok(futures_util::stream::empty())
}

fn main() {}
