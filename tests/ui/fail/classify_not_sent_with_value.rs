use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(transient, not_sent = true)]
    Refused,
}

fn main() {}
