// The expansion compiles without warnings under strict lints; clippy's
// pedantic group is checked on tests/classify.rs by `cargo clippy`.
#![deny(
    warnings,
    unused_qualifications,
    unused_results,
    missing_debug_implementations
)]

use std::time::Duration;
use tenacious::Classify;

/// An error.
#[derive(Debug, Classify)]
pub enum ToolError {
    /// Timed out.
    #[classify(transient)]
    Timeout,
    /// Slow down.
    #[classify(rate_limited, hint = "wait {wait:?}")]
    Limited {
        /// The hint.
        #[classify(retry_after)]
        wait: Duration,
    },
    /// Wrapped.
    #[classify(transparent)]
    Io(std::io::Error),
}

fn main() {
    let _ = ToolError::Timeout.classify();
}
