//! The fixture of `tests/user_lints.rs`: each `plain_*` fn has a `retried_*`
//! twin, the same fn under `#[retry]`; clippy must report the same lints on
//! both. Not a test target (cargo only finds `tests/*.rs`).
#![warn(
    clippy::missing_errors_doc,
    clippy::missing_panics_doc,
    clippy::needless_pass_by_value
)]

use tenacious::{Classify, ErrorClass, retry};

/// The error.
#[derive(Debug)]
pub struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

/// No `# Errors` section.
pub fn plain_errors(x: u8) -> Result<u8, Flaky> {
    if x == 0 { Err(Flaky) } else { Ok(x) }
}

/// No `# Errors` section.
#[retry]
pub fn retried_errors(x: u8) -> Result<u8, Flaky> {
    if x == 0 { Err(Flaky) } else { Ok(x) }
}

/// No `# Errors` section, async.
pub async fn plain_errors_async(x: u8) -> Result<u8, Flaky> {
    if x == 0 { Err(Flaky) } else { Ok(x) }
}

/// No `# Errors` section, async.
#[retry]
pub async fn retried_errors_async(x: u8) -> Result<u8, Flaky> {
    if x == 0 { Err(Flaky) } else { Ok(x) }
}

/// No `# Panics` section.
///
/// # Errors
///
/// Never.
pub fn plain_panics(x: Option<u8>) -> Result<u8, Flaky> {
    Ok(x.unwrap())
}

/// No `# Panics` section.
///
/// # Errors
///
/// Never.
#[retry]
pub fn retried_panics(x: Option<u8>) -> Result<u8, Flaky> {
    Ok(x.unwrap())
}

/// Takes a `String` it only reads.
///
/// # Errors
///
/// Never.
pub fn plain_by_value(name: String) -> Result<usize, Flaky> {
    Ok(name.len())
}

/// Takes a `String` it only reads.
///
/// # Errors
///
/// Never.
#[retry]
pub fn retried_by_value(name: String) -> Result<usize, Flaky> {
    Ok(name.len())
}

/// Documented: no lint.
///
/// # Errors
///
/// When `x` is zero.
pub fn plain_clean(x: &str) -> Result<usize, Flaky> {
    if x.is_empty() { Err(Flaky) } else { Ok(x.len()) }
}

/// Documented: no lint.
///
/// # Errors
///
/// When `x` is zero.
#[retry]
pub fn retried_clean(x: &str) -> Result<usize, Flaky> {
    if x.is_empty() { Err(Flaky) } else { Ok(x.len()) }
}
