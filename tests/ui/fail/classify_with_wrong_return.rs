use tenacious::Classify;

#[derive(Debug)]
struct Body(String);

fn is_retryable(_: &Body) -> bool {
    false
}

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(with = is_retryable)]
    Provider(Body),
}

fn main() {}
