// A `const`, `static` or associated policy without guards asks nothing of
// the error type; one in a generic position is read at run time.
use tenacious::{Classify, Policy, retry};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
}

const PLAIN: Policy = Policy::new().max(2);
static PLAIN_STATIC: Policy = Policy::new().max(2);

#[retry(policy = PLAIN)]
async fn call() -> Result<u32, ToolError> {
    Err(ToolError::Timeout)
}

#[retry(policy = PLAIN_STATIC)]
fn call_blocking() -> Result<u32, ToolError> {
    Err(ToolError::Timeout)
}

struct Tool;

impl Tool {
    const POLICY: Policy = Policy::new().max(2);

    #[retry(policy = Self::POLICY)]
    async fn run(&self) -> Result<u32, ToolError> {
        Err(ToolError::Timeout)
    }
}

trait Provider {
    const POLICY: Policy;
}

#[retry(policy = P::POLICY)]
async fn generic<P: Provider>() -> Result<u32, ToolError> {
    Err(ToolError::Timeout)
}

fn main() {
    let _ = (call(), call_blocking(), Tool.run());
    struct Local;
    impl Provider for Local {
        const POLICY: Policy = Policy::new();
    }
    let _ = generic::<Local>();
}
