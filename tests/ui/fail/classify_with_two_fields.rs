use tenacious::{Classified, Classify};

fn by_body(_: &String) -> Classified {
    Classified::fatal()
}

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(with = by_body)]
    Provider { status: u16, body: String },
}

fn main() {}
