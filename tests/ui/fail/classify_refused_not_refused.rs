use tenacious::Classify;

#[derive(Debug, Classify)]
enum Inner {
    #[classify(transient)]
    Timeout,
}

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(refused)]
    Refused(Inner),
}

fn main() {}
