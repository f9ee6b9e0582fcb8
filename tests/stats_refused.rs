//! Statistics count every call: one an open breaker refuses before its
//! first attempt is a call too, counted `refused` beside `gave up`.
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tenacious::{Breaker, Classify, Refused, StopReason, retry, stats};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Down,
    #[classify(refused)]
    Refused(Refused),
}

static PROVIDER: Breaker = Breaker::new()
    .min_throughput(4)
    .open_for(Duration::from_secs(600));

#[retry(max = 2, base = "10ms", breaker = PROVIDER, stats = "stats_refused::lookup")]
async fn lookup(sent: &AtomicU32) -> Result<(), ToolError> {
    sent.fetch_add(1, Ordering::Relaxed);
    Err(ToolError::Down)
}

#[tokio::test(start_paused = true)]
async fn twenty_requests_are_twenty_calls_whatever_the_breaker_refused() {
    let sent = AtomicU32::new(0);
    let mut refused = 0;
    for _ in 0..20 {
        if let Err(ToolError::Refused(_)) = lookup(&sent).await {
            refused += 1;
        }
    }
    assert!(refused > 0, "the breaker opened and refused calls");
    let snapshot = stats::snapshot();
    let row = snapshot.get("stats_refused::lookup").expect("the fn's row");
    // Before, the refused calls were absent: 20 requests showed as fewer calls.
    assert_eq!(row.calls(), 20, "{snapshot}");
    assert_eq!(row.attempts(), u64::from(sent.load(Ordering::Relaxed)));
    let table = snapshot.to_string();
    let line = table
        .lines()
        .find(|line| line.starts_with("stats_refused::lookup"))
        .expect("the fn's line");
    assert!(line.contains("circuit open"), "{table}");
    assert!(
        row.gave_up(StopReason::CircuitOpen) >= refused,
        "each refused call gave up for its reason"
    );
}
