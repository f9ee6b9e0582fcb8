use tenacious::{Classified, Classify};

fn by_error(_: &ApiError) -> Classified {
    Classified::transient()
}

#[derive(Debug, Classify)]
#[classify(with = by_error)]
enum ApiError {
    Timeout,
    #[classify(fatal, hint = "a human must fix the key")]
    Unauthorized,
}

fn main() {}
