use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(rate_limited)]
    TooManyRequests {
        #[classify(retry_after)]
        wait_secs: u64,
    },
}

fn main() {}
