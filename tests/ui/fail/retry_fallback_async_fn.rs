// A fallback is called, not awaited: an `async fn` is one error on its
// path, with no suggestion to await the attribute.
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Down;

impl Classify for Down {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

async fn cached(_: Down) -> Result<String, Down> {
    Ok("cached".to_owned())
}

#[retry(fallback = cached)]
async fn forecast() -> Result<String, Down> {
    Err(Down)
}

fn main() {}
