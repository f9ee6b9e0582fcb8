use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transient = 1)]
    Timeout,
}

fn main() {}
