use std::time::Duration;
use tenacious::{Classified, Classify};

fn limited(_: &Duration) -> Classified {
    Classified::rate_limited()
}

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(with = limited)]
    Busy(#[classify(retry_after)] Duration),
}

fn main() {}
