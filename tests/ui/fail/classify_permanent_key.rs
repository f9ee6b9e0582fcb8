// "Do not retry" comes in two classes here: the error names both.
use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(permanent)]
    Unauthorized,
}

fn main() {}
