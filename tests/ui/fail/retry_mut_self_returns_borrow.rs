// A `&mut self` method returning a borrow of `self`: each attempt borrows
// `self` mutably again, which the borrow checker cannot allow while an
// earlier attempt's result may be returned (the NLL loop limitation).
use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

struct Cache {
    value: String,
}

impl Cache {
    #[retry]
    fn refresh(&mut self) -> Result<&str, Flaky> {
        self.value.push('x');
        Ok(&self.value)
    }
}

fn main() {}
