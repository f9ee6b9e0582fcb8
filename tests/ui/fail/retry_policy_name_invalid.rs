// A name `tenacious::config` refuses (whitespace, a control character)
// could never be loaded: an error on the literal.
use tenacious::{Classify, retry};

#[derive(Debug, Classify)]
#[classify(transient)]
struct Down;

#[retry(policy = "open ai")]
fn chat() -> Result<(), Down> {
    Err(Down)
}

#[retry(policy = "openai\n")]
fn complete() -> Result<(), Down> {
    Err(Down)
}

fn main() {}
