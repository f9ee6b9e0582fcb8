// A retried future borrows its arguments in every attempt, so it is `Send`
// only if they are `Sync`: a `Receiver` (`Send`, not `Sync`) taken by value
// makes the future of the retried fn impossible to spawn, though the same fn
// without `#[retry]` could be spawned.
use std::sync::mpsc::Receiver;

use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Closed;

impl Classify for Closed {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(base = "1ms")]
async fn next(rx: Receiver<u32>) -> Result<u32, Closed> {
    tokio::task::yield_now().await;
    rx.try_recv().map_err(|_| Closed)
}

#[tokio::main]
async fn main() {
    let (_tx, rx) = std::sync::mpsc::channel();
    let _ = tokio::spawn(next(rx)).await;
}
