// Without feature `config` there is no loaded set to find a name in: one
// error, on the literal.
use tenacious::{Classify, retry};

#[derive(Debug, Classify)]
#[classify(transient)]
struct Down;

#[retry(policy = "openai", max = 2)]
async fn chat() -> Result<(), Down> {
    Err(Down)
}

fn main() {}
