use std::fmt::Debug;
use std::time::Duration;
use tenacious::{Classify, ErrorClass};

#[derive(Debug, Classify)]
enum Layered<'a, E, D: Debug, const N: usize>
where
    E: Debug,
{
    #[classify(transparent)]
    Inner(E),
    #[classify(invalid, hint = "bad input {input} ({detail:?})")]
    Input { input: &'a str, detail: D },
    #[classify(rate_limited)]
    Limited(#[classify(retry_after)] Duration, [u8; N]),
}

fn main() {
    let error: Layered<'_, std::io::Error, u8, 1> = Layered::Input {
        input: "x",
        detail: 3,
    };
    assert_eq!(error.classify(), ErrorClass::Invalid);
    assert_eq!(error.hint().as_deref(), Some("bad input x (3)"));
    let inner: Layered<'_, std::io::Error, u8, 1> =
        Layered::Inner(std::io::ErrorKind::ConnectionRefused.into());
    assert_eq!(inner.classify(), ErrorClass::Transient);
}
