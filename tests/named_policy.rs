//! `#[retry(policy = NAME)]`: a `const` (or `static`) `Policy` shared by
//! many fns, the keys written beside it overriding its fields.
use std::cell::Cell;
use std::io;
use std::time::Duration;

use tenacious::{Failure, Jitter, Policy, StopReason, retry};

/// The provider's policy, written once.
const OPENAI: Policy = Policy::new()
    .max(5)
    .base(Duration::from_millis(1))
    .jitter(Jitter::None);

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

fn fail() -> Result<(), io::Error> {
    CALLS.with(|calls| calls.set(calls.get() + 1));
    Err(io::Error::from(io::ErrorKind::TimedOut))
}

#[retry(policy = OPENAI)]
fn chat() -> Result<(), Failure<io::Error>> {
    fail()
}

/// A `static` works too: the expansion reads it at compile time.
static ANTHROPIC: Policy = OPENAI.max(4);

#[retry(policy = ANTHROPIC)]
fn complete() -> Result<(), Failure<io::Error>> {
    fail()
}

#[retry(policy = OPENAI, max = 2)]
fn embed() -> Result<(), Failure<io::Error>> {
    fail()
}

#[test]
fn a_named_policy_applies_and_keys_beside_it_override_it() {
    CALLS.with(|c| c.set(0));
    let failure = chat().unwrap_err();
    assert_eq!(
        (failure.attempts().len(), failure.stop_reason()),
        (5, StopReason::Exhausted)
    );
    assert_eq!(failure.attempts()[0].delay, Some(Duration::from_millis(1)));
    let failure = embed().unwrap_err();
    assert_eq!(failure.attempts().len(), 2);
    assert_eq!(complete().unwrap_err().attempts().len(), 4);
    assert_eq!(CALLS.with(Cell::get), 11);
}
