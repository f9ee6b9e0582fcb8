// `policy` takes a path or a string literal: any other value is an error
// that shows both forms.
use tenacious::{Classify, retry};

#[derive(Debug, Classify)]
#[classify(transient)]
struct Down;

#[retry(policy = tenacious::Policy::new().max(5))]
fn chat() -> Result<(), Down> {
    Err(Down)
}

fn main() {}
