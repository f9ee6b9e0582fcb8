// `impl Trait` in argument position, and in the `Ok` type of the return.
use std::fmt::Display;

use tenacious::{Classify, ErrorClass, retry};

#[derive(Debug)]
struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

#[retry]
fn describe(
    value: impl Display,
    items: impl IntoIterator<Item = u8> + Clone,
) -> Result<String, Flaky> {
    let sum: u32 = items.clone().into_iter().map(u32::from).sum();
    Ok(format!("{value}: {sum}"))
}

#[retry]
fn shown(n: u32) -> Result<impl Display, Flaky> {
    Ok(n)
}

#[retry]
async fn shown_later(parts: &[impl AsRef<str>]) -> Result<impl Display, Flaky> {
    Ok(parts.iter().map(|p| p.as_ref().len()).sum::<usize>())
}

fn main() {
    assert_eq!(describe("x", vec![1, 2]).unwrap(), "x: 3");
    assert_eq!(shown(4).unwrap().to_string(), "4");
    let _ = shown_later(&["a"]);
}
