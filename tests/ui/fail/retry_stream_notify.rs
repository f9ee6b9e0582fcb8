// `when` and `notify` are not supported on a fn that opens a stream: each
// is an error on its path, rather than ignored.
use futures_util::Stream;
use tenacious::{Classify, Elapsed, ErrorClass, RetryEvent, retry};

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

fn retryable(_: &Cut) -> bool {
    true
}

fn log(_: &Cut, _: &RetryEvent) {}

#[retry(when = retryable, notify = log)]
async fn tokens() -> Result<impl Stream<Item = Result<String, Cut>>, Cut> {
    Ok(futures_util::stream::empty())
}

fn main() {}
