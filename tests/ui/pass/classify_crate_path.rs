// A crate that re-exports tenacious under its own name points the derive at it.
mod toolkit {
    pub use tenacious as retry;
}

#[derive(Debug, tenacious::Classify)]
#[classify(crate = toolkit::retry)]
enum FetchError {
    #[classify(transient, hint = "try again")]
    Timeout,
}

#[derive(Debug, tenacious::Classify)]
#[classify(fatal, crate = "toolkit::retry")]
struct Broken;

fn main() {
    use tenacious::Classify;
    assert_eq!(
        FetchError::Timeout.classify(),
        tenacious::ErrorClass::Transient
    );
    assert_eq!(Broken.classify(), tenacious::ErrorClass::Fatal);
}
