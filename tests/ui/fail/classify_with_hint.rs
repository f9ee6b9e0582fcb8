use tenacious::{Classified, Classify};

#[derive(Debug)]
struct Body(String);

fn by_body(_: &Body) -> Classified {
    Classified::fatal()
}

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(with = by_body, hint = "add credit to the account")]
    Provider(Body),
}

fn main() {}
