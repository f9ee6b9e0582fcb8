use tenacious::{Classify, ErrorClass};

fn by_code(_: &u16) -> ErrorClass {
    ErrorClass::Fatal
}

fn by_status(_: &u16) -> ErrorClass {
    ErrorClass::Transient
}

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(with = by_code, with = by_status)]
    Provider(u16),
    #[classify(with = by_code)]
    #[classify(with = by_status)]
    Gateway(u16),
}

fn main() {}
