use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient, refused)]
    Refused(tenacious::Refused),
}

fn main() {}
