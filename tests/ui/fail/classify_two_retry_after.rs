use std::time::Duration;
use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(rate_limited)]
    TooManyRequests {
        #[classify(retry_after)]
        wait: Duration,
        #[classify(retry_after)]
        reset: Option<Duration>,
    },
}

fn main() {}
