// `policy` given twice, by name and by path: the second is the error.
use tenacious::{Classify, Policy, retry};

#[derive(Debug, Classify)]
#[classify(transient)]
struct Down;

const OPENAI: Policy = Policy::new().max(5);

#[retry(policy = "openai", policy = OPENAI)]
fn chat() -> Result<(), Down> {
    Err(Down)
}

fn main() {}
