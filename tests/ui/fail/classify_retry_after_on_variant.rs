use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(rate_limited, retry_after)]
    TooManyRequests,
}

fn main() {}
