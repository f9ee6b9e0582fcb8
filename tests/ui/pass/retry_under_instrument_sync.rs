// `#[tracing::instrument]` above `#[retry]` on sync fns: instrument expands
// first and, with `err` or `ret`, moves the body into a `move` closure;
// `#[retry]` retries the user's body inside it, so owned and `&mut`
// arguments and `&mut self` work, and the one span covers every attempt.
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
fn owned(name: String) -> Result<usize, Flaky> {
    Ok(name.len())
}

#[tracing::instrument(skip(out), err(Debug), ret)]
#[retry(base = "1ms")]
fn unique(name: String, out: &mut Vec<String>) -> Result<usize, Flaky> {
    out.push(name.clone());
    Ok(out.len())
}

#[tracing::instrument(err(Debug))]
#[retry(base = "1ms")]
fn with_err(name: String) -> Result<usize, Flaky> {
    Ok(name.len())
}

#[tracing::instrument(ret)]
#[retry(base = "1ms")]
fn with_ret(count: &mut u32) -> Result<u32, Flaky> {
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
    fn call(&mut self, input: String) -> Result<u32, Flaky> {
        self.calls += 1;
        Ok(self.calls + u32::try_from(input.len()).unwrap_or(0))
    }

    #[tracing::instrument]
    #[retry(base = "1ms")]
    fn plain(&mut self) -> Result<u32, Flaky> {
        self.calls += 1;
        Ok(self.calls)
    }
}

fn main() {
    assert_eq!(owned(String::from("a")).unwrap(), 1);
    let mut out = Vec::new();
    assert_eq!(unique(String::from("b"), &mut out).unwrap(), 1);
    assert_eq!(with_err(String::from("c")).unwrap(), 1);
    let mut count = 0;
    assert_eq!(with_ret(&mut count).unwrap(), 1);
    let mut client = Client { calls: 0 };
    assert_eq!(client.call(String::from("d")).unwrap(), 2);
    assert_eq!(client.plain().unwrap(), 2);
}
