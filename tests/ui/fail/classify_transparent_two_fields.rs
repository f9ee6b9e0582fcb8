use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transparent)]
    Io(std::io::Error, String),
}

fn main() {}
