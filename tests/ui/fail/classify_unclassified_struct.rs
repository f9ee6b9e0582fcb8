use tenacious::Classify;

#[derive(Debug, Classify)]
struct ConfigError {
    key: &'static str,
}

fn main() {}
