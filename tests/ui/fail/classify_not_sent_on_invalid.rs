use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(invalid, not_sent)]
    BadRequest,
}

fn main() {}
