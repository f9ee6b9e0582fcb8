use std::time::Duration;
use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(fatal)]
    Banned(#[classify(retry_after)] Duration),
}

fn main() {}
