// `policy = "name"` in the shapes real code has: async and sync fns,
// methods, generic fns (whose error the bounds may or may not let hold an
// `Elapsed`), an `impl Trait` success, `#[async_trait]`, a stream, every
// other key beside it, and a `Send` future a task can own.
use std::fmt::Display;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::Stream;
use tenacious::{Breaker, Classify, Elapsed, ErrorClass, Failure, RetryBudget, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
    fn refused() -> Option<fn(tenacious::Refused) -> Self> {
        Some(|_| Flaky)
    }
}

impl tenacious::Refusable for Flaky {}

impl From<Elapsed> for Flaky {
    fn from(_: Elapsed) -> Self {
        Flaky
    }
}

static BUDGET: RetryBudget = RetryBudget::new();
static BREAKER: Breaker = Breaker::new();

fn is_retryable(_: &Flaky) -> bool {
    true
}

#[retry(policy = "search")]
async fn search(query: &str) -> Result<usize, Flaky> {
    Ok(query.len())
}

#[retry(
    policy = "openai",
    max = 4,
    base = "10ms",
    cap = "1s",
    jitter = "equal",
    on = Transient,
    when = is_retryable,
    max_retry_after = "30s",
    timeout = "2s",
    deadline = "10s",
    budget = BUDGET,
    breaker = BREAKER,
    idempotent = false,
    key = prompt,
    nested = "retry",
    stats = "chat"
)]
async fn chat(prompt: &str) -> Result<String, Failure<Flaky>> {
    Ok(prompt.to_owned())
}

#[retry(policy = "search", stats = false)]
fn search_blocking(query: &str) -> Result<usize, Flaky> {
    Ok(query.len())
}

#[retry(policy = "search")]
async fn generic<T: Display, E: Classify>(value: T) -> Result<String, E> {
    Ok(value.to_string())
}

#[retry(policy = "search")]
async fn generic_timed<E: Classify + From<Elapsed>>() -> Result<(), E> {
    Ok(())
}

#[retry(policy = "search")]
async fn shown() -> Result<impl Display, Flaky> {
    Ok(1)
}

#[retry(policy = "words", first_item = "1s", idle = "5s")]
async fn words(text: &str) -> Result<impl Stream<Item = Result<String, Flaky>> + '_, Flaky> {
    Ok(futures_util::stream::iter(
        text.split(' ').map(|word| Ok(word.to_owned())),
    ))
}

struct Client {
    calls: u32,
}

impl Client {
    #[retry(policy = "search")]
    async fn fetch(&mut self) -> Result<u32, Flaky> {
        self.calls += 1;
        Ok(self.calls)
    }

    #[retry(policy = "search")]
    fn fetch_blocking(&self) -> Result<u32, Flaky> {
        Ok(self.calls)
    }
}

#[async_trait]
trait Tool {
    async fn run(&self, input: &str) -> Result<usize, Flaky>;
}

#[async_trait]
impl Tool for Client {
    #[retry(policy = "tool")]
    async fn run(&self, input: &str) -> Result<usize, Flaky> {
        Ok(input.len())
    }
}

fn is_send<T: Send>(_: T) {}

fn main() {
    is_send(search("a"));
    is_send(chat("a"));
    is_send(generic::<_, Flaky>(1));
    is_send(generic_timed::<Flaky>());
    is_send(shown());
    let _ = search_blocking("a");
    let _ = words("a b");
    let mut client = Client { calls: 0 };
    is_send(client.fetch());
    let _ = client.fetch_blocking();
    let _ = client.run("a");
    let _ = Duration::ZERO;
}
