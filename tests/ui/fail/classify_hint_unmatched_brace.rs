use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(invalid, hint = "close the object with }")]
    BadArgument,
}

fn main() {}
