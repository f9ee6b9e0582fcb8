// A class written on the enum instead of its variants: one error, on the
// class, not one "has no error class" per variant.
use tenacious::Classify;

#[derive(Debug, Classify)]
#[classify(transient)]
enum FetchError {
    Timeout,
    Reset,
    Refused,
}

fn main() {}
