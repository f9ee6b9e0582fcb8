use tenacious::Classify;

#[derive(Debug, Classify)]
#[classify(refused)]
struct GuardError(tenacious::Refused);

fn main() {}
