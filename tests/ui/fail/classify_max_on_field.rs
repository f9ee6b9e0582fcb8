use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(rate_limited)]
    Busy(#[classify(max = 6)] u32),
}

fn main() {}
