// The error type must say whether to retry: the message names it.
use tenacious::retry;

#[derive(Debug)]
struct PlainError;

#[retry]
fn call() -> Result<u32, PlainError> {
    Ok(1)
}

fn main() {}
