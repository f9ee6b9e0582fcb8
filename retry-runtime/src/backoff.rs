//! Backoff formulas and jitter.

/// How a computed backoff ceiling is randomised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Jitter {
    /// No randomness: wait the ceiling.
    None,
    /// Uniform in `[0, ceiling]`.
    #[default]
    Full,
    /// Half the ceiling plus uniform in `[0, ceiling / 2]`.
    Equal,
    /// `min(cap, uniform in [base, 3 * previous])`.
    Decorrelated,
}

/// Reseeds this thread's jitter RNG.
pub fn seed_jitter(seed: u64) {
    let _ = seed;
    todo!()
}
