use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transient)]
    Timeout(#[classify(fatal)] u32),
}

fn main() {}
