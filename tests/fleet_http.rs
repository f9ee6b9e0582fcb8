//! A fleet in one process, over real HTTP on loopback: 32 agent tasks call
//! one axum server that allows 4 requests a second. Each task's calls go
//! through `#[retry]`; with a shared `Cooldown` and `Throttle` the fleet
//! gets far fewer 429s than the same tasks retrying alone, every task
//! completes, and the shared retry budget is not drained. Measured: alone,
//! 174 requests, 138 answered 429, 15 of 32 tasks completed, the budget
//! drained to 29 of 500; together, 64 requests, no 429, 32 of 32, the
//! budget full (without `probe_first`, the first wave's 28 429s were all
//! the guarded fleet got).
//!
//! On the real clock (tokio's paused clock would jump past the server's
//! window whenever the runtime waits on a socket): the runs take about as
//! long as the quota needs, some 10 s each. They assert counts, never
//! durations.
#[path = "support/quota_server.rs"]
mod quota_server;

use std::time::Duration;

use axum::http::StatusCode;
use quota_server::QuotaServer;
use tenacious::{Cooldown, HttpError, RetryBudget, Throttle, rate_limits, retry};

/// Requests a second the server allows, and its burst.
const RATE: f64 = 4.0;
const BURST: f64 = 4.0;
/// Agent tasks, and model calls in each.
const TASKS: usize = 32;
const CALLS: usize = 2;

/// One request: the server's answer as the retried fn sees it. A success's
/// rate-limit headers go to the throttle, if there is one; a failure's
/// reach the guards through `HttpError`.
async fn request(
    client: &reqwest::Client,
    url: &str,
    throttle: Option<&Throttle>,
) -> Result<(), HttpError> {
    let response = client
        .post(url)
        .send()
        .await
        .map_err(|_| HttpError::new(StatusCode::BAD_GATEWAY))?;
    let status = response.status();
    if status.is_success() {
        if let Some(throttle) = throttle {
            throttle.report(rate_limits::from_headers(response.headers()));
        }
        Ok(())
    } else {
        Err(HttpError::from_parts(status, response.headers()))
    }
}

static ALONE_BUDGET: RetryBudget = RetryBudget::new();

/// Each call retrying alone: backoff with full jitter on top of the
/// server's `Retry-After`, as the provider SDKs do.
#[retry(max = 8, base = "200ms", budget = ALONE_BUDGET)]
async fn alone(client: &reqwest::Client, url: &str) -> Result<(), HttpError> {
    request(client, url, None).await
}

static COOLDOWN: Cooldown = Cooldown::new();
/// Holding the fleet's first wave for the provider's first answer, which
/// tells the window: without it the 32 first requests meet a burst of 4.
static THROTTLE: Throttle = Throttle::new().probe_first(Duration::from_secs(1));
static FLEET_BUDGET: RetryBudget = RetryBudget::new();

/// The same call, sharing the fleet's cooldown, throttle and budget.
#[retry(max = 8, base = "200ms", cooldown = COOLDOWN, throttle = THROTTLE, budget = FLEET_BUDGET)]
async fn together(client: &reqwest::Client, url: &str) -> Result<(), HttpError> {
    request(client, url, Some(&THROTTLE)).await
}

/// What one run of the fleet came to.
#[derive(Debug)]
struct Run {
    requests: u64,
    rejected: u64,
    completed: usize,
}

