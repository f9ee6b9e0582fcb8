//! `Concurrency::adaptive`: a concurrency limit that learns a provider's
//! cap it was not told, from how its attempts end. On tokio's paused
//! clock: 64 workers always wanting to call a provider that answers 429
//! at once above its cap `C` and takes 50 ms below it, for 60 virtual
//! seconds; the limit starts at 20.
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use tenacious::{AdaptiveLimit, Classify, Concurrency, Jitter, Policy};
use tokio::time::{Instant, sleep};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Classify)]
enum CallError {
    #[classify(rate_limited)]
    TooMany,
    #[classify(refused)]
    Refused(tenacious::Refused),
}

/// The provider: its cap, what is in flight, and what it answered.
#[derive(Default)]
struct Provider {
    cap: AtomicU32,
    in_flight: AtomicU32,
    served: AtomicU64,
    refused: AtomicU64,
}

impl Provider {
    async fn call(&self) -> Result<(), CallError> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        let answer = if now > self.cap.load(Ordering::SeqCst) {
            self.refused.fetch_add(1, Ordering::SeqCst);
            Err(CallError::TooMany)
        } else {
            sleep(Duration::from_millis(50)).await;
            self.served.fetch_add(1, Ordering::SeqCst);
            Ok(())
        };
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        answer
    }
}

/// Runs 64 workers for 60 s against a cap of `cap` (`then` from 30 s on,
/// if given): the limit every 100 ms, and the share of requests refused.
async fn run(limit: &'static Concurrency, cap: u32, then: Option<u32>) -> (Vec<u32>, f64) {
    let policy: &'static Policy = Box::leak(Box::new(
        Policy::new()
            .max(20)
            .base(Duration::from_millis(10))
            .jitter(Jitter::Full)
            .concurrency(limit),
    ));
    let provider = Arc::new(Provider::default());
    provider.cap.store(cap, Ordering::SeqCst);
    let end = Instant::now() + Duration::from_secs(60);
    let workers: Vec<_> = (0..64)
        .map(|_| {
            let provider = Arc::clone(&provider);
            tokio::spawn(async move {
                while Instant::now() < end {
                    let _ = policy.retry(|| provider.call()).await;
                }
            })
        })
        .collect();
    let mut limits = Vec::new();
    for tick in 0..600 {
        if tick == 300
            && let Some(then) = then
        {
            provider.cap.store(then, Ordering::SeqCst);
        }
        limits.push(limit.limit());
        sleep(Duration::from_millis(100)).await;
    }
    for worker in workers {
        worker.await.unwrap();
    }
    let served = provider.served.load(Ordering::SeqCst) as f64;
    let refused = provider.refused.load(Ordering::SeqCst) as f64;
    (limits, refused / (served + refused))
}

/// The first tick from which the rolling 10 s median of the limit stays
/// within ±15 % of `cap`, in seconds after `from`.
fn settled(limits: &[u32], cap: u32, from: usize) -> Option<f64> {
    // ±15 % of the cap, as whole numbers: 2 exactly for 2, 7 to 9 for 8.
    let (low, high) = (
        (f64::from(cap) * 0.85).ceil(),
        (f64::from(cap) * 1.15).floor(),
    );
    let within = |median: u32| (low..=high).contains(&f64::from(median));
    let medians: Vec<u32> = (from..limits.len())
        .map(|at| {
            let mut window = limits[at.saturating_sub(99).max(from)..=at].to_vec();
            window.sort_unstable();
            window[window.len() / 2]
        })
        .collect();
    (0..medians.len())
        .find(|&at| medians[at..].iter().all(|&m| within(m)))
        .map(|at| at as f64 / 10.0)
}

static LEARNT_2: AdaptiveLimit = AdaptiveLimit::new(20);
static LIMIT_2: Concurrency = Concurrency::adaptive(&LEARNT_2);
static LEARNT_8: AdaptiveLimit = AdaptiveLimit::new(20);
static LIMIT_8: Concurrency = Concurrency::adaptive(&LEARNT_8);
static LEARNT_STEP: AdaptiveLimit = AdaptiveLimit::new(20);
static LIMIT_STEP: Concurrency = Concurrency::adaptive(&LEARNT_STEP);

#[tokio::test(start_paused = true)]
async fn an_adaptive_limit_finds_an_unknown_cap_of_2_or_8_with_few_429s() {
    for (limit, cap) in [(&LIMIT_2, 2), (&LIMIT_8, 8)] {
        let (limits, refused) = run(limit, cap, None).await;
        let at = settled(&limits, cap, 0);
        println!(
            "cap {cap}: settled after {at:?} s, {:.2} % of requests refused, limit at the end {}",
            refused * 100.0,
            limits.last().unwrap()
        );
        assert!(at.is_some_and(|at| at <= 30.0), "cap {cap}: {limits:?}");
        assert!(
            refused <= 0.02,
            "cap {cap}: {:.2} % refused",
            refused * 100.0
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_adaptive_limit_follows_a_cap_that_drops_mid_run() {
    let (limits, refused) = run(&LIMIT_STEP, 8, Some(2)).await;
    let at = settled(&limits, 2, 300);
    println!(
        "cap 8 then 2: settled {at:?} s after the drop, {:.2} % refused",
        refused * 100.0
    );
    assert!(at.is_some_and(|at| at <= 30.0), "{limits:?}");
    assert!(refused <= 0.02, "{:.2} % refused", refused * 100.0);
}
