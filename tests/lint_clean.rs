//! The code `#[retry]` generates is lint-clean: this file denies rustc's
//! strictest lints and all of `clippy::pedantic` around every shape of fn
//! the attribute accepts, and CI runs clippy on all targets with
//! `-D warnings`, so a lint fired by the expansion fails the build.
#![deny(
    warnings,
    unused,
    unused_qualifications,
    unused_results,
    unreachable_pub,
    rust_2018_idioms,
    missing_debug_implementations,
    trivial_casts,
    trivial_numeric_casts,
    single_use_lifetimes,
    clippy::all,
    clippy::pedantic
)]

use std::fmt::Display;
use std::time::Duration;

use tenacious::{Attempt, Classify, Elapsed, ErrorClass, Failure, RetryBudget, RetryEvent, retry};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LintError {
    Flaky,
    Slow(Duration),
}

impl Classify for LintError {
    fn classify(&self) -> ErrorClass {
        match self {
            LintError::Flaky => ErrorClass::Transient,
            LintError::Slow(_) => ErrorClass::RateLimited,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            LintError::Slow(wait) => Some(*wait),
            LintError::Flaky => None,
        }
    }
}

impl From<Elapsed> for LintError {
    fn from(_: Elapsed) -> Self {
        LintError::Flaky
    }
}

static BUDGET: RetryBudget = RetryBudget::new();

#[retry(base = "1us", timeout = "1s", deadline = "2s", budget = BUDGET)]
async fn guarded() -> Result<u32, LintError> {
    Ok(Attempt::current().map_or(0, |a| a.number()))
}

#[retry(base = "1us", deadline = "2s", nested = "retry")]
fn sync_deadline() -> Result<u32, LintError> {
    Ok(1)
}

#[retry(base = "1us", jitter = "none")]
fn with_failure(fail_first: bool, attempts: &mut u32) -> Result<u32, Failure<LintError>> {
    *attempts += 1;
    if fail_first && *attempts == 1 {
        return Err(LintError::Flaky);
    }
    Ok(*attempts)
}

#[retry(base = "1us", timeout = "1s")]
async fn async_failure() -> Result<u8, Failure<LintError>> {
    Ok(2)
}

fn retry_flaky_only(error: &LintError) -> bool {
    matches!(error, LintError::Flaky)
}

fn log_retry(error: &LintError, event: &RetryEvent) {
    assert!(event.attempt >= 1, "{error:?}");
}

#[retry]
fn defaults() -> Result<u8, LintError> {
    Ok(1)
}

#[retry(
    max = 4,
    base = "1us",
    cap = "10us",
    jitter = "equal",
    on = Transient | RateLimited,
    when = retry_flaky_only,
    max_retry_after = "1ms",
    notify = log_retry,
    crate = ::tenacious,
)]
fn every_key(fail_first: bool, attempts: &mut u32) -> Result<u32, LintError> {
    *attempts += 1;
    if fail_first && *attempts == 1 {
        return Err(LintError::Flaky);
    }
    Ok(*attempts)
}

#[retry(base = "1us")]
async fn asynchronous(name: &str) -> Result<usize, LintError> {
    Ok(name.len())
}

// By value, so the expansion marks it; and one argument configured out.
#[retry(base = "1us")]
async fn owned_async(count: u32, #[cfg(not(test))] removed: u32) -> Result<u32, LintError> {
    Ok(count + 1)
}

#[retry(base = "1us", jitter = "none")]
fn question_mark(text: &str) -> Result<u32, LintError> {
    let n = text.parse::<u32>().map_err(|_| LintError::Flaky)?;
    Ok(n)
}

#[retry(base = "1us")]
fn generic<T, E>(value: &T) -> Result<String, E>
where
    T: Display + ?Sized,
    E: Classify,
{
    Ok(value.to_string())
}

#[retry(base = "1us")]
fn impl_trait(items: impl IntoIterator<Item = u8> + Copy) -> Result<impl Display, LintError> {
    Ok(items.into_iter().map(u32::from).sum::<u32>())
}

#[retry(base = "1us")]
fn lifetimes<'a>(first: &'a str, second: &str) -> Result<&'a str, LintError> {
    if second.is_empty() {
        Err(LintError::Slow(Duration::from_micros(1)))
    } else {
        Ok(first)
    }
}

#[retry(base = "1us")]
fn patterns((a, b): (u32, u32), mut scale: u32) -> Result<u32, LintError> {
    scale += 1;
    Ok((a + b) * scale)
}

/// A documented retried fn with other attributes around it.
#[must_use = "the result says whether the call worked"]
#[retry(base = "1us")]
#[inline]
fn documented() -> Result<(), LintError> {
    Ok(())
}

