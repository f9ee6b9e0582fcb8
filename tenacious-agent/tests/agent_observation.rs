//! `Observation`: the exact JSON a model reads for each class of failure.
#![cfg(feature = "agent")]
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use tenacious_agent::agent::{Observation, Status};
use tenacious_agent::chaos::{ChaosError, Fault};
use tenacious_runtime::{Classify, ErrorClass};

/// A tool error with every `Classify` answer settable.
#[derive(Debug)]
struct ToolError {
    message: &'static str,
    class: ErrorClass,
    retry_after: Option<Duration>,
    hint: Option<&'static str>,
}

impl ToolError {
    const fn new(message: &'static str, class: ErrorClass) -> Self {
        Self {
            message,
            class,
            retry_after: None,
            hint: None,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message)
    }
}

impl Classify for ToolError {
    fn classify(&self) -> ErrorClass {
        self.class
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
    fn hint(&self) -> Option<Cow<'static, str>> {
        self.hint.map(Cow::Borrowed)
    }
}

fn json(observation: &Observation) -> String {
    serde_json::to_string(observation).unwrap()
}

#[test]
fn transient() {
    let error = ToolError::new("connection reset by peer", ErrorClass::Transient);
    assert_eq!(
        json(&Observation::from_error("call_1", &error)),
        r#"{"tool_call_id":"call_1","status":"retry_later","error":"connection reset by peer","class":"transient","attempts":1,"retry_after_ms":null,"system_hint":"temporary failure: try again later, or reach the goal another way"}"#
    );
}

#[test]
fn rate_limited_with_a_retry_after() {
    let error = ToolError {
        retry_after: Some(Duration::from_millis(2500)),
        ..ToolError::new("429 Too Many Requests", ErrorClass::RateLimited)
    };
    assert_eq!(
        json(&Observation::from_error("call_2", &error)),
        r#"{"tool_call_id":"call_2","status":"wait_and_retry","error":"429 Too Many Requests","class":"rate_limited","attempts":1,"retry_after_ms":2500,"system_hint":"rate limited: wait 2500 ms before calling this tool again, or do other work meanwhile"}"#
    );
}

#[test]
fn rate_limited_without_a_retry_after() {
    let error = ToolError::new("429 Too Many Requests", ErrorClass::RateLimited);
    assert_eq!(
        json(&Observation::from_error("call_3", &error)),
        r#"{"tool_call_id":"call_3","status":"wait_and_retry","error":"429 Too Many Requests","class":"rate_limited","attempts":1,"retry_after_ms":null,"system_hint":"rate limited: wait before calling this tool again, or do other work meanwhile"}"#
    );
}

#[test]
fn invalid() {
    let error = ToolError::new("unknown field `qurey`", ErrorClass::Invalid);
    assert_eq!(
        json(&Observation::from_error("call_4", &error)),
        r#"{"tool_call_id":"call_4","status":"fix_input","error":"unknown field `qurey`","class":"invalid","attempts":1,"retry_after_ms":null,"system_hint":"the request was rejected: fix the arguments as the error says; the same call will fail again"}"#
    );
}

#[test]
fn fatal() {
    let error = ToolError::new("401 Unauthorized", ErrorClass::Fatal);
    assert_eq!(
        json(&Observation::from_error("call_5", &error)),
        r#"{"tool_call_id":"call_5","status":"escalate","error":"401 Unauthorized","class":"fatal","attempts":1,"retry_after_ms":null,"system_hint":"a fault a human must fix: stop, do not retry, and tell the user what failed"}"#
    );
}

#[test]
fn the_errors_own_hint_replaces_the_default() {
    let error = ToolError {
        hint: Some("the API key was revoked; ask the user for a new one"),
        ..ToolError::new("403 Forbidden", ErrorClass::Fatal)
    };
    let observation = Observation::from_error("call_6", &error);
    assert_eq!(
        observation.system_hint,
        "the API key was revoked; ask the user for a new one"
    );
    assert_eq!(observation.status, Status::Escalate);
}

