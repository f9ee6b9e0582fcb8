use tenacious::Classify;

#[derive(Debug)]
struct Body(String);

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(with)]
    Provider(Body),
}

fn main() {}
