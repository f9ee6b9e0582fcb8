use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(rate_limited, max = 0)]
    Busy,
}

fn main() {}
