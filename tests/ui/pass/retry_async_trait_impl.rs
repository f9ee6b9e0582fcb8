// Methods of an `#[async_trait]` impl: async-trait expands first and leaves
// `Box::pin(async move { .. })`; `#[retry]` retries the inner block, so the
// arguments move into the future once and every attempt borrows them.
use async_trait::async_trait;
use tenacious::{Classify, ErrorClass, Failure, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[async_trait]
trait Tool {
    async fn shared(&self, input: &str) -> Result<usize, Flaky>;
    async fn unique(&mut self, input: String) -> Result<usize, Flaky>;
    async fn both(&mut self, owned: String, borrowed: &str) -> Result<String, Flaky>;
    async fn why(&self, input: &str) -> Result<usize, Failure<Flaky>>;
}

struct Echo {
    calls: usize,
}

#[async_trait]
impl Tool for Echo {
    #[retry(max = 2, base = "1ms")]
    async fn shared(&self, input: &str) -> Result<usize, Flaky> {
        Ok(input.len() + self.calls)
    }

    #[retry(base = "1ms")]
    async fn unique(&mut self, input: String) -> Result<usize, Flaky> {
        self.calls += 1;
        if self.calls < 2 {
            return Err(Flaky);
        }
        Ok(input.len())
    }

    #[retry(base = "1ms", on = Transient)]
    async fn both(&mut self, owned: String, borrowed: &str) -> Result<String, Flaky> {
        self.calls += 1;
        let text = format!("{owned}{borrowed}");
        Ok(text)
    }

    // The attempts return `Result<usize, Flaky>`; the call, `Failure<Flaky>`.
    #[retry(max = 2, base = "1ms")]
    async fn why(&self, input: &str) -> Result<usize, Failure<Flaky>> {
        if input.is_empty() {
            return Err(Flaky);
        }
        Ok(input.len())
    }
}

fn assert_send<T: Send>(_: &T) {}

fn main() {
    let mut echo = Echo { calls: 0 };
    let future = echo.unique(String::from("a"));
    assert_send(&future);
    drop(future);
    let _ = echo.shared("b");
    let _ = echo.both(String::from("c"), "d");
    let _ = echo.why("e");
}
