use tenacious::Classify;

#[derive(Debug, Classify)]
enum ApiError {
    #[classify(refused, max = 2)]
    Refused(tenacious::Refused),
    #[classify(transient)]
    Reset,
}

fn main() {}
