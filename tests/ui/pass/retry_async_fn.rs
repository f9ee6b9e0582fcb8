// An async free fn with every key, and one with none.
use std::time::Duration;

use tenacious::{Classify, ErrorClass, RetryEvent, retry};

#[derive(Debug)]
enum FetchError {
    Timeout,
    Busy(Option<Duration>),
}

impl Classify for FetchError {
    fn classify(&self) -> ErrorClass {
        match self {
            FetchError::Timeout => ErrorClass::Transient,
            FetchError::Busy(_) => ErrorClass::RateLimited,
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            FetchError::Busy(hint) => *hint,
            FetchError::Timeout => None,
        }
    }
}

fn is_retryable(error: &FetchError) -> bool {
    !matches!(error, FetchError::Busy(None))
}

fn log_retry(error: &FetchError, event: &RetryEvent) {
    let _ = (error, event.attempt, event.delay);
}

#[retry(
    max = 5,
    base = "100ms",
    cap = "1m30s",
    jitter = "decorrelated",
    on = Transient | RateLimited,
    when = is_retryable,
    max_retry_after = "2m",
    notify = log_retry,
    crate = ::tenacious,
)]
async fn fetch(url: &str) -> Result<usize, FetchError> {
    if url.is_empty() {
        return Err(FetchError::Timeout);
    }
    Ok(url.len())
}

#[retry]
async fn defaults() -> Result<(), FetchError> {
    Err(FetchError::Busy(Some(Duration::from_secs(1))))
}

#[retry()]
async fn empty_parentheses() -> Result<(), FetchError> {
    Ok(())
}

fn main() {
    let _ = (fetch("x"), defaults(), empty_parentheses());
}
