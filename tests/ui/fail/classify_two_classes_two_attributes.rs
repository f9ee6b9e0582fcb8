use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(invalid, hint = "check the URL")]
    #[classify(rate_limited)]
    NotFound,
}

fn main() {}
