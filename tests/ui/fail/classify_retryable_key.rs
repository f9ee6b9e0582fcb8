// Words other libraries use for "retry this": the error names the class.
use tenacious::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(retryable)]
    Timeout,
}

fn main() {}
