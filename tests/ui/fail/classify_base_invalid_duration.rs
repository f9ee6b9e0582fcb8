use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(transient, base = "1 sec")]
    Slow,
}

fn main() {}
