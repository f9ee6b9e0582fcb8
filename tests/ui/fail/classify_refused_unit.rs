use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(refused)]
    Unavailable,
}

fn main() {}
