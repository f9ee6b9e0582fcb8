// `anyhow::Error` belongs to another crate: the message says to wrap it in
// an error type of one's own, not to derive `Classify` on it.
use tenacious::retry;

#[retry]
fn call() -> Result<u32, anyhow::Error> {
    Ok(1)
}

fn main() {}
