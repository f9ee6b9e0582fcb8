use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(fatal, max = 5)]
    Banned,
}

fn main() {}
