//! Each provider guard's statistics in `stats::snapshot()`: the waits it
//! asked for and their total, the calls it stopped, its changes of state,
//! under its name. On tokio's paused clock, counted.
use std::time::Duration;

use tenacious_runtime::stats;
use tenacious_runtime::{
    Breaker, Classify, Cooldown, ErrorClass, Jitter, Policy, Refused, StopReason,
};

#[derive(Debug)]
enum Fault {
    RateLimited(Duration),
    Transient,
    Refused(Refused),
}

impl Classify for Fault {
    fn classify(&self) -> ErrorClass {
        match self {
            Fault::RateLimited(_) => ErrorClass::RateLimited,
            Fault::Transient => ErrorClass::Transient,
            Fault::Refused(refused) => refused.classify(),
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Fault::RateLimited(hint) => Some(*hint),
            _ => None,
        }
    }
    fn refused() -> Option<fn(Refused) -> Self> {
        Some(Fault::Refused)
    }
}

static OPENAI: Cooldown = Cooldown::new().name("openai");
static ANTHROPIC: Breaker = Breaker::new().name("anthropic").min_throughput(4);

const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test(start_paused = true)]
async fn each_guard_counts_its_waits_stops_and_changes_under_its_name() {
    let policy = Policy::new().max(1).cooldown(&OPENAI);
    // A 429 closes the cooldown for 2 s: one change.
    let _ = policy
        .retry(|| async { Err::<(), _>(Fault::RateLimited(ms(2_000))) })
        .await;
    // The next call waits for it to reopen: one wait of 2 s.
    let _ = policy.retry(|| async { Ok::<(), Fault>(()) }).await;
    // A 429 closes it again (its call, right behind the last one released,
    // waits one release spacing, 10 ms, first); a call that may not wait
    // that long is stopped.
    let _ = policy
        .retry(|| async { Err::<(), _>(Fault::RateLimited(ms(5_000))) })
        .await;
    let out = policy
        .max_retry_after(ms(1_000))
        .retry(|| async { Ok::<(), Fault>(()) })
        .await;
    assert!(matches!(out, Err(Fault::Refused(r)) if r.reason() == StopReason::Cooldown));

    // Four transient failures open the breaker: one change; the next call
    // is stopped.
    static BREAKING: stats::CallStats = stats::CallStats::new("breaking");
    let breaking = Policy::new()
        .max(1)
        .jitter(Jitter::None)
        .breaker(&ANTHROPIC)
        .stats(&BREAKING);
    for _ in 0..4 {
        let _ = breaking
            .retry(|| async { Err::<(), _>(Fault::Transient) })
            .await;
    }
    let out = breaking.retry(|| async { Ok::<(), Fault>(()) }).await;
    assert!(matches!(out, Err(Fault::Refused(r)) if r.reason() == StopReason::CircuitOpen));

    let snapshot = stats::snapshot();
    let openai = snapshot.guard("openai").expect("the cooldown's row");
    assert_eq!(openai.kind, "cooldown");
    assert_eq!(
        (openai.waits, openai.waited, openai.stopped, openai.changes),
        (2, ms(2_010), 1, 2)
    );
    let anthropic = snapshot.guard("anthropic").expect("the breaker's row");
    assert_eq!(anthropic.kind, "breaker");
    assert_eq!(
        (anthropic.waits, anthropic.stopped, anthropic.changes),
        (0, 1, 1)
    );
    // The refused call made no attempt: the breaker counts it, and the
    // fn's record counts it as a call, refused.
    let breaking = snapshot.get("breaking").expect("the fn's row");
    assert_eq!(
        (breaking.calls(), breaking.attempts(), breaking.refused()),
        (5, 4, 1)
    );
    assert_eq!(breaking.gave_up(StopReason::CircuitOpen), 1);
    assert_eq!(breaking.mean_attempts(), Some(1.0));
    assert_eq!(breaking.retries(), 0);
    let table = snapshot.to_string();
    assert!(table.contains("guard"), "{table}");
    assert!(
        table
            .lines()
            .any(|line| line.starts_with("openai") && line.contains("cooldown")),
        "{table}"
    );
}
