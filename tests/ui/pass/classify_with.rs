// The expansion of `with` compiles without warnings under strict lints.
#![deny(
    warnings,
    unused_qualifications,
    unused_results,
    missing_debug_implementations
)]

use tenacious::{Classified, Classify, ErrorClass};

/// A provider's answer.
#[derive(Debug)]
pub struct Body(pub String);

fn by_body(body: &Body) -> Classified {
    if body.0.contains("insufficient_quota") {
        Classified::fatal().with_hint("add credit")
    } else {
        Classified::transient()
    }
}

/// An error.
#[derive(Debug, Classify)]
pub enum ToolError {
    /// Classified by its body.
    #[classify(with = by_body)]
    Provider(Body),
    /// Timed out.
    #[classify(transient)]
    Timeout,
}

/// An error classified as a whole.
#[derive(Debug, Classify)]
#[classify(with = Self::class_of)]
pub struct Whole {
    /// Its status.
    pub status: u16,
}

impl Whole {
    fn class_of(&self) -> ErrorClass {
        if self.status == 429 {
            ErrorClass::RateLimited
        } else {
            ErrorClass::Invalid
        }
    }
}

fn main() {
    let _ = ToolError::Provider(Body("insufficient_quota".to_owned())).classify();
    let _ = ToolError::Timeout.classify();
    let _ = Whole { status: 429 }.hint();
}
