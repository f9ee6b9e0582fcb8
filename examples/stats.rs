//! The statistics table: three tools fail the way real ones do (seeded
//! faults, on tokio's paused clock, so every run prints the same table),
//! `#[retry]` counts every call in each fn's own record, and
//! `tenacious::stats::snapshot()` prints the four figures operators watch.
//!
//! Run it with `cargo run --example stats`.
use std::time::Duration;

use tenacious::chaos::{Chaos, ChaosError, Fault};
use tenacious::{Classify, retry, seed_jitter};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transparent)]
    Chaos(ChaosError),
    #[classify(invalid, hint = "no such product: {0}")]
    NoSuchProduct(u32),
}

impl From<ChaosError> for ToolError {
    fn from(error: ChaosError) -> Self {
        ToolError::Chaos(error)
    }
}

/// A search backend that times out now and then: retrying fixes it.
#[retry(max = 3, base = "200ms")]
async fn search(faults: &Chaos, query: &str) -> Result<usize, ToolError> {
    faults.inject(|| Ok(query.len()))
}

/// A rate-limited product API that sometimes asks for a wait longer than
/// the deadline allows.
#[retry(max = 4, base = "100ms", deadline = "5s")]
async fn fetch_product(faults: &Chaos, id: u32) -> Result<String, ToolError> {
    if id % 50 == 49 {
        return Err(ToolError::NoSuchProduct(id));
    }
    faults.inject(|| Ok(format!("product {id}")))
}

/// An order API whose outage outlasts three attempts.
#[retry(max = 3, base = "500ms")]
async fn create_order(faults: &Chaos, id: u32) -> Result<u32, ToolError> {
    faults.inject(|| Ok(id))
}

#[tokio::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    seed_jitter(7);
    let flaky_search = Chaos::new(1)
        .rate(0.15)
        .faults(&[Fault::Timeout, Fault::Transient]);
    let rate_limited = Chaos::new(2).rate(0.3).faults(&[
        Fault::RateLimited(Duration::from_secs(1)),
        Fault::RateLimited(Duration::from_secs(8)),
    ]);
    let outage = Chaos::new(3)
        .rate(0.6)
        .faults(&[Fault::Transient, Fault::Fatal]);

    for id in 0..200 {
        let _ = search(&flaky_search, "wireless headphones").await;
        let _ = fetch_product(&rate_limited, id).await;
        if id % 4 == 0 {
            let _ = create_order(&outage, id).await;
        }
    }

    print!("{}", tenacious::stats::snapshot());
}