#[test]
fn a_chaos_fault_reads_like_the_real_failure() {
    let error = ChaosError::from(Fault::RateLimited(Duration::from_secs(3)));
    assert_eq!(
        json(&Observation::from_error("call_7", &error)),
        r#"{"tool_call_id":"call_7","status":"wait_and_retry","error":"injected fault: rate limited, retry after 3s","class":"rate_limited","attempts":1,"retry_after_ms":3000,"system_hint":"rate limited: wait as long as the server asks, then retry"}"#
    );
}

#[test]
fn retry_after_rounds_up_to_whole_milliseconds_and_saturates() {
    let mut error = ToolError::new("slow down", ErrorClass::RateLimited);
    error.retry_after = Some(Duration::from_micros(1));
    assert_eq!(Observation::from_error("c", &error).retry_after_ms, Some(1));
    error.retry_after = Some(Duration::MAX);
    let observation = Observation::from_error("c", &error);
    assert_eq!(observation.retry_after_ms, Some(u64::MAX));
    assert!(observation.system_hint.contains(&u64::MAX.to_string()));
}

#[test]
fn every_class_round_trips_through_json() {
    for class in ErrorClass::ALL {
        let error = ToolError {
            retry_after: Some(Duration::from_millis(10)),
            ..ToolError::new("boom \"quoted\"\n", class)
        };
        let observation = Observation::from_error("call_9", &error);
        let back: Observation = serde_json::from_str(&json(&observation)).unwrap();
        assert_eq!(back, observation);
        assert_eq!(back.class, class);
        assert_eq!(back.status, Status::for_class(class));
    }
}

#[test]
fn an_unknown_class_or_status_is_rejected_with_the_valid_names() {
    let good = r#"{"tool_call_id":"x","status":"retry_later","error":"e","class":"transient","attempts":1,"retry_after_ms":null,"system_hint":"h"}"#;
    assert!(serde_json::from_str::<Observation>(good).is_ok());

    let bad_class = good.replace(r#""class":"transient""#, r#""class":"flaky""#);
    let error = serde_json::from_str::<Observation>(&bad_class)
        .unwrap_err()
        .to_string();
    assert!(error.contains("unknown variant `flaky`"), "{error}");
    assert!(error.contains("rate_limited"), "{error}");

    let bad_status = good.replace("retry_later", "give_up");
    assert!(serde_json::from_str::<Observation>(&bad_status).is_err());
}

#[test]
fn an_io_error_uses_its_display_and_class() {
    let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "peer hung up");
    let observation = Observation::from_error(String::from("call_10"), &reset);
    assert_eq!(observation.tool_call_id, "call_10");
    assert_eq!(observation.error, "peer hung up");
    assert_eq!(observation.class, ErrorClass::Transient);
    assert_eq!(observation.status, Status::RetryLater);
    // A trait object works too: the error type may be erased.
    let erased: &dyn ClassifyDisplay = &reset;
    assert_eq!(Observation::from_error("call_10", erased), observation);
}

trait ClassifyDisplay: Classify + fmt::Display {}
impl<T: Classify + fmt::Display> ClassifyDisplay for T {}

mod from_failure {
    use super::*;
    use tenacious_runtime::{Failure, Policy, StopReason};

    /// Runs `errors` in order through a policy that retries without waiting.
    fn failure(max: u32, errors: Vec<ToolError>) -> Failure<ToolError> {
        let mut errors = errors.into_iter();
        Policy::new()
            .max(max)
            .base(Duration::ZERO)
            .retry_blocking_failure(|| Err::<(), _>(errors.next().expect("one error per attempt")))
            .unwrap_err()
    }

    #[test]
    fn an_exhausted_transient_call_reports_every_attempt_and_the_last_error() {
        let failure = failure(
            3,
            vec![
                ToolError::new("connection reset", ErrorClass::Transient),
                ToolError::new("502 Bad Gateway", ErrorClass::Transient),
                ToolError::new("503 Service Unavailable", ErrorClass::Transient),
            ],
        );
        assert_eq!(failure.stop_reason(), StopReason::Exhausted);
        assert_eq!(
            json(&Observation::from_failure("call_11", &failure)),
            r#"{"tool_call_id":"call_11","status":"retry_later","error":"503 Service Unavailable","class":"transient","attempts":3,"retry_after_ms":null,"system_hint":"temporary failure: try again later, or reach the goal another way"}"#
        );
    }

