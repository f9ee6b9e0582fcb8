//! Placeholder: the cost per item of a retried stream (filled in next).
fn main() {}
