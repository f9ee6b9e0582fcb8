use tenacious::{Classified, Classify};

fn spent() -> Classified {
    Classified::fatal()
}

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(with = spent)]
    QuotaSpent,
}

fn main() {}