    #[test]
    fn a_rate_limit_longer_than_the_policy_waits_is_handed_to_the_model() {
        let failure = failure(
            3,
            vec![ToolError {
                retry_after: Some(Duration::from_secs(300)),
                ..ToolError::new("429 Too Many Requests", ErrorClass::RateLimited)
            }],
        );
        assert_eq!(failure.stop_reason(), StopReason::HintTooLong);
        assert_eq!(
            json(&Observation::from_failure("call_12", &failure)),
            r#"{"tool_call_id":"call_12","status":"wait_and_retry","error":"429 Too Many Requests","class":"rate_limited","attempts":1,"retry_after_ms":300000,"system_hint":"rate limited: wait 300000 ms before calling this tool again, or do other work meanwhile"}"#
        );
    }

    #[test]
    fn a_fatal_error_after_transient_ones_escalates() {
        let failure = failure(
            5,
            vec![
                ToolError::new("timed out", ErrorClass::Transient),
                ToolError {
                    hint: Some("the API key was revoked"),
                    ..ToolError::new("401 Unauthorized", ErrorClass::Fatal)
                },
            ],
        );
        assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
        let observation = Observation::from_failure("call_13", &failure);
        assert_eq!(
            json(&observation),
            r#"{"tool_call_id":"call_13","status":"escalate","error":"401 Unauthorized","class":"fatal","attempts":2,"retry_after_ms":null,"system_hint":"the API key was revoked"}"#
        );
    }
}

mod stopped_by_a_shared_guard {
    //! A call a shared guard stopped reads as what the guard says, not as
    //! its last error's class.
    use super::*;
    use tenacious_runtime::{
        Admit, Breaker, Cooldown, Failure, Guard, NextAttempt, Outcome, Policy, StopReason,
    };

    /// A breaker that opens on the first transient failure; a call through
    /// it whose first attempt trips it, so its retry is refused.
    fn circuit_open() -> Failure<ToolError> {
        let breaker: &'static Breaker = Box::leak(Box::new(Breaker::new().min_throughput(1)));
        let failure = Policy::new()
            .max(3)
            .base(Duration::ZERO)
            .guard(breaker)
            .retry_blocking_failure(|| {
                Err::<(), _>(ToolError {
                    hint: Some("the server is busy, retry"),
                    ..ToolError::new("503 Service Unavailable", ErrorClass::Transient)
                })
            })
            .unwrap_err();
        assert_eq!(failure.stop_reason(), StopReason::CircuitOpen);
        assert!(breaker.is_open());
        failure
    }

    #[test]
    fn an_open_circuit_says_take_another_route() {
        let failure = circuit_open();
        let observation = Observation::from_failure("call_20", &failure);
        assert_eq!(observation.status, Status::SwitchDirection);
        // The breaker's own word on when it may admit again: the rest of
        // its 15 s break (on the system's clock, a little of it gone).
        let ms = observation.retry_after_ms.expect("the breaker says when");
        assert!((14_000..=15_000).contains(&ms), "{ms}");
        assert_eq!(
            json(&observation),
            format!(
                r#"{{"tool_call_id":"call_20","status":"switch_direction","error":"503 Service Unavailable","class":"transient","attempts":1,"retry_after_ms":{ms},"system_hint":"this tool's provider is failing and its circuit breaker is open: do not call it again now; take another route (another tool or provider), or try again in {ms} ms"}}"#
            )
        );
        // A wait the caller knows better replaces it.
        let observation = observation.with_retry_after(Duration::from_secs(15));
        assert_eq!(
            json(&observation),
            r#"{"tool_call_id":"call_20","status":"switch_direction","error":"503 Service Unavailable","class":"transient","attempts":1,"retry_after_ms":15000,"system_hint":"this tool's provider is failing and its circuit breaker is open: do not call it again now; take another route (another tool or provider), or try again in 15000 ms"}"#
        );
        let back: Observation = serde_json::from_str(&json(&observation)).unwrap();
        assert_eq!(back, observation);
    }

