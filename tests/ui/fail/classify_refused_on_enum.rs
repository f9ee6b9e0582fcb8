use tenacious::Classify;

#[derive(Debug, Classify)]
#[classify(refused)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    Refused(tenacious::Refused),
}

fn main() {}
