//! The async and blocking loops of `Policy`, and the sleeps.
use std::time::Duration;

/// Sleeps on tokio's clock (skipped for a zero delay).
pub async fn sleep(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

/// Sleeps the thread (skipped for a zero delay).
pub fn sleep_blocking(delay: Duration) {
    if !delay.is_zero() {
        std::thread::sleep(delay);
    }
}
