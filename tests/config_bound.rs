//! `#[retry(policy = "name")]`: the policy of that name in the set
//! `config::load` keeps, looked up at run time, with the keys written
//! beside it overriding its fields.
//!
//! `config::load` holds once per process, and this file is one process:
//! one test walks through before and after the load, so that no other
//! test's thread loads first.
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures_util::stream::{self, Stream, StreamExt};
use tenacious::config::{self, Policies};
use tenacious::{Classify, Elapsed, Failure, StopReason, retry, stats};

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum SearchError {
    #[classify(transient)]
    Timeout,
}

/// A retried stream's error holds its timers' expiry.
impl From<Elapsed> for SearchError {
    fn from(_: Elapsed) -> Self {
        SearchError::Timeout
    }
}

static SEARCHES: AtomicU32 = AtomicU32::new(0);

fn fail() -> Result<(), SearchError> {
    SEARCHES.fetch_add(1, Ordering::Relaxed);
    Err(SearchError::Timeout)
}

/// Each call's attempts, and the backoff before its second.
fn attempts_and_first_delay(failure: &Failure<SearchError>) -> (usize, Option<Duration>) {
    let attempts = failure.attempts();
    (attempts.len(), attempts.first().and_then(|a| a.delay))
}

#[retry(policy = "search", jitter = "none", stats = "search tool")]
async fn search() -> Result<(), Failure<SearchError>> {
    fail()
}

/// The same policy, with `max` beside it.
#[retry(policy = "search", max = 2, jitter = "none")]
async fn search_twice() -> Result<(), Failure<SearchError>> {
    fail()
}

/// A sync fn binds the same way.
#[retry(policy = "search", jitter = "none", base = "1ms")]
fn search_blocking() -> Result<(), Failure<SearchError>> {
    fail()
}

/// A name the loaded set does not have.
#[retry(policy = "anthropic", base = "1ms")]
async fn complete() -> Result<(), Failure<SearchError>> {
    fail()
}

/// A loaded policy's shared guards come with it: an empty budget allows
/// no retry.
#[retry(policy = "frugal")]
async fn frugal() -> Result<(), Failure<SearchError>> {
    fail()
}

/// A retried stream fn, each attempt failing before its first item.
#[retry(policy = "search", jitter = "none")]
async fn words() -> Result<impl Stream<Item = Result<u32, SearchError>>, SearchError> {
    fail()?;
    Ok(stream::iter([Ok(1)]))
}

/// An error that cannot hold an `Elapsed`.
#[derive(Debug, Classify)]
#[classify(transient)]
struct Unbounded;

/// A slow attempt, bounded by the loaded `timeout`: its error holds the
/// expiry.
#[retry(policy = "slow")]
async fn slow() -> Result<(), Failure<SearchError>> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(())
}

/// The same, unbounded: its error cannot say an attempt ran out.
#[retry(policy = "slow")]
async fn slow_unbounded() -> Result<(), Unbounded> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(())
}

/// A slow attempt under a loaded `deadline` alone: it is not cut, as a
/// `#[retry]` fn's attempt without `timeout` is not.
#[retry(policy = "patient")]
async fn patient() -> Result<(), Failure<SearchError>> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(())
}

const SET: &str = r#"
[policies.search]
max = 5
base = "10ms"

[policies.frugal]
max = 5
base = "1ms"
budget = "empty"

[policies.slow]
max = 2
base = "1ms"
timeout = "10ms"

[policies.patient]
deadline = "100ms"

[budgets.empty]
capacity = 0
"#;

#[tokio::test(start_paused = true)]
async fn a_named_policy_is_the_fallback_until_loaded_then_the_loaded_one() {
    // Before `load`: the defaults (3 attempts, base 200ms) with the keys
    // beside `policy`, and the names are reported missing.
    assert!(config::missing().is_empty(), "no fn has asked yet");
    let failure = search().await.unwrap_err();
    assert_eq!(
        attempts_and_first_delay(&failure),
        (3, Some(Duration::from_millis(200)))
    );
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(search_twice().await.unwrap_err().attempts().len(), 2);
    assert_eq!(config::missing(), ["search"]);
    assert_eq!(frugal().await.unwrap_err().attempts().len(), 3);
    assert_eq!(complete().await.unwrap_err().attempts().len(), 3);
    assert_eq!(config::missing(), ["anthropic", "frugal", "search"]);
    // The fallback keeps the fn's statistics record.
    let record = stats::snapshot().get("search tool").unwrap().calls();
    assert_eq!(record, 1);

    config::load(Policies::from_toml_str(SET).unwrap()).unwrap();

    // After: the loaded policy, found on the next call (not cached while
    // missing), with the keys beside it.
    let failure = search().await.unwrap_err();
    assert_eq!(
        attempts_and_first_delay(&failure),
        (5, Some(Duration::from_millis(10)))
    );
    let failure = search_twice().await.unwrap_err();
    assert_eq!(
        attempts_and_first_delay(&failure),
        (2, Some(Duration::from_millis(10)))
    );
    assert_eq!(
        attempts_and_first_delay(&search_blocking().unwrap_err()),
        (5, Some(Duration::from_millis(1)))
    );
    // The loaded policy's empty budget: no retry.
    let failure = frugal().await.unwrap_err();
    assert_eq!(
        (failure.attempts().len(), failure.stop_reason()),
        (1, StopReason::Budget)
    );
    // A stream fn: five attempts to open, then the give-up as its item.
    let before = SEARCHES.load(Ordering::Relaxed);
    let items: Vec<_> = words().collect().await;
    assert_eq!(SEARCHES.load(Ordering::Relaxed) - before, 5);
    assert!(matches!(&items[..], [Err(failure)] if failure.attempts().len() == 5));

    // A loaded `timeout` bounds each attempt of a fn whose error converts
    // from `Elapsed`, as `timeout = "..."` would; no other.
    let start = tokio::time::Instant::now();
    let failure = slow().await.unwrap_err();
    assert_eq!(failure.attempts().len(), 2);
    assert_eq!(failure.last(), &SearchError::Timeout);
    assert!(start.elapsed() < Duration::from_secs(1));
    slow_unbounded().await.unwrap();
    patient().await.unwrap();

    // Still the fallback for a name the set lacks, and still reported.
    assert_eq!(complete().await.unwrap_err().attempts().len(), 3);
    assert_eq!(config::missing(), ["anthropic"]);
    // The bound policy keeps the fn's statistics record too.
    assert_eq!(stats::snapshot().get("search tool").unwrap().calls(), 2);
    // A second call runs the policy bound by the first.
    assert_eq!(search().await.unwrap_err().attempts().len(), 5);
}
