//! A call that always fails, as the Redis tests make them.
#![allow(dead_code)]

use std::io;

use tenacious::Policy;

/// A transient error: the service is down.
pub fn down() -> io::Error {
    io::Error::from(io::ErrorKind::ConnectionRefused)
}

/// The attempts of one call under `policy` whose every attempt fails
/// (transient).
pub async fn failing(policy: Policy) -> u32 {
    let mut attempts = 0;
    let result = policy
        .retry(|| {
            attempts += 1;
            async { Err::<(), _>(down()) }
        })
        .await;
    assert!(result.is_err());
    attempts
}
