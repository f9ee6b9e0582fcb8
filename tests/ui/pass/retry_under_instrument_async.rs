// `#[tracing::instrument]` above `#[retry]` on async fns: instrument expands
// first and moves the body into `async move { .. }`; `#[retry]` retries the
// user's body inside it, so owned and `&mut` arguments and `&mut self`
// work, and the one span covers every attempt.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[tracing::instrument]
#[retry(base = "1ms")]
async fn owned(name: String) -> Result<usize, Flaky> {
    Ok(name.len())
}

#[tracing::instrument(skip(out), err(Debug), ret)]
#[retry(base = "1ms")]
async fn unique(name: String, out: &mut Vec<String>) -> Result<usize, Flaky> {
    out.push(name.clone());
    Ok(out.len())
}

#[tracing::instrument(err(Debug))]
#[retry(base = "1ms")]
async fn with_err(name: String) -> Result<usize, Flaky> {
    Ok(name.len())
}

#[tracing::instrument(ret)]
#[retry(base = "1ms")]
async fn with_ret(count: &mut u32) -> Result<u32, Flaky> {
    *count += 1;
    Ok(*count)
}

#[derive(Debug)]
struct Client {
    calls: u32,
}

impl Client {
    #[tracing::instrument(skip(self), err(Debug), ret)]
    #[retry(base = "1ms")]
    async fn call(&mut self, input: String) -> Result<u32, Flaky> {
        self.calls += 1;
        Ok(self.calls + u32::try_from(input.len()).unwrap_or(0))
    }

    #[tracing::instrument]
    #[retry(base = "1ms")]
    async fn plain(&mut self) -> Result<u32, Flaky> {
        self.calls += 1;
        Ok(self.calls)
    }
}

fn assert_send<T: Send>(_: &T) {}

fn main() {
    let future = owned(String::from("a"));
    assert_send(&future);
    let mut out = Vec::new();
    let _ = unique(String::from("b"), &mut out);
    let _ = with_err(String::from("c"));
    let mut count = 0;
    let _ = with_ret(&mut count);
    let mut client = Client { calls: 0 };
    let future = client.call(String::from("d"));
    assert_send(&future);
    drop(future);
    let _ = client.plain();
}
