use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(rate_limited, max_attempts = 6)]
    Busy,
}

fn main() {}
