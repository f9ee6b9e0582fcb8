// `#[tracing::instrument]` and `#[retry]` on an `#[async_trait]` method, in
// either order: async-trait expands first, then the upper attribute; the
// retried block is the user's body either way.
use async_trait::async_trait;
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[async_trait]
trait Tool {
    async fn above(&mut self, input: String) -> Result<usize, Flaky>;
    async fn below(&self, input: String) -> Result<usize, Flaky>;
}

#[derive(Debug)]
struct Echo {
    calls: usize,
}

#[async_trait]
impl Tool for Echo {
    #[tracing::instrument(skip(self), err(Debug), ret)]
    #[retry(base = "1ms")]
    async fn above(&mut self, input: String) -> Result<usize, Flaky> {
        self.calls += 1;
        Ok(input.len() + self.calls)
    }

    #[retry(base = "1ms")]
    #[tracing::instrument(skip(self))]
    async fn below(&self, input: String) -> Result<usize, Flaky> {
        Ok(input.len() + self.calls)
    }
}

fn assert_send<T: Send>(_: &T) {}

fn main() {
    let mut echo = Echo { calls: 0 };
    let future = echo.above(String::from("a"));
    assert_send(&future);
    drop(future);
    let future = echo.below(String::from("b"));
    assert_send(&future);
}