#[derive(Debug, Default)]
struct Client {
    calls: u32,
    name: String,
}

impl Client {
    #[retry(base = "1us")]
    fn name(&self) -> Result<&str, LintError> {
        Ok(&self.name)
    }

    #[retry(base = "1us")]
    fn bump(&mut self) -> Result<u32, LintError> {
        self.calls += 1;
        if self.calls < 2 {
            Err(LintError::Flaky)
        } else {
            Ok(self.calls)
        }
    }

    #[retry(base = "1us")]
    async fn fetch(&self, key: &str) -> Result<String, LintError> {
        Ok(format!("{}/{key}", self.name))
    }

    #[retry(base = "1us")]
    async fn fetch_mut(&mut self) -> Result<u32, LintError> {
        self.calls += 1;
        Ok(self.calls)
    }
}

trait Tool {
    fn run(&mut self, input: &str) -> Result<usize, LintError>;
}

impl Tool for Client {
    #[retry(base = "1us", on = Transient)]
    fn run(&mut self, input: &str) -> Result<usize, LintError> {
        self.name.push_str(input);
        Ok(self.name.len())
    }
}

// The shapes other attributes leave: `#[async_trait]` expanded first, and
// `#[tracing::instrument]` above `#[retry]`.
#[async_trait::async_trait]
trait Service {
    async fn call(&self, input: &str) -> Result<usize, LintError>;
    async fn call_mut(&mut self, input: String) -> Result<usize, LintError>;
}

#[async_trait::async_trait]
impl Service for Client {
    #[retry(base = "1us")]
    async fn call(&self, input: &str) -> Result<usize, LintError> {
        Ok(self.name.len() + input.len())
    }

    #[retry(base = "1us", timeout = "1s")]
    async fn call_mut(&mut self, input: String) -> Result<usize, LintError> {
        self.name.push_str(&input);
        Ok(self.name.len())
    }
}

#[tracing::instrument(err(Debug), ret)]
#[retry(base = "1us")]
fn instrumented(name: &str, count: &mut u32) -> Result<usize, LintError> {
    *count += 1;
    Ok(name.len())
}

#[tracing::instrument]
#[retry(base = "1us")]
fn instrumented_plain(name: &str) -> Result<usize, LintError> {
    Ok(name.len())
}

#[tracing::instrument]
#[retry(base = "1us")]
async fn instrumented_async(name: &str) -> Result<usize, LintError> {
    Ok(name.len())
}

/// Bound by name (nothing is loaded here: the fallback runs).
#[retry(policy = "search", base = "1us")]
async fn by_name(name: &str) -> Result<usize, Failure<LintError>> {
    Ok(name.len())
}

#[retry(policy = "search", base = "1us", stats = false)]
fn by_name_sync<T: Display>(value: &T) -> Result<String, LintError> {
    Ok(value.to_string())
}

#[test]
fn every_shape_runs() {
    assert_eq!(defaults(), Ok(1));
    let mut attempts = 0;
    assert_eq!(every_key(true, &mut attempts), Ok(2));
    assert_eq!(question_mark("3"), Ok(3));
    assert_eq!(generic::<str, LintError>("g"), Ok(String::from("g")));
    assert_eq!(
        impl_trait([1, 2]).map(|d| d.to_string()),
        Ok(String::from("3"))
    );
    assert_eq!(lifetimes("a", "b"), Ok("a"));
    assert_eq!(patterns((1, 2), 1), Ok(6));
    documented().unwrap();
    assert_eq!(sync_deadline(), Ok(1));
    let mut attempts = 0;
    assert_eq!(with_failure(true, &mut attempts).ok(), Some(2));

    let mut client = Client::default();
    assert_eq!(client.bump(), Ok(2));
    assert_eq!(client.name(), Ok(""));
    assert_eq!(client.run("x"), Ok(1));
    let mut count = 0;
    assert_eq!(instrumented("ab", &mut count), Ok(2));
    assert_eq!(instrumented_plain("ab"), Ok(2));
    assert_eq!(by_name_sync(&1), Ok(String::from("1")));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        assert_eq!(asynchronous("abc").await, Ok(3));
        assert_eq!(owned_async(1).await, Ok(2));
        assert_eq!(guarded().await, Ok(1));
        assert_eq!(async_failure().await.ok(), Some(2));
        assert_eq!(client.fetch("k").await, Ok(String::from("x/k")));
        assert_eq!(client.fetch_mut().await, Ok(3));
        assert_eq!(client.call("y").await, Ok(2));
        assert_eq!(client.call_mut(String::from("z")).await, Ok(2));
        assert_eq!(instrumented_async("abc").await, Ok(3));
        assert_eq!(by_name("abc").await.ok(), Some(3));
    });
}
