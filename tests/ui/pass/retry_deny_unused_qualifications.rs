// The expansion passes the strictest rustc lints.
#![deny(unused_qualifications, unused, rust_2018_idioms, warnings)]

use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(max = 2, base = "1ms", on = Transient)]
fn sync_call(x: u32) -> Result<u32, Flaky> {
    Ok(x)
}

#[retry(max = 2, base = "1ms", on = Transient)]
async fn async_call(x: &str) -> Result<usize, Flaky> {
    Ok(x.len())
}

fn main() {
    let _ = sync_call(1);
    let _ = async_call("a");
}
