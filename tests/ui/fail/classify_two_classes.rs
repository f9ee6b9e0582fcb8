use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transient, fatal)]
    Timeout,
}

fn main() {}
