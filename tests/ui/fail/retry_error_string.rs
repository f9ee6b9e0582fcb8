// A `String` error cannot say whether to retry: the message says to wrap it
// in an error type of one's own.
use tenacious::retry;

#[retry]
fn call() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
