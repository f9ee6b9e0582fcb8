// A boxed trait object cannot say whether to retry: the message says to
// wrap it in an error type of one's own.
use tenacious::retry;

#[retry]
fn call() -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
    Ok(1)
}

fn main() {}