    #[test]
    fn a_shared_cooldown_says_wait_whatever_the_class() {
        // Another call was told to wait 10 s: the cooldown is closed.
        let cooldown: &'static Cooldown = Box::leak(Box::new(Cooldown::new()));
        let closing = Policy::new().max(1).guard(cooldown);
        let _ = closing.retry_blocking(|| {
            Err::<(), _>(ToolError {
                retry_after: Some(Duration::from_secs(10)),
                ..ToolError::new("429 Too Many Requests", ErrorClass::RateLimited)
            })
        });
        assert!(cooldown.is_closed());
        // This call has one second left: it cannot wait that long.
        let failure = Policy::new()
            .max(3)
            .base(Duration::ZERO)
            .deadline(Duration::from_secs(1))
            .guard(cooldown)
            .retry_blocking_failure(|| {
                Err::<(), _>(ToolError::new("connection reset", ErrorClass::Transient))
            })
            .unwrap_err();
        assert_eq!(failure.stop_reason(), StopReason::Cooldown);
        let observation = Observation::from_failure("call_21", &failure);
        // The cooldown says when it reopens (on the system's clock, a
        // little under 10 s from its closing).
        let wait = observation.retry_after_ms.expect("the cooldown says when");
        assert!((9_000..=10_000).contains(&wait), "{wait} ms");
        assert_eq!(
            json(&observation),
            format!(
                r#"{{"tool_call_id":"call_21","status":"wait_and_retry","error":"connection reset","class":"transient","attempts":1,"retry_after_ms":{wait},"system_hint":"the provider asked every caller to wait: wait {wait} ms before calling this tool again, or do other work meanwhile"}}"#
            )
        );
        let observation = observation.with_retry_after(Duration::from_millis(9_999));
        assert_eq!(observation.retry_after_ms, Some(9_999));
        assert_eq!(
            observation.system_hint,
            "the provider asked every caller to wait: wait 9999 ms before calling this tool again, or do other work meanwhile"
        );
    }

    /// Refuses every retry with `StopReason::Guard`.
    #[derive(Debug)]
    struct NoRetries;

    impl Guard for NoRetries {
        fn admit(&self, next: &NextAttempt) -> Admit {
            if next.attempt <= 1 {
                Admit::Go
            } else {
                Admit::Stop(StopReason::Guard)
            }
        }
        fn observe(&self, _: &Outcome) {}
    }

    #[test]
    fn another_guard_says_do_other_work() {
        static GUARD: NoRetries = NoRetries;
        let failure = Policy::new()
            .max(3)
            .guard(&GUARD)
            .retry_blocking_failure(|| {
                Err::<(), _>(ToolError::new("timed out", ErrorClass::Transient))
            })
            .unwrap_err();
        assert_eq!(failure.stop_reason(), StopReason::Guard);
        let observation = Observation::from_failure("call_22", &failure);
        assert_eq!(observation.status, Status::RetryLater);
        assert_eq!(
            observation.system_hint,
            "a shared limit on this tool stopped the retries: do other work, or try again later"
        );
    }

    #[test]
    fn with_retry_after_keeps_an_errors_own_hint() {
        let error = ToolError {
            hint: Some("the index is rebuilding"),
            ..ToolError::new("503", ErrorClass::Transient)
        };
        let observation =
            Observation::from_error("call_23", &error).with_retry_after(Duration::from_nanos(1));
        assert_eq!(observation.retry_after_ms, Some(1));
        assert_eq!(observation.system_hint, "the index is rebuilding");
        let plain =
            Observation::from_error("call_24", &ToolError::new("503", ErrorClass::Transient))
                .with_retry_after(Duration::from_millis(20));
        assert_eq!(
            plain.system_hint,
            "temporary failure: try again in 20 ms, or reach the goal another way"
        );
    }

    #[test]
    fn the_new_status_round_trips() {
        let text = serde_json::to_string(&Status::SwitchDirection).unwrap();
        assert_eq!(text, r#""switch_direction""#);
        assert_eq!(
            serde_json::from_str::<Status>(&text).unwrap(),
            Status::SwitchDirection
        );
        assert_eq!(Status::SwitchDirection.as_str(), "switch_direction");
    }
}
