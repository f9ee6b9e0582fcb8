// A stream fn's `key` is computed once, when the fn is called and before
// the stream opens, outside any async context: a key that awaits is one
// error on its `.await`.
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

async fn order_id(prompt: &str) -> String {
    format!("order-{}", prompt.len())
}

#[retry(key = order_id(&prompt).await)]
async fn tokens(prompt: String) -> Result<impl Stream<Item = Result<String, Cut>>, Cut> {
    let _ = prompt;
    Ok(futures_util::stream::empty())
}

fn main() {}
