use tenacious::{Classified, Classify};

#[derive(Debug)]
struct Body(String);

fn by_body(_: &Body) -> Classified {
    Classified::fatal()
}

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(fatal, with = by_body)]
    Provider(Body),
}

fn main() {}
