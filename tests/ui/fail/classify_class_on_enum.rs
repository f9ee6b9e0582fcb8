use tenacious::Classify;

#[derive(Debug, Classify)]
#[classify(transient)]
enum FetchError {
    #[classify(transient)]
    Timeout,
}

fn main() {}
