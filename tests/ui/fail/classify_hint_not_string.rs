use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(invalid, hint = fix_the_arguments)]
    BadArgument,
}

fn main() {}
