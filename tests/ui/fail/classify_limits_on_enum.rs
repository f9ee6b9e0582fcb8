use tenacious::Classify;

#[derive(Debug, Classify)]
#[classify(max = 6)]
enum ApiError {
    #[classify(rate_limited)]
    Busy,
}

fn main() {}
