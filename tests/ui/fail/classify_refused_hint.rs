use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(refused, hint = "the provider is down")]
    Refused(tenacious::Refused),
}

fn main() {}
