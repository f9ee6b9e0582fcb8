// A `const` or `static` policy with a guard may refuse the first attempt
// too: the error type must be able to say so, as with the guard's key.
use tenacious::{Breaker, Classify, Policy, retry};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
}

static PROVIDER: Breaker = Breaker::new();
const GUARDED: Policy = Policy::new().max(1).breaker(&PROVIDER);
static GUARDED_STATIC: Policy = Policy::new().breaker(&PROVIDER);

#[retry(policy = GUARDED)]
async fn call() -> Result<u32, ToolError> {
    Err(ToolError::Timeout)
}

#[retry(policy = GUARDED_STATIC, max = 2)]
fn call_blocking() -> Result<u32, ToolError> {
    Err(ToolError::Timeout)
}

fn main() {}
