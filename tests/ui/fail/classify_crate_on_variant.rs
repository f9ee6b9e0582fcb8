use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transient, crate = tenacious)]
    Timeout,
}

fn main() {}
