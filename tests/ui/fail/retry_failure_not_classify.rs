// `Failure<E>` records what `E` says about each attempt: `E` must be
// `Classify`, and the message names it.
use tenacious::{Failure, retry};

#[derive(Debug)]
struct PlainError;

#[retry]
async fn call() -> Result<u32, Failure<PlainError>> {
    Ok(1)
}

fn main() {}
