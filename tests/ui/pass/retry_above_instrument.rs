// `#[retry]` above `#[tracing::instrument]`: the retry loop expands first and
// instrument wraps it, so here too one span covers every attempt.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry(base = "1ms")]
#[tracing::instrument(err(Debug), ret)]
fn sync_fn(name: String, out: &mut Vec<String>) -> Result<usize, Flaky> {
    out.push(name.clone());
    Ok(out.len())
}

#[retry(base = "1ms")]
#[tracing::instrument]
async fn async_fn(count: &mut u32, name: String) -> Result<usize, Flaky> {
    *count += 1;
    Ok(name.len())
}

fn main() {
    let mut out = Vec::new();
    assert_eq!(sync_fn(String::from("a"), &mut out).unwrap(), 1);
    let mut count = 0;
    let _ = async_fn(&mut count, String::from("b"));
}
