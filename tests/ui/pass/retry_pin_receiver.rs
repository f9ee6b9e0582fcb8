// `self: Pin<&mut Self>` and `self: Pin<&Self>` are references: each attempt
// reborrows them (`self.as_mut()`), as with `&mut self`.
use std::pin::Pin;

use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Counter {
    calls: u32,
}

impl Counter {
    fn bump(self: Pin<&mut Self>) -> u32 {
        let this = self.get_mut();
        this.calls += 1;
        this.calls
    }

    #[retry(base = "1us")]
    fn pinned(mut self: Pin<&mut Self>) -> Result<u32, Flaky> {
        let calls = self.as_mut().bump();
        if calls < 3 { Err(Flaky) } else { Ok(calls) }
    }

    #[retry(base = "1us")]
    async fn pinned_async(mut self: Pin<&mut Self>) -> Result<u32, Flaky> {
        let calls = self.as_mut().bump();
        if calls < 6 { Err(Flaky) } else { Ok(calls) }
    }

    #[retry(base = "1us")]
    fn pinned_shared(self: Pin<&Self>) -> Result<u32, Flaky> {
        Ok(self.calls)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut counter = Counter { calls: 0 };
    let mut pinned = Pin::new(&mut counter);
    assert_eq!(pinned.as_mut().pinned().unwrap(), 3);
    assert_eq!(pinned.as_mut().pinned_async().await.unwrap(), 6);
    assert_eq!(pinned.as_ref().pinned_shared().unwrap(), 6);
}
