use tenacious::Classify;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(refused)]
    CircuitOpen(tenacious::Refused),
    #[classify(refused)]
    CoolingDown(tenacious::Refused),
}

fn main() {}
