// A provided (default) method of an `#[async_trait]` trait is retried too.
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
trait Tool: Sync {
    fn name(&self) -> &str;

    #[retry(max = 2, base = "1ms")]
    async fn describe(&self, prefix: String) -> Result<String, Flaky> {
        Ok(format!("{prefix}{}", self.name()))
    }
}

struct Echo;

impl Tool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
}

fn main() {
    let _ = Echo.describe(String::from("tool: "));
}
