// `Result<T, Failure<E>>`: the body works in `E` (`?`, `when`, `notify`
// see `E`), the fn returns the failure with its story; any path to
// `Failure` works, and so do generics and `&mut self`.
use tenacious::{Classify, ErrorClass, Failure, RetryEvent, StopReason, retry};

#[derive(Debug, PartialEq)]
enum ParseError {
    Empty,
    NotANumber,
}

impl Classify for ParseError {
    fn classify(&self) -> ErrorClass {
        match self {
            ParseError::Empty => ErrorClass::Transient,
            ParseError::NotANumber => ErrorClass::Invalid,
        }
    }
}

impl From<std::num::ParseIntError> for ParseError {
    fn from(_: std::num::ParseIntError) -> Self {
        ParseError::NotANumber
    }
}

fn retry_empty(error: &ParseError) -> bool {
    *error == ParseError::Empty
}

fn log(error: &ParseError, event: &RetryEvent) {
    let _ = (error, event.attempt);
}

#[retry(max = 2, base = "1us", when = retry_empty, notify = log)]
fn parse(text: &str) -> Result<u32, Failure<ParseError>> {
    if text.is_empty() {
        return Err(ParseError::Empty);
    }
    Ok(text.parse::<u32>()?)
}

#[retry(base = "1ms")]
async fn generic<E: Classify>(result: fn() -> Result<u8, E>) -> Result<u8, tenacious::Failure<E>> {
    result()
}

struct Counter(u32);

impl Counter {
    #[retry(max = 3, base = "1us")]
    fn bump(&mut self) -> Result<u32, ::tenacious::Failure<ParseError>> {
        self.0 += 1;
        if self.0 < 2 {
            Err(ParseError::Empty)
        } else {
            Ok(self.0)
        }
    }
}

fn main() {
    assert_eq!(parse("7").unwrap(), 7);
    let failure = parse("x").unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
    let failure = parse("").unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(failure.into_inner(), ParseError::Empty);
    assert_eq!(Counter(0).bump().unwrap(), 2);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        assert_eq!(generic::<ParseError>(|| Ok(3)).await.unwrap(), 3);
    });
}
