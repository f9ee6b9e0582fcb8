//! What the `overhead` and `instructions` benches share: the body both
//! measure, the error it returns, its plain fns and the peers' settings.
//! Each bench uses a part of it.
//!
//! The `#[retry]` fns stay in each bench's own file, beside their callers:
//! a fn that is not `#[inline]` is inlined only within its codegen unit,
//! and rustc splits units by module, so moving them here changes what is
//! measured (the sync `#[retry]` call reads 14 instructions more).
#![allow(dead_code)]

use std::cell::Cell;
use std::time::Duration;

use backon::ExponentialBuilder;
use tenacious::{Classify, ErrorClass, Jitter, Policy};
use tokio_retry2::RetryError;

/// A tool call's arguments, as a model would send them.
pub const ARGS: &str = r#"{"query":"rust retry","limit":10}"#;

#[derive(Debug, Classify)]
pub enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(invalid)]
    BadArguments,
}

/// The call's own work: reject empty arguments, FNV-1a hash the rest.
#[inline]
pub fn cache_key(args: &str) -> Result<u64, ToolError> {
    if args.is_empty() {
        return Err(ToolError::BadArguments);
    }
    Ok(args.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    }))
}

/// Fails with `Timeout` while `failures` is above zero, counting it down.
#[inline]
pub fn flaky_key(args: &str, failures: &Cell<u32>) -> Result<u64, ToolError> {
    let left = failures.get();
    if left > 0 {
        failures.set(left - 1);
        return Err(ToolError::Timeout);
    }
    cache_key(args)
}

pub fn retryable(error: &ToolError) -> bool {
    matches!(
        error.classify(),
        ErrorClass::Transient | ErrorClass::RateLimited
    )
}

/// tokio-retry2 wants the retry decision in the error itself.
pub fn for_tokio_retry2<T>(result: Result<T, ToolError>) -> Result<T, RetryError<ToolError>> {
    result.map_err(|error| {
        if retryable(&error) {
            RetryError::transient(error)
        } else {
            RetryError::permanent(error)
        }
    })
}

/// The body, as a plain `async fn`.
pub async fn plain(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

/// The failing body, as a plain `async fn`.
pub async fn flaky(args: &str, failures: &Cell<u32>) -> Result<u64, ToolError> {
    flaky_key(args, failures)
}

/// The body, as a plain `fn`.
pub fn plain_sync(args: &str) -> Result<u64, ToolError> {
    cache_key(args)
}

/// The `#[retry]` defaults, as a `Policy`.
pub const POLICY: Policy = Policy::new();
/// Three attempts without waiting, and without jitter (as backon's
/// default and `flaky_retried`).
pub const POLICY_ZERO: Policy = Policy::new().base(Duration::ZERO).jitter(Jitter::None);

/// backon's defaults (3 retries, exponential from 1 s, no jitter).
pub fn backon_default() -> ExponentialBuilder {
    ExponentialBuilder::default()
}

/// Two retries, waiting 1 ns then 2 ns (or zero), as `flaky_retried`.
pub fn backon_two(min_delay: Duration) -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(min_delay)
        .with_max_times(2)
}
