use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(invalid, hint = "check the URL", hint = "or the method")]
    NotFound,
}

fn main() {}
