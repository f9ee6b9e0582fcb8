use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(invalid, hint = "argument {name} does not match the schema")]
    BadArgument { argument: String, expected: String },
}

fn main() {}
