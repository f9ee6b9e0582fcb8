//! `#[retry(check = path)]`: a bad `Ok` (an empty completion, truncated
//! JSON) becomes the error the check names, decided and counted as any
//! failed attempt.
use std::cell::Cell;

use tenacious::{Classify, ErrorClass, Failure, StopReason, retry};

#[derive(Debug, PartialEq, Classify)]
enum CompletionError {
    /// The model answered nothing: a retry usually does better.
    #[classify(transient)]
    Empty,
    /// The answer is not the JSON asked for: the decision layer must
    /// change the request, not resend it.
    #[classify(
        invalid,
        hint = "the answer was not complete JSON: ask for a shorter answer"
    )]
    TruncatedJson,
}

/// What a completion must be: some text, and JSON when it starts like it.
fn complete(text: &str) -> Result<(), CompletionError> {
    if text.trim().is_empty() {
        Err(CompletionError::Empty)
    } else if text.starts_with('{') && !text.trim_end().ends_with('}') {
        Err(CompletionError::TruncatedJson)
    } else {
        Ok(())
    }
}

thread_local! {
    static ANSWERS: Cell<&'static [&'static str]> = const { Cell::new(&[]) };
}

/// The model's next answer, from the script the test set.
fn next_answer() -> String {
    ANSWERS.with(|answers| {
        let script = answers.get();
        let (first, rest) = script.split_first().expect("an answer scripted");
        answers.set(rest);
        (*first).to_owned()
    })
}

#[retry(max = 4, base = "1ms", check = complete, stats = "check: complete")]
async fn completion() -> Result<String, Failure<CompletionError>> {
    Ok(next_answer())
}

/// [`completion`] with a statistics record of its own: the tests run on
/// threads side by side, and one counting the other's attempts in the
/// same record would be off by them.
#[retry(max = 4, base = "1ms", check = complete, stats = "check: truncated")]
async fn completion_truncated() -> Result<String, Failure<CompletionError>> {
    Ok(next_answer())
}

#[retry(max = 4, base = "1ms", check = complete)]
fn completion_sync() -> Result<String, CompletionError> {
    Ok(next_answer())
}

#[tokio::test(start_paused = true)]
async fn an_empty_answer_is_retried_and_counted_as_a_failure() {
    ANSWERS.with(|a| a.set(&["", "  ", "Paris"]));
    assert_eq!(completion().await.unwrap(), "Paris");
    let stats = tenacious::stats::snapshot();
    let record = stats.get("check: complete").expect("the fn's record");
    assert_eq!(
        (record.attempts(), record.retries(), record.recovered()),
        (3, 2, 1)
    );
    assert_eq!(record.errors()[0].variant, "Empty");
    assert_eq!(record.errors()[0].count, 2);
}

#[tokio::test(start_paused = true)]
async fn truncated_json_is_invalid_and_not_retried() {
    ANSWERS.with(|a| a.set(&["{\"city\": \"Par", "{\"city\": \"Paris\"}"]));
    let failure = completion_truncated().await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
    assert_eq!(*failure.last(), CompletionError::TruncatedJson);
    assert_eq!(failure.attempts().len(), 1);
    assert_eq!(failure.last().classify(), ErrorClass::Invalid);
}

#[test]
fn a_sync_fn_checks_too() {
    ANSWERS.with(|a| a.set(&["", "ok"]));
    assert_eq!(completion_sync().unwrap(), "ok");
}
