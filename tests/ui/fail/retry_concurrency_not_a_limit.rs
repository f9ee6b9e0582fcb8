// `concurrency` takes a `static Concurrency`: a throttle there (another
// guard's type) is one error on the path, in the key's words.
use tenacious::{Classify, retry};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Reset,
    #[classify(refused)]
    Refused(tenacious::Refused),
}

static PROVIDER_THROTTLE: tenacious::Throttle = tenacious::Throttle::new();

#[retry(concurrency = PROVIDER_THROTTLE)]
fn call() -> Result<(), ToolError> {
    Err(ToolError::Reset)
}

fn main() {}
