//! What a shared guard adds per attempt, local against Redis (feature `redis`).
fn main() {}
