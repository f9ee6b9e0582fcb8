use tenacious::{Classify, ErrorClass};

fn by_body(_: &String) -> ErrorClass {
    ErrorClass::Fatal
}

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(with = by_body)]
    Provider(u16),
}

fn main() {}
