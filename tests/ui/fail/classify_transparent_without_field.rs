use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transparent)]
    Io,
}

fn main() {}
