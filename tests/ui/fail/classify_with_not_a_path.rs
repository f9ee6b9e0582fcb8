use tenacious::Classify;

#[derive(Debug)]
struct Body(String);

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(with = |_body| false)]
    Provider(Body),
}

fn main() {}
