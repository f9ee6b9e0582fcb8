//! `#[classify(with = path)]`: a variant's only field, or the whole error
//! (on the type), classified by a fn returning `ErrorClass` or `Classified`.
#![warn(clippy::pedantic)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tenacious::{Classified, Classify, ErrorClass, Signals, retry};

/// What a provider answered, as a tool keeps it.
#[derive(Debug, Clone)]
struct Answer {
    code: &'static str,
    org: String,
    wait: Option<Duration>,
}

fn by_answer(answer: &Answer) -> Classified {
    match answer.code {
        "insufficient_quota" => {
            Classified::fatal().with_hint(format!("organisation {} is out of credit", answer.org))
        }
        "rate_limit_exceeded" => Classified::rate_limited().with_retry_after(answer.wait),
        "overloaded_error" => Classified::transient()
            .with_hint("the provider is overloaded")
            .with_signals(Signals::NONE.overloaded(true)),
        _ => Classified::invalid(),
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // the derive hands the fn a reference
fn by_status(status: &u16) -> ErrorClass {
    match status {
        429 => ErrorClass::RateLimited,
        500.. => ErrorClass::Transient,
        _ => ErrorClass::Invalid,
    }
}

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(with = by_answer)]
    Provider(Answer),
    #[classify(with = by_status)]
    Status { code: u16 },
    #[classify(transient, hint = "the tool timed out")]
    Timeout,
}

fn answer(code: &'static str) -> Answer {
    Answer {
        code,
        org: "org-7".to_owned(),
        wait: Some(Duration::from_secs(2)),
    }
}

#[test]
fn a_variant_is_classified_by_its_field() {
    let spent = ToolError::Provider(answer("insufficient_quota"));
    assert_eq!(spent.classify(), ErrorClass::Fatal);
    assert_eq!(
        spent.hint().as_deref(),
        Some("organisation org-7 is out of credit")
    );
    assert_eq!(spent.retry_after(), None);
    assert_eq!(spent.variant(), "Provider");
    assert_eq!(spent.signals(), Signals::NONE);

    let limited = ToolError::Provider(answer("rate_limit_exceeded"));
    assert_eq!(limited.classify(), ErrorClass::RateLimited);
    assert_eq!(limited.retry_after(), Some(Duration::from_secs(2)));
    assert_eq!(limited.hint(), None);

    let busy = ToolError::Provider(answer("overloaded_error"));
    assert_eq!(busy.classify(), ErrorClass::Transient);
    assert!(busy.signals().is_overloaded());
    assert_eq!(busy.hint().as_deref(), Some("the provider is overloaded"));
}

#[test]
fn a_fn_returning_a_class_says_nothing_else() {
    let limited = ToolError::Status { code: 429 };
    assert_eq!(limited.classify(), ErrorClass::RateLimited);
    assert_eq!(limited.retry_after(), None);
    assert_eq!(limited.hint(), None);
    assert_eq!(limited.signals(), Signals::NONE);
    assert_eq!(limited.variant(), "Status");
    assert_eq!(
        ToolError::Status { code: 404 }.classify(),
        ErrorClass::Invalid
    );
}

#[test]
fn the_other_variants_answer_for_themselves() {
    let timeout = ToolError::Timeout;
    assert_eq!(timeout.classify(), ErrorClass::Transient);
    assert_eq!(timeout.hint().as_deref(), Some("the tool timed out"));
    assert_eq!(timeout.signals(), Signals::NONE);
    assert_eq!(timeout.variant(), "Timeout");
}

/// On a struct, the fn is handed the whole error: here an associated fn.
#[derive(Debug, Classify)]
#[classify(with = Self::classification)]
struct ProviderError {
    status: u16,
    code: Option<&'static str>,
}

impl ProviderError {
    fn classification(&self) -> Classified {
        match (self.status, self.code) {
            (_, Some("insufficient_quota")) => Classified::fatal(),
            (429, _) => Classified::rate_limited(),
            _ => Classified::new(ErrorClass::Transient),
        }
    }
}

