use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(refused)]
    Refused(tenacious::Refused, String),
}

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(refused)]
    Refused { refused: tenacious::Refused },
}

fn main() {}
