// `crate = path` reaches the runtime through a re-export of the facade.
mod facade {
    pub use tenacious as reexported;
}

use tenacious::{Classify, ErrorClass};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[tenacious::retry(crate = crate::facade::reexported)]
fn bare() -> Result<(), Flaky> {
    Ok(())
}

#[tenacious::retry(crate = "crate::facade::reexported")]
async fn quoted() -> Result<(), Flaky> {
    Ok(())
}

fn main() {
    bare().unwrap();
    let _ = quoted();
}
