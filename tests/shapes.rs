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

/// A subscriber that counts the spans created and the events recorded.
#[derive(Default)]
struct Counting {
    spans: AtomicU32,
    events: AtomicU32,
}

impl tracing::Subscriber for Counting {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let n = self.spans.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::span::Id::from_u64(u64::from(n))
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, _: &tracing::Event<'_>) {
        self.events.fetch_add(1, Ordering::Relaxed);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}

/// Runs `f` with a fresh [`Counting`] subscriber; returns its result and
/// the (spans, events) counted.
fn counted<R>(f: impl FnOnce() -> R) -> (R, (u32, u32)) {
    let counting = std::sync::Arc::new(Counting::default());
    let result = tracing::subscriber::with_default(counting.clone(), f);
    let counts = (
        counting.spans.load(Ordering::Relaxed),
        counting.events.load(Ordering::Relaxed),
    );
    (result, counts)
}

#[tracing::instrument(skip(flaky), err(Debug))]
#[retry(max = 3, base = "1us", stats = false)]
fn instrumented_sync(name: String, log: &mut Vec<String>, flaky: &Flaky) -> Result<u32, ToolError> {
    log.push(name.clone());
    flaky.attempt()
}

#[tracing::instrument(skip(service, flaky), ret)]
#[retry(max = 3, base = "1ms", stats = false)]
async fn instrumented_async_method(
    service: &mut Service,
    input: String,
    flaky: &Flaky,
) -> Result<u32, ToolError> {
    service.calls += 1;
    tokio::task::yield_now().await;
    flaky.attempt()?;
    Ok(service.calls + u32::try_from(input.len()).unwrap())
}

impl Service {
    #[tracing::instrument(skip(self))]
    #[retry(max = 3, base = "1ms", stats = false)]
    async fn instrumented(&mut self, input: String) -> Result<u32, ToolError> {
        self.calls += 1;
        self.flaky.attempt()?;
        Ok(self.calls + u32::try_from(input.len()).unwrap())
    }
}

#[test]
fn instrument_above_retry_spans_every_attempt_of_a_sync_fn() {
    let flaky = Flaky::new(2);
    let mut log = Vec::new();
    let (result, (spans, events)) =
        counted(|| instrumented_sync(String::from("a"), &mut log, &flaky));
    assert_eq!(result, Ok(2));
    assert_eq!(log, ["a", "a"], "the body ran once per attempt");
    assert_eq!(spans, 1, "one span for the call, not one per attempt");
    assert_eq!(
        events, 0,
        "`err` records the call's error, and there is none"
    );

    let flaky = Flaky::new(100);
    let mut log = Vec::new();
    let (result, (spans, events)) =
        counted(|| instrumented_sync(String::from("b"), &mut log, &flaky));
    assert_eq!(result, Err(ToolError::Flaky));
    assert_eq!(flaky.attempts(), 3);
    assert_eq!((spans, events), (1, 1), "one error event, for the call");
}

#[test]
fn instrument_above_retry_spans_every_attempt_of_an_async_fn() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let mut service = Service {
        flaky: Flaky::new(3),
        calls: 0,
    };
    let flaky = Flaky::new(2);
    let (result, (spans, events)) = counted(|| {
        runtime.block_on(instrumented_async_method(
            &mut service,
            String::from("ab"),
            &flaky,
        ))
    });
    assert_eq!(result, Ok(4));
    assert_eq!(
        service.calls, 2,
        "two attempts, each reborrowing the service"
    );
    assert_eq!((spans, events), (1, 1), "one span, one `ret` event");

    let (result, (spans, _)) =
        counted(|| runtime.block_on(service.instrumented(String::from("x"))));
    assert_eq!(result, Ok(6));
    assert_eq!(service.flaky.attempts(), 3);
    assert_eq!(spans, 1);
}
