// `#[cfg]` and `#[cfg_attr]` on the arguments of a retried fn: an argument
// configured out is gone from everything the expansion writes about the
// arguments (the fingerprint of a nested call's key among them), one kept
// is there, and a `cfg_attr` applies as it does on any fn.
use async_trait::async_trait;
use futures_util::Stream;
use tenacious::{Classify, Elapsed, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<Elapsed> for Flaky {
    fn from(_: Elapsed) -> Self {
        Flaky
    }
}

#[retry(base = "1ms")]
fn sync_fn(
    #[cfg(any())] x: u32,
    #[cfg(all())] y: u32,
    #[cfg_attr(all(), allow(unused))] z: u32,
) -> Result<u32, Flaky> {
    Ok(y)
}

#[retry(base = "1ms")]
async fn async_fn(
    #[cfg(any())] x: u32,
    #[cfg(all())] y: u32,
    #[cfg_attr(all(), allow(unused))] z: u32,
) -> Result<u32, Flaky> {
    Ok(y)
}

// Only configured-out arguments: nothing is left to fingerprint.
#[retry(base = "1ms")]
fn only_configured_out(#[cfg(any())] x: u32, #[cfg(any())] (a, b): (u8, u8)) -> Result<(), Flaky> {
    Ok(())
}

struct Client {
    base: u32,
}

impl Client {
    #[retry(base = "1ms")]
    fn method(
        &self,
        #[cfg(any())] x: u32,
        #[cfg(all())] y: u32,
        #[cfg_attr(all(), allow(unused))] z: u32,
    ) -> Result<u32, Flaky> {
        Ok(self.base + y)
    }

    #[retry(base = "1ms")]
    async fn async_method(
        &mut self,
        #[cfg(any())] x: u32,
        #[cfg(all())] y: u32,
        #[cfg_attr(all(), allow(unused))] z: u32,
    ) -> Result<u32, Flaky> {
        self.base += 1;
        Ok(self.base + y)
    }

    #[retry(base = "1ms")]
    async fn stream(
        &self,
        #[cfg(any())] x: u32,
        #[cfg(all())] y: u32,
        #[cfg_attr(all(), allow(unused))] z: u32,
    ) -> Result<impl Stream<Item = Result<u32, Flaky>> + Send + 'static, Flaky> {
        Ok(futures_util::stream::iter([Ok(self.base + y)]))
    }
}

// Under `#[async_trait]`, which forwards an argument's `#[cfg]` to its move
// into the boxed future.
#[async_trait]
trait Tool {
    async fn call(&self, #[cfg(any())] x: u32, #[cfg(all())] y: u32) -> Result<u32, Flaky>;
}

#[async_trait]
impl Tool for Client {
    #[retry(base = "1ms")]
    async fn call(&self, #[cfg(any())] x: u32, #[cfg(all())] y: u32) -> Result<u32, Flaky> {
        Ok(self.base + y)
    }
}

fn main() {
    assert_eq!(sync_fn(1, 2).unwrap(), 1);
    let _ = async_fn(1, 2);
    only_configured_out().unwrap();
    let mut client = Client { base: 10 };
    assert_eq!(client.method(1, 2).unwrap(), 11);
    let _ = client.async_method(1, 2);
    let _ = client.stream(1, 2);
    let _ = client.call(1);
}