/// Runs `TASKS` agent tasks of `CALLS` calls each at once against a fresh
/// server, each call through `call`.
async fn run<F, Fut>(call: F) -> Run
where
    F: Fn(reqwest::Client, String) -> Fut + Copy + Send + 'static,
    Fut: Future<Output = Result<(), HttpError>> + Send,
{
    let server = QuotaServer::start(RATE, BURST).await;
    let url = server.url();
    let client = reqwest::Client::new();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (client, url) = (client.clone(), url.clone());
            tokio::spawn(async move {
                for _ in 0..CALLS {
                    if call(client.clone(), url.clone()).await.is_err() {
                        return false;
                    }
                }
                true
            })
        })
        .collect();
    let mut completed = 0;
    for task in tasks {
        completed += usize::from(task.await.unwrap());
    }
    Run {
        requests: server.requests(),
        rejected: server.rejected(),
        completed,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_cooldown_and_throttle_cut_the_fleets_429s_and_every_task_completes() {
    let alone = run(|client, url| async move { alone(&client, &url).await }).await;
    let together = run(|client, url| async move { together(&client, &url).await }).await;
    println!("alone: {alone:?}, budget left {}", ALONE_BUDGET.balance());
    println!(
        "together: {together:?}, budget left {}",
        FLEET_BUDGET.balance()
    );
    // The quota serves every call once: the rest are 429s.
    let calls = (TASKS * CALLS) as u64;
    assert_eq!(together.requests - together.rejected, calls);
    assert_eq!(together.completed, TASKS, "every task completes");
    assert!(
        together.rejected * 5 <= alone.rejected,
        "at least 80 % fewer 429s: {} together against {} alone",
        together.rejected,
        alone.rejected
    );
    assert!(
        FLEET_BUDGET.balance() > RetryBudget::new().balance() / 2,
        "the shared budget is not drained: {} left",
        FLEET_BUDGET.balance()
    );
}

static NOISY_COOLDOWN: Cooldown = Cooldown::new();
static NOISY_THROTTLE: Throttle = Throttle::new().probe_first(Duration::from_secs(1));
static NOISY_BREAKER: tenacious::Breaker = tenacious::Breaker::new();
static NOISY_BUDGET: RetryBudget = RetryBudget::new();

/// The recommended guards, against a provider that answers a tenth of
/// requests 529 or 503 whatever the load.
#[retry(
    max = 8,
    base = "200ms",
    breaker = NOISY_BREAKER,
    cooldown = NOISY_COOLDOWN,
    throttle = NOISY_THROTTLE,
    budget = NOISY_BUDGET
)]
async fn noisy(client: &reqwest::Client, url: &str) -> Result<(), tenacious::Failure<HttpError>> {
    request(client, url, Some(&NOISY_THROTTLE)).await
}

/// The noise is not the fleet's excess: the headers keep governing the
/// throttle's rate (each overload cut it by 0.7 towards 0.5 a second
/// while the headers said 4 were free), the breaker stays closed, and
/// every task completes with few 429s. Counts only: the run takes about
/// as long as the quota needs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_tenth_of_answers_overloaded_the_headers_keep_governing_the_rate() {
    let server = QuotaServer::start(RATE, BURST).await;
    let url = server.noisy_url();
    let client = reqwest::Client::new();
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (client, url) = (client.clone(), url.clone());
            tokio::spawn(async move {
                for _ in 0..CALLS {
                    if noisy(&client, &url).await.is_err() {
                        return false;
                    }
                }
                true
            })
        })
        .collect();
    let mut completed = 0;
    for task in tasks {
        completed += usize::from(task.await.unwrap());
    }
    let (requests, rejected, noise) = (server.requests(), server.rejected(), server.noise());
    let throttle = NOISY_THROTTLE.stats();
    println!(
        "{requests} requests, {rejected} 429s, {noise} noise, {completed} of {TASKS} tasks, \
         throttle {throttle:?}, breaker {:?}",
        NOISY_BREAKER.stats()
    );
    assert!(noise > 0, "the route made no noise");
    assert_eq!(completed, TASKS, "every task completes");
    assert_eq!(
        NOISY_BREAKER.stats().opened,
        0,
        "the breaker opened on noise"
    );
    assert!(
        rejected * 50 <= requests,
        "more than 2 % of requests answered 429: {rejected} of {requests}"
    );
    // The adaptive rate, if an overload turned it on, is back to what the
    // headers allow (about 4 a second), not cut towards its least.
    assert!(
        throttle.rate.is_none_or(|rate| rate >= 0.8 * RATE),
        "the throttle's rate was cut below the headers': {throttle:?}"
    );
}
