// The opened stream's items and the opening share one error type, so one
// classification and one `Failure<E>` cover both.
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

#[derive(Debug)]
struct Refused;

impl Classify for Refused {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Fatal
    }
}

impl From<Elapsed> for Refused {
    fn from(_: Elapsed) -> Self {
        Refused
    }
}

#[retry(first_item = "10s")]
async fn tokens() -> Result<impl Stream<Item = Result<String, Cut>>, Refused> {
    Ok(futures_util::stream::iter(vec![Ok::<_, Cut>(String::new())]))
}

fn main() {}
