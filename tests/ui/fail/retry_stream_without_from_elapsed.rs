// A stall becomes `E::from(Elapsed)`: an error type without the impl is
// an error that names it.
use futures_util::Stream;
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Cut;

impl Classify for Cut {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(first_item = "10s")]
async fn tokens() -> Result<impl Stream<Item = Result<String, Cut>>, Cut> {
    Ok(futures_util::stream::empty())
}

fn main() {}
