// A guard may refuse a call before its first attempt; an error type with no
// variant to say so would let the call walk past an open breaker.
use tenacious::{Breaker, Classify, retry};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
}

static PROVIDER: Breaker = Breaker::new();

#[retry(max = 1, breaker = PROVIDER)]
async fn call() -> Result<u32, ToolError> {
    Err(ToolError::Timeout)
}

#[retry(cooldown = PROVIDER_COOLDOWN)]
fn call_blocking() -> Result<u32, ToolError> {
    Err(ToolError::Timeout)
}

static PROVIDER_COOLDOWN: tenacious::Cooldown = tenacious::Cooldown::new();

fn main() {}
