// The deadline ends the whole stream: a `first_item` past it is an error
// on its value.
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

#[retry(first_item = "2m", deadline = "1m")]
async fn tokens() -> Result<impl Stream<Item = Result<String, Cut>>, Cut> {
    Ok(futures_util::stream::empty())
}

fn main() {}
