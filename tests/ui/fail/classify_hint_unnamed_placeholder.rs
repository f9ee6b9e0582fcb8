use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(invalid, hint = "expected {}")]
    BadArgument(String),
}

fn main() {}
