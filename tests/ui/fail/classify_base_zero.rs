use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(transient, base = "0s")]
    Slow,
}

fn main() {}