#[test]
fn on_a_struct_the_fn_takes_the_whole_error() {
    let spent = ProviderError {
        status: 429,
        code: Some("insufficient_quota"),
    };
    assert_eq!(spent.classify(), ErrorClass::Fatal);
    assert_eq!(spent.variant(), "ProviderError");
    let limited = ProviderError {
        status: 429,
        code: None,
    };
    assert_eq!(limited.classify(), ErrorClass::RateLimited);
}

/// On an enum, the fn answers for every variant; `variant()` stays each
/// variant's name. The path may be quoted.
mod policy {
    use super::{CallError, Classified};
    use std::time::Duration;

    pub(super) fn classify_call(error: &CallError) -> Classified {
        match error {
            CallError::Timeout => Classified::transient(),
            CallError::Busy(wait) => Classified::rate_limited().with_retry_after(Some(*wait)),
            CallError::Unauthorized { .. } => {
                Classified::fatal().with_hint("the key was revoked; a human must issue a new one")
            }
        }
    }

    pub(super) const BUSY: Duration = Duration::from_millis(5);
}

#[derive(Debug, Classify)]
#[classify(with = "policy::classify_call")]
enum CallError {
    Timeout,
    Busy(Duration),
    #[allow(dead_code)]
    Unauthorized {
        key: &'static str,
    },
}

#[test]
fn on_an_enum_the_fn_answers_for_every_variant() {
    assert_eq!(CallError::Timeout.classify(), ErrorClass::Transient);
    assert_eq!(CallError::Timeout.variant(), "Timeout");
    let busy = CallError::Busy(policy::BUSY);
    assert_eq!(busy.classify(), ErrorClass::RateLimited);
    assert_eq!(busy.retry_after(), Some(policy::BUSY));
    assert_eq!(busy.variant(), "Busy");
    let revoked = CallError::Unauthorized { key: "sk-1" };
    assert_eq!(revoked.classify(), ErrorClass::Fatal);
    assert_eq!(
        revoked.hint().as_deref(),
        Some("the key was revoked; a human must issue a new one")
    );
    assert_eq!(revoked.variant(), "Unauthorized");
}

/// A generic field goes to a generic fn; the bounds the fn needs are the
/// type parameter's, written on the type (the derive adds none for it).
fn by_debug<E: std::fmt::Debug>(error: &E) -> ErrorClass {
    if format!("{error:?}").contains("quota") {
        ErrorClass::Fatal
    } else {
        ErrorClass::Transient
    }
}

#[derive(Debug, Classify)]
enum Layered<E: std::fmt::Debug> {
    #[classify(with = by_debug)]
    Inner(E),
}

#[test]
fn a_generic_field_goes_to_a_generic_fn() {
    assert_eq!(Layered::Inner("quota spent").classify(), ErrorClass::Fatal);
    assert_eq!(Layered::Inner(7_u8).classify(), ErrorClass::Transient);
}

/// `#[retry]` reads what the fn says: a spent quota is one attempt, a
/// rate limit is retried.
#[retry(max = 3, base = "1ms")]
fn call(attempts: &AtomicU32, code: &'static str) -> Result<(), ToolError> {
    attempts.fetch_add(1, Ordering::Relaxed);
    Err(ToolError::Provider(Answer {
        code,
        org: "org-7".to_owned(),
        wait: Some(Duration::from_millis(1)),
    }))
}

#[test]
fn retry_follows_the_fn() {
    let attempts = AtomicU32::new(0);
    assert!(call(&attempts, "insufficient_quota").is_err());
    assert_eq!(attempts.load(Ordering::Relaxed), 1);

    let attempts = AtomicU32::new(0);
    assert!(call(&attempts, "rate_limit_exceeded").is_err());
    assert_eq!(attempts.load(Ordering::Relaxed), 3);
}
