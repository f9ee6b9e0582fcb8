// A retried stream opens once per attempt, each borrowing the arguments:
// it is `Send` only if they are `Sync`, and a `Receiver` is not.
use std::sync::mpsc::Receiver;

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

#[retry(base = "1ms")]
async fn events(rx: Receiver<u32>) -> Result<impl Stream<Item = Result<u32, Cut>> + Send, Cut> {
    let first = rx.try_recv().map_err(|_| Cut)?;
    Ok(futures_util::stream::iter([Ok(first)]))
}

fn main() {}
