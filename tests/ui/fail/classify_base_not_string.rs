use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(transient, base = 1000)]
    Slow,
}

fn main() {}
