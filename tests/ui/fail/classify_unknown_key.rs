use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transint)]
    Timeout,
}

fn main() {}
