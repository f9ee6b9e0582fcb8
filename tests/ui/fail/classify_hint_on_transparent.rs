use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transparent, hint = "check the network")]
    Io(std::io::Error),
}

fn main() {}
