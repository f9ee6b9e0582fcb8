use tenacious::Classify;

#[derive(Debug)]
struct ParseError;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(transparent)]
    Parse(ParseError),
}

fn main() {}
