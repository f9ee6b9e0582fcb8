//! `#[classify(refused)]`: the variant of a derived error a guard's refusal
//! becomes, so an open circuit stops a call before its first attempt.
use std::sync::atomic::{AtomicU32, Ordering};

use tenacious::{Breaker, BreakerState, Classify, ErrorClass, Refused, StopReason, retry};

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(refused)]
    Refused(Refused),
}

/// The same enum without the attribute (`transparent` answers as the
/// `Refused` does too, but does not make the type refusable).
#[derive(Debug, Classify)]
enum PlainError {
    #[classify(transparent)]
    Refused(Refused),
}

static PROVIDER: Breaker = Breaker::new().min_throughput(2);

#[retry(max = 1, breaker = PROVIDER)]
async fn call(attempts: &AtomicU32) -> Result<u32, ToolError> {
    attempts.fetch_add(1, Ordering::Relaxed);
    Err(ToolError::Timeout)
}

#[tokio::test(start_paused = true)]
async fn an_open_circuit_returns_the_refused_variant_without_an_attempt() {
    let attempts = AtomicU32::new(0);
    // Two transient failures: the breaker has seen enough, all of them bad.
    for _ in 0..2 {
        assert!(matches!(call(&attempts).await, Err(ToolError::Timeout)));
    }
    assert_eq!(attempts.load(Ordering::Relaxed), 2);
    assert_eq!(PROVIDER.state(), BreakerState::Open);

    let Err(ToolError::Refused(refused)) = call(&attempts).await else {
        panic!("the open circuit should refuse the call");
    };
    assert_eq!(refused.reason(), StopReason::CircuitOpen);
    assert_eq!(attempts.load(Ordering::Relaxed), 2, "no attempt was made");
}

#[test]
fn only_the_marked_enum_is_refusable() {
    let make = ToolError::refused().expect("a `refused` variant makes the type refusable");
    let made = make(Refused::new(StopReason::Cooldown));
    assert!(matches!(made, ToolError::Refused(r) if r.reason() == StopReason::Cooldown));
    assert!(PlainError::refused().is_none());
    let plain = PlainError::Refused(Refused::new(StopReason::CircuitOpen));
    assert_eq!(plain.classify(), ErrorClass::Transient);
    assert_eq!(
        plain.hint(),
        ToolError::Refused(Refused::new(StopReason::CircuitOpen)).hint()
    );
}

// An error type that cannot say it was refused under a guard written in
// the attribute is a compile error (`tests/ui/fail/guard_error_not_refusable.rs`):
// its first attempt would walk past an open breaker.

#[test]
fn the_refused_variant_answers_as_the_refused_does() {
    let refused = Refused::new(StopReason::CircuitOpen);
    let error = ToolError::Refused(refused);
    assert_eq!(error.classify(), refused.classify());
    assert_eq!(error.classify(), ErrorClass::Transient);
    assert_eq!(error.hint(), refused.hint());
    assert!(error.hint().is_some());
    assert_eq!(error.retry_after(), None);
    // The variant's own name, as for every other derived variant.
    assert_eq!(error.variant(), "Refused");
    assert_eq!(ToolError::Timeout.hint(), None);
    assert_eq!(ToolError::Timeout.variant(), "Timeout");
}

mod facade {
    pub use tenacious;
}

/// Through `crate = path`, and with any variant name and a generic type.
#[derive(Debug, Classify)]
#[classify(crate = facade::tenacious)]
enum Layered<E> {
    #[classify(transparent)]
    Inner(E),
    #[classify(refused)]
    Stopped(facade::tenacious::Refused),
}

#[test]
fn a_renamed_crate_and_a_generic_enum_are_refusable() {
    let make = Layered::<std::io::Error>::refused().expect("refusable");
    let stopped = make(Refused::new(StopReason::CircuitOpen));
    assert!(matches!(stopped, Layered::Stopped(_)));
    assert_eq!(stopped.classify(), ErrorClass::Transient);
    assert_eq!(stopped.variant(), "Stopped");
    let inner: Layered<std::io::Error> = Layered::Inner(std::io::ErrorKind::NotFound.into());
    assert_eq!(inner.classify(), ErrorClass::Invalid);
}
