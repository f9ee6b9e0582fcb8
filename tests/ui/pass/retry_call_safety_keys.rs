// The call-safety keys together: a per-attempt timeout (async), a deadline
// (sync or async), a shared budget (named by any path to a static), the
// nested mode, and the attempt context in the body.
use std::time::Duration;

use tenacious::{Attempt, Classify, Elapsed, RetryBudget, retry};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout(Elapsed),
    #[classify(rate_limited)]
    Busy(#[classify(retry_after)] Duration),
}

impl From<Elapsed> for ToolError {
    fn from(elapsed: Elapsed) -> Self {
        ToolError::Timeout(elapsed)
    }
}

mod budgets {
    pub static SEARCH: tenacious::RetryBudget = tenacious::RetryBudget::new();
}

static LOCAL: RetryBudget = RetryBudget::with_capacity(50);

#[retry(timeout = "10s", deadline = "1m", budget = budgets::SEARCH, nested = "retry")]
async fn search(query: &str) -> Result<usize, ToolError> {
    let attempt = Attempt::current().expect("inside a retried call");
    let _key = attempt.idempotency_key().to_string();
    Ok(query.len() + attempt.number() as usize)
}

#[retry(deadline = "2s", budget = LOCAL, nested = "once")]
fn local(path: &str) -> Result<usize, ToolError> {
    if path.is_empty() {
        return Err(ToolError::Busy(Duration::from_millis(1)));
    }
    Ok(path.len())
}

// `io::Error` takes a timeout as it is: `From<Elapsed>` is built in.
#[retry(timeout = "1s", base = "1ms")]
async fn io_call() -> std::io::Result<u8> {
    Ok(1)
}

fn main() {
    assert_eq!(local("ab").unwrap(), 2);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        assert_eq!(search("abc").await.unwrap(), 4);
        assert_eq!(io_call().await.unwrap(), 1);
    });
}
