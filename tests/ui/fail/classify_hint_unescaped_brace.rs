use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(invalid, hint = "send a JSON object like {\"query\": ...}")]
    BadArgument,
}

fn main() {}
