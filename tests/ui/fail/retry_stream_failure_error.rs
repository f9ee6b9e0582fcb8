// The consumer of a retried stream gets `Failure<E>` already: declaring it
// is an error on the error type.
use futures_util::Stream;
use tenacious::{Classify, Elapsed, ErrorClass, Failure, retry};

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

#[retry]
async fn tokens() -> Result<impl Stream<Item = Result<String, Cut>>, Failure<Cut>> {
    Ok(futures_util::stream::empty())
}

fn main() {}
