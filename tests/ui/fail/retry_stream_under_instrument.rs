// `#[instrument]` above `#[retry]` rewrote the fn first: a stream fn cannot
// then be rewritten into the retried stream; the error says to swap them.
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

#[tracing::instrument]
#[retry(first_item = "10s")]
async fn tokens() -> Result<impl Stream<Item = Result<String, Cut>>, Cut> {
    Ok(futures_util::stream::empty())
}

fn main() {}
