// Methods of a trait impl (and a trait's provided method), sync and async.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

trait Tool {
    fn call(&mut self, input: &str) -> Result<String, Flaky>;
    async fn call_async(&self, input: &str) -> Result<String, Flaky>;

    #[retry(max = 2)]
    fn provided(&self) -> Result<u8, Flaky> {
        Ok(1)
    }
}

struct Echo {
    calls: usize,
}

impl Tool for Echo {
    #[retry(max = 4, base = "10ms")]
    fn call(&mut self, input: &str) -> Result<String, Flaky> {
        self.calls += 1;
        Ok(input.repeat(self.calls))
    }

    #[retry(on = Transient)]
    async fn call_async(&self, input: &str) -> Result<String, Flaky> {
        Ok(input.to_owned())
    }
}

fn main() {
    let mut echo = Echo { calls: 0 };
    assert_eq!(echo.call("a").unwrap(), "a");
    assert_eq!(echo.provided().unwrap(), 1);
    let _ = echo.call_async("b");
}
