use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(invalid, hint = "expected {1}")]
    BadArgument(String),
}

fn main() {}
