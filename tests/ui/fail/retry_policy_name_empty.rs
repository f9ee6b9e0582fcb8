// `policy = ""` names no policy: an error on the literal.
use tenacious::{Classify, retry};

#[derive(Debug, Classify)]
#[classify(transient)]
struct Down;

#[retry(policy = "")]
fn chat() -> Result<(), Down> {
    Err(Down)
}

fn main() {}
