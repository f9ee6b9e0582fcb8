use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry]
fn call() -> impl std::future::Future<Output = Result<(), Flaky>> {
    async { Ok(()) }
}

fn main() {}
