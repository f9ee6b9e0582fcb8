//! `#[retry]` under the attributes real code stacks on it: `#[async_trait]`
//! and `#[tracing::instrument]` expand first and rewrite the fn; the retried
//! part must still be the user's body, once per attempt. Observed through
//! attempt counters on tokio's paused clock.
use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use tenacious::{Attempt, Classify, ErrorClass, retry};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ToolError {
    Flaky,
    Broken,
}

impl Classify for ToolError {
    fn classify(&self) -> ErrorClass {
        match self {
            ToolError::Flaky => ErrorClass::Transient,
            ToolError::Broken => ErrorClass::Fatal,
        }
    }
}

/// Fails with `Flaky` until its `attempts`-th attempt.
#[derive(Debug, Default)]
struct Flaky {
    attempts: AtomicU32,
    succeed_at: u32,
}

impl Flaky {
    fn new(succeed_at: u32) -> Self {
        Flaky {
            attempts: AtomicU32::new(0),
            succeed_at,
        }
    }

    fn attempt(&self) -> Result<u32, ToolError> {
        let n = self.attempts.fetch_add(1, Ordering::Relaxed) + 1;
        if n < self.succeed_at {
            Err(ToolError::Flaky)
        } else {
            Ok(n)
        }
    }

    fn attempts(&self) -> u32 {
        self.attempts.load(Ordering::Relaxed)
    }
}

#[async_trait]
trait Tool {
    async fn call(&self, input: String) -> Result<String, ToolError>;
    async fn call_mut(&mut self, input: &str) -> Result<u32, ToolError>;
    async fn broken(&self) -> Result<u32, ToolError>;
    fn once(&self) -> Result<u32, ToolError>;

    #[retry(max = 4, base = "1ms")]
    async fn provided(&self, input: &str) -> Result<String, ToolError>
    where
        Self: Sync,
    {
        tokio::task::yield_now().await;
        let n = self.once()?;
        Ok(format!("{input}#{n}"))
    }
}

#[derive(Debug, Default)]
struct Service {
    flaky: Flaky,
    calls: u32,
}

#[async_trait]
impl Tool for Service {
    #[retry(max = 4, base = "1ms")]
    async fn call(&self, input: String) -> Result<String, ToolError> {
        tokio::task::yield_now().await;
        let n = self.flaky.attempt()?;
        // The attempt context is the one of this attempt.
        assert_eq!(Attempt::current().map(|a| a.number()), Some(n));
        Ok(format!("{input}#{n}"))
    }

    #[retry(max = 4, base = "1ms")]
    async fn call_mut(&mut self, input: &str) -> Result<u32, ToolError> {
        self.calls += 1;
        tokio::task::yield_now().await;
        self.flaky.attempt()?;
        Ok(self.calls + u32::try_from(input.len()).unwrap())
    }

    #[retry(max = 4, base = "1ms")]
    async fn broken(&self) -> Result<u32, ToolError> {
        self.flaky.attempt()?;
        Err(ToolError::Broken)
    }

    fn once(&self) -> Result<u32, ToolError> {
        self.flaky.attempt()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_trait_methods_are_retried_and_send() {
    // `tokio::spawn` on a multi-threaded runtime: the boxed future is `Send`.
    let handle = tokio::spawn(async {
        let service = Service {
            flaky: Flaky::new(3),
            calls: 0,
        };
        let result = service.call(String::from("in")).await;
        (result, service.flaky.attempts())
    });
    assert_eq!(handle.await.unwrap(), (Ok(String::from("in#3")), 3));

    let handle = tokio::spawn(async {
        let mut service = Service {
            flaky: Flaky::new(2),
            calls: 0,
        };
        let result = service.call_mut("ab").await;
        (result, service.calls)
    });
    // Two attempts, each a fresh reborrow of `self`.
    assert_eq!(handle.await.unwrap(), (Ok(4), 2));
}

#[tokio::test(start_paused = true)]
async fn async_trait_methods_stop_like_any_retried_fn() {
    let service = Service {
        flaky: Flaky::new(100),
        calls: 0,
    };
    assert_eq!(service.call(String::from("x")).await, Err(ToolError::Flaky));
    assert_eq!(service.flaky.attempts(), 4);

    let service = Service::default();
    assert_eq!(service.broken().await, Err(ToolError::Broken));
    assert_eq!(service.flaky.attempts(), 1, "a fatal error is not retried");
}

#[tokio::test(start_paused = true)]
async fn async_trait_default_methods_are_retried() {
    let service = Service {
        flaky: Flaky::new(2),
        calls: 0,
    };
    assert_eq!(service.provided("p").await, Ok(String::from("p#2")));
    assert_eq!(service.flaky.attempts(), 2);
}
