//! Errors from other crates (`anyhow::Error`, `Box<dyn Error + Send +
//! Sync>`, `String`) cannot derive `Classify`: the recipe the README's
//! "Errors from other crates" and the "not Classify" note give, run.
use std::cell::Cell;

use tenacious::{Classify, ErrorClass, retry};

/// The error type of one's own, one variant per class that can be told apart.
#[derive(Debug, Classify)]
enum ToolError {
    /// Whatever the client library failed with: worth another try.
    #[classify(transient)]
    Client(anyhow::Error),
    /// A reply the model must fix: never retried, the message is the hint.
    #[classify(invalid, hint = "{0}")]
    Reply(String),
    /// A plugin's boxed error, known to be a configuration problem.
    #[classify(fatal, hint = "check the plugin's configuration: {0}")]
    Plugin(Box<dyn std::error::Error + Send + Sync>),
}

/// A client library that returns `anyhow::Result`.
fn client_call(calls: &Cell<u32>, fail_first: u32) -> anyhow::Result<String> {
    calls.set(calls.get() + 1);
    if calls.get() <= fail_first {
        anyhow::bail!("connection reset by peer");
    }
    Ok(String::from("42"))
}

#[retry(max = 3, base = "1us")]
fn answer(calls: &Cell<u32>, fail_first: u32) -> Result<u32, ToolError> {
    let reply = client_call(calls, fail_first).map_err(ToolError::Client)?;
    reply
        .parse()
        .map_err(|_| ToolError::Reply(format!("`{reply}` is not a number")))
}

#[retry(max = 3, base = "1us")]
fn load_plugin(calls: &Cell<u32>) -> Result<(), ToolError> {
    calls.set(calls.get() + 1);
    let boxed: Box<dyn std::error::Error + Send + Sync> = "no such plugin".into();
    Err(ToolError::Plugin(boxed))
}

#[test]
fn a_wrapped_anyhow_error_is_retried_as_its_variant_says() {
    let calls = Cell::new(0);
    assert_eq!(answer(&calls, 2).unwrap(), 42);
    assert_eq!(calls.get(), 3, "two client failures, then the answer");

    let calls = Cell::new(0);
    let error = answer(&calls, 5).unwrap_err();
    assert!(
        matches!(&error, ToolError::Client(inner) if inner.to_string() == "connection reset by peer")
    );
    assert_eq!(calls.get(), 3, "exhausted after max attempts");
}

#[test]
fn a_wrapped_boxed_error_classified_fatal_is_not_retried() {
    let calls = Cell::new(0);
    let error = load_plugin(&calls).unwrap_err();
    assert_eq!(calls.get(), 1);
    assert_eq!(error.classify(), ErrorClass::Fatal);
    assert_eq!(
        error.hint().as_deref(),
        Some("check the plugin's configuration: no such plugin")
    );
}

#[test]
fn a_string_error_becomes_a_hint() {
    let error = ToolError::Reply(String::from("`x` is not a number"));
    assert_eq!(error.classify(), ErrorClass::Invalid);
    assert_eq!(error.hint().as_deref(), Some("`x` is not a number"));
    assert_eq!(error.variant(), "Reply");
}
