//! The task guard: verdicts, their order and their reasons.
#![cfg(feature = "agent")]
use std::borrow::Cow;
use std::time::Duration;

use tenacious_agent::agent::{
    Cost, Fingerprint, Repeat, TaskGuard, TaskGuardConfig, TaskLimit, Verdict,
};
use tenacious_runtime::{Classify, ErrorClass};

#[derive(Debug)]
struct Fail(ErrorClass);

impl Classify for Fail {
    fn classify(&self) -> ErrorClass {
        self.0
    }
    fn hint(&self) -> Option<Cow<'static, str>> {
        (self.0 == ErrorClass::Fatal).then_some(Cow::Borrowed("the token expired"))
    }
    fn variant(&self) -> &'static str {
        self.0.as_str()
    }
}

const TRANSIENT: Fail = Fail(ErrorClass::Transient);
const INVALID: Fail = Fail(ErrorClass::Invalid);
const FATAL: Fail = Fail(ErrorClass::Fatal);

fn reflect(tool: &str, class: ErrorClass, failures: u32) -> Verdict {
    Verdict::Reflect {
        tool: tool.to_owned(),
        class,
        failures,
        retry_in: None,
    }
}

#[test]
fn defaults() {
    let config = TaskGuardConfig::default();
    assert_eq!(config.get_max_rounds(), 10);
    assert_eq!(config.get_switch_after(), 3);
    assert_eq!(config.get_max_time(), None);
    assert_eq!(config.get_max_tokens(), None);
    assert_eq!(config.get_max_money_micros(), None);
}

#[test]
fn successes_continue_until_the_rounds_run_out() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new());
    for left in (1..10).rev() {
        assert_eq!(
            guard.succeeded("search"),
            Verdict::Continue { rounds_left: left }
        );
    }
    let last = guard.succeeded("search");
    assert_eq!(last, Verdict::OutOfBudget(TaskLimit::Rounds { max: 10 }));
    assert!(last.is_final());
    assert_eq!(last.reason(), "out of budget: all 10 rounds used");
    // Ignoring the verdict does not buy more rounds.
    assert_eq!(
        guard.succeeded("search"),
        Verdict::OutOfBudget(TaskLimit::Rounds { max: 10 })
    );
    assert_eq!(guard.rounds(), 11);
}

#[test]
fn a_failure_is_handed_back_to_the_model() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new());
    let verdict = guard.failed("search", "q=rust", &INVALID);
    assert_eq!(verdict, reflect("search", ErrorClass::Invalid, 1));
    assert!(!verdict.is_final());
    assert_eq!(
        verdict.to_string(),
        "`search` failed (invalid, 1 in a row): hand the observation to the model"
    );
}

#[test]
fn the_same_tool_failing_with_the_same_class_switches_direction() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new());
    // Different arguments each time: only tool + class repeats.
    assert_eq!(
        guard.failed("search", "q=1", &TRANSIENT),
        reflect("search", ErrorClass::Transient, 1)
    );
    assert_eq!(
        guard.failed("search", "q=2", &TRANSIENT),
        reflect("search", ErrorClass::Transient, 2)
    );
    let verdict = guard.failed("search", "q=3", &TRANSIENT);
    assert_eq!(
        verdict,
        Verdict::SwitchDirection {
            tool: "search".to_owned(),
            repeat: Repeat::SameClass(ErrorClass::Transient),
            failures: 3,
            retry_in: None,
        }
    );
    assert_eq!(
        verdict.reason(),
        "`search` failed 3 times in a row with transient errors: change approach, use another tool or other arguments"
    );
    assert_eq!(guard.switches(), 1);
}

#[test]
fn an_identical_call_failing_repeatedly_switches_direction_whatever_the_class() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new());
    let args = r#"{"id":42}"#;
    assert!(matches!(
        guard.failed("fetch", args, &TRANSIENT),
        Verdict::Reflect { .. }
    ));
    assert!(matches!(
        guard.failed("fetch", args, &INVALID),
        Verdict::Reflect { .. }
    ));
    let verdict = guard.failed("fetch", args, &Fail(ErrorClass::RateLimited));
    assert_eq!(
        verdict,
        Verdict::SwitchDirection {
            tool: "fetch".to_owned(),
            repeat: Repeat::SameCall(Fingerprint::of(args)),
            failures: 3,
            retry_in: None,
        }
    );
    assert_eq!(
        verdict.reason(),
        "the same `fetch` call failed 3 times in a row: change approach, do not repeat it"
    );
}

#[test]
fn the_same_tool_with_varying_classes_and_arguments_does_not_switch() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new());
    let classes = [
        ErrorClass::Transient,
        ErrorClass::Invalid,
        ErrorClass::RateLimited,
        ErrorClass::Invalid,
        ErrorClass::Transient,
    ];
    for (i, class) in classes.into_iter().enumerate() {
        let verdict = guard.failed("search", &i, &Fail(class));
        assert!(matches!(verdict, Verdict::Reflect { .. }), "{i}: {verdict}");
    }
    assert_eq!(guard.switches(), 0);
}

#[test]
fn flip_flopping_between_two_failing_approaches_is_caught() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new());
    let mut verdicts = Vec::new();
    for _ in 0..3 {
        verdicts.push(guard.failed("search", "web", &TRANSIENT));
        verdicts.push(guard.failed("lookup", "wiki", &TRANSIENT));
    }
    // Neither tool fails twice in adjacent rounds, yet each is told to
    // change approach on its third failure.
    assert!(
        verdicts[..4]
            .iter()
            .all(|v| matches!(v, Verdict::Reflect { .. }))
    );
    for (verdict, tool) in verdicts[4..].iter().zip(["search", "lookup"]) {
        assert!(
            matches!(verdict, Verdict::SwitchDirection { tool: t, failures: 3, .. } if t == tool),
            "{verdict}"
        );
    }
    assert_eq!(guard.switches(), 2);
}

#[test]
fn a_success_of_the_tool_restarts_its_count_and_only_its_own() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new());
    guard.failed("search", "a", &TRANSIENT);
    guard.failed("search", "a", &TRANSIENT);
    guard.failed("fetch", "x", &TRANSIENT);
    guard.failed("fetch", "x", &TRANSIENT);
    assert!(matches!(
        guard.succeeded("search"),
        Verdict::Continue { .. }
    ));
    assert_eq!(
        guard.failed("search", "a", &TRANSIENT),
        reflect("search", ErrorClass::Transient, 1)
    );
    // `fetch` kept its two failures.
    assert!(matches!(
        guard.failed("fetch", "x", &TRANSIENT),
        Verdict::SwitchDirection { failures: 3, .. }
    ));
}

#[test]
fn after_a_switch_the_count_starts_over() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new().max_rounds(100));
    let mut switched_at = Vec::new();
    for round in 1..=9 {
        if let Verdict::SwitchDirection { .. } = guard.failed("search", "same", &TRANSIENT) {
            switched_at.push(round);
        }
    }
    assert_eq!(switched_at, [3, 6, 9]);
    assert_eq!(guard.switches(), 3);
}

#[test]
fn a_fatal_error_escalates_at_once_and_for_good() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new().max_rounds(1));
    // Even on the last round, and before any streak: escalation comes first.
    let verdict = guard.failed("deploy", "prod", &FATAL);
    let expected = Verdict::Escalate {
        tool: "deploy".to_owned(),
        variant: "fatal",
        hint: Some(Cow::Borrowed("the token expired")),
    };
    assert_eq!(verdict, expected);
    assert!(verdict.is_final());
    assert_eq!(
        verdict.reason(),
        "`deploy` failed with a fatal error (fatal): stop and escalate to a human: the token expired"
    );
    assert_eq!(guard.succeeded("search"), expected);
    assert_eq!(guard.failed("search", "q", &TRANSIENT), expected);
}

#[test]
fn running_out_of_budget_wins_over_a_switch() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new().max_rounds(3));
    guard.failed("search", "q", &TRANSIENT);
    guard.failed("search", "q", &TRANSIENT);
    assert_eq!(
        guard.failed("search", "q", &TRANSIENT),
        Verdict::OutOfBudget(TaskLimit::Rounds { max: 3 })
    );
}

#[tokio::test(start_paused = true)]
async fn the_time_budget_follows_tokios_clock() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new().max_time(Duration::from_secs(30)));
    tokio::time::advance(Duration::from_secs(29)).await;
    assert_eq!(guard.elapsed(), Duration::from_secs(29));
    assert!(matches!(guard.succeeded("plan"), Verdict::Continue { .. }));
    assert_eq!(guard.limit_reached(), None);

    tokio::time::advance(Duration::from_secs(1)).await;
    let out = Verdict::OutOfBudget(TaskLimit::Time {
        limit: Duration::from_secs(30),
        elapsed: Duration::from_secs(30),
    });
    assert_eq!(guard.failed("search", "q", &TRANSIENT), out);
    assert_eq!(
        out.reason(),
        "out of budget: 30s elapsed of a 30s time limit"
    );
}

#[test]
fn the_cost_budgets_count_what_the_caller_charges() {
    let mut guard = TaskGuard::new(
        TaskGuardConfig::new()
            .max_tokens(1_000)
            .max_money_micros(500),
    );
    guard.charge(Cost::tokens(999) + Cost::money_micros(100));
    assert!(matches!(guard.succeeded("plan"), Verdict::Continue { .. }));
    guard.charge(Cost::tokens(1));
    assert_eq!(
        guard.succeeded("plan"),
        Verdict::OutOfBudget(TaskLimit::Tokens {
            limit: 1_000,
            spent: 1_000
        })
    );

    let mut guard = TaskGuard::new(TaskGuardConfig::new().max_money_micros(500));
    guard.charge(Cost::money_micros(499));
    assert_eq!(guard.limit_reached(), None);
    guard.charge(Cost::money_micros(2));
    let out = guard.failed("search", "q", &INVALID);
    assert_eq!(
        out,
        Verdict::OutOfBudget(TaskLimit::Money {
            limit_micros: 500,
            spent_micros: 501
        })
    );
    assert_eq!(
        out.reason(),
        "out of budget: 501 of 500 millionths of the money limit spent"
    );
    assert_eq!(
        guard.spent(),
        Cost {
            tokens: 0,
            money_micros: 501
        }
    );
}

#[test]
fn hostile_settings_and_charges_neither_panic_nor_wrap() {
    let config = TaskGuardConfig::new().max_rounds(0).switch_after(0);
    assert_eq!((config.get_max_rounds(), config.get_switch_after()), (1, 1));

    let mut guard = TaskGuard::new(TaskGuardConfig::new().switch_after(0).max_rounds(u32::MAX));
    assert!(matches!(
        guard.failed("search", "q", &TRANSIENT),
        Verdict::SwitchDirection { failures: 1, .. }
    ));

    let mut guard = TaskGuard::new(TaskGuardConfig::new().max_tokens(u64::MAX));
    guard.charge(Cost::tokens(u64::MAX));
    guard.charge(Cost::tokens(u64::MAX));
    assert_eq!(guard.spent().tokens, u64::MAX);
    assert!(guard.succeeded("plan").is_final());

    // A zero budget is spent before anything starts.
    let guard = TaskGuard::new(TaskGuardConfig::new().max_tokens(0));
    assert_eq!(
        guard.limit_reached(),
        Some(TaskLimit::Tokens { limit: 0, spent: 0 })
    );
}

#[test]
fn record_dispatches_on_the_result() {
    let mut guard = TaskGuard::new(TaskGuardConfig::new());
    let ok: Result<&str, Fail> = Ok("hits");
    let err: Result<&str, Fail> = Err(INVALID);
    assert_eq!(
        guard.record("search", "q", &ok),
        Verdict::Continue { rounds_left: 9 }
    );
    assert_eq!(
        guard.record("search", "q", &err),
        reflect("search", ErrorClass::Invalid, 1)
    );
}

#[test]
fn fingerprints_tell_arguments_apart() {
    assert_eq!(Fingerprint::of("a"), Fingerprint::of(&"a".to_owned()));
    assert_ne!(Fingerprint::of("a"), Fingerprint::of("b"));
    assert_eq!(Fingerprint::of(&(1, "x")), Fingerprint::of(&(1, "x")));
    assert_eq!(Fingerprint::of("a").to_string().len(), 16);
}

mod stopped_calls {
    //! `failed_call`: what the call layer's `Failure` says beyond its last
    //! error — why it stopped, and how long to wait.
    use super::*;
    use serde_json::json;
    use tenacious_agent::agent::CanonicalJson;
    use tenacious_runtime::{Breaker, Cooldown, Failure, Jitter, Policy, StopReason};

    /// An error with a class and, maybe, a server hint.
    #[derive(Debug, Clone, Copy)]
    struct Hinted(ErrorClass, Option<Duration>);

    impl Classify for Hinted {
        fn classify(&self) -> ErrorClass {
            self.0
        }
        fn retry_after(&self) -> Option<Duration> {
            self.1
        }
    }

    fn failure(policy: Policy, errors: &[Hinted]) -> Failure<Hinted> {
        let mut errors = errors.iter().copied();
        policy
            .retry_blocking_failure(|| Err::<(), _>(errors.next().expect("one error per attempt")))
            .unwrap_err()
    }

    /// A breaker open from now on: one attempt of a call (max 1) with a
    /// transient failure trips it; a second call's retry is then refused.
    fn circuit_open() -> Failure<Hinted> {
        let breaker: &'static Breaker = Box::leak(Box::new(Breaker::new().min_throughput(1)));
        let policy = Policy::new().max(3).base(Duration::ZERO).guard(breaker);
        let failure = failure(policy, &[Hinted(ErrorClass::Transient, None); 3]);
        assert_eq!(failure.stop_reason(), StopReason::CircuitOpen);
        failure
    }

    #[test]
    fn an_open_circuit_switches_direction_at_once() {
        let failure = circuit_open();
        let mut guard = TaskGuard::new(TaskGuardConfig::new());
        let verdict = guard.failed_call("chat", "hello", &failure);
        // The breaker's word on when it admits again: the rest of its
        // 15 s break (on the system's clock, a little of it gone).
        let retry_in = verdict.retry_in().expect("the breaker says when");
        assert!(
            retry_in > Duration::from_secs(14) && retry_in <= Duration::from_secs(15),
            "{retry_in:?}"
        );
        assert_eq!(
            verdict,
            Verdict::SwitchDirection {
                tool: "chat".to_owned(),
                repeat: Repeat::CircuitOpen,
                failures: 1,
                retry_in: Some(retry_in),
            }
        );
        assert_eq!(guard.switches(), 1);
        let reason = verdict.reason();
        assert!(
            reason.starts_with(
                "`chat`'s provider is failing and its circuit breaker is open: take another route (another tool or provider), do not call it again now; wait "
            ),
            "{reason}"
        );
        // A wait the loop knows better replaces it.
        let verdict = verdict.with_retry_in(Duration::from_secs(15));
        assert_eq!(verdict.retry_in(), Some(Duration::from_secs(15)));
        assert!(
            verdict
                .reason()
                .ends_with("; wait 15s before calling it again")
        );
        // The same failure through `failed` (as a bare error) is a reflect:
        // the stop reason is what switches; the failure's wait is the
        // breaker's still.
        let mut guard = TaskGuard::new(TaskGuardConfig::new());
        assert_eq!(
            guard.failed("chat", "hello", &failure),
            reflect("chat", ErrorClass::Transient, 1).with_retry_in(retry_in)
        );
        // Out of budget still wins over the switch.
        let mut guard = TaskGuard::new(TaskGuardConfig::new().max_rounds(1));
        assert!(matches!(
            guard.record_call("chat", "hello", &Err::<(), _>(failure)),
            Verdict::OutOfBudget(_)
        ));
    }

    #[test]
    fn a_call_that_gave_up_on_a_rate_limit_says_how_long_to_wait() {
        let policy = Policy::new()
            .max(3)
            .base(Duration::ZERO)
            .jitter(Jitter::None)
            .max_retry_after(Duration::from_secs(1));
        let mut guard = TaskGuard::new(TaskGuardConfig::new().max_rounds(100));
        // A hint longer than the policy waits: `HintTooLong`.
        let too_long = failure(
            policy,
            &[Hinted(
                ErrorClass::RateLimited,
                Some(Duration::from_secs(30)),
            )],
        );
        assert_eq!(too_long.stop_reason(), StopReason::HintTooLong);
        assert_eq!(
            guard.failed_call("chat", "a", &too_long),
            Verdict::Reflect {
                tool: "chat".to_owned(),
                class: ErrorClass::RateLimited,
                failures: 1,
                retry_in: Some(Duration::from_secs(30)),
            }
        );
        // Exhausted on 250 ms rate limits: the last hint.
        let hinted = Hinted(ErrorClass::RateLimited, Some(Duration::from_millis(250)));
        let exhausted = failure(policy, &[hinted; 3]);
        assert_eq!(exhausted.stop_reason(), StopReason::Exhausted);
        let verdict = guard.failed_call("chat", "b", &exhausted);
        assert_eq!(verdict.retry_in(), Some(Duration::from_millis(250)));
        assert!(
            verdict
                .reason()
                .ends_with("; wait 250ms before calling it again"),
            "{verdict}"
        );
        // A transient error naming a wait (a 503 with Retry-After) too.
        let unavailable = Hinted(ErrorClass::Transient, Some(Duration::from_millis(1500)));
        assert_eq!(
            guard.failed("chat", "c", &unavailable).retry_in(),
            Some(Duration::from_millis(1500))
        );
        // No hint, a zero hint, or an invalid request: no wait.
        assert_eq!(
            guard
                .failed("chat", "d", &Hinted(ErrorClass::RateLimited, None))
                .retry_in(),
            None
        );
        assert_eq!(
            guard
                .failed(
                    "chat",
                    "e",
                    &Hinted(ErrorClass::RateLimited, Some(Duration::ZERO))
                )
                .retry_in(),
            None
        );
        assert_eq!(
            guard
                .failed(
                    "chat",
                    "f",
                    &Hinted(ErrorClass::Invalid, Some(Duration::from_secs(1)))
                )
                .retry_in(),
            None
        );
        // The third rate limit of the tool in a row switches direction,
        // still with the wait.
        let mut guard = TaskGuard::new(TaskGuardConfig::new());
        for args in ["x", "y"] {
            assert!(matches!(
                guard.failed("chat", args, &hinted),
                Verdict::Reflect { .. }
            ));
        }
        let verdict = guard.failed("chat", "z", &hinted);
        assert!(matches!(
            verdict,
            Verdict::SwitchDirection {
                repeat: Repeat::SameClass(ErrorClass::RateLimited),
                ..
            }
        ));
        assert_eq!(verdict.retry_in(), Some(Duration::from_millis(250)));
        // Other verdicts carry none, and keep none.
        let done = guard
            .succeeded("chat")
            .with_retry_in(Duration::from_secs(1));
        assert_eq!(done.retry_in(), None);
    }

    #[test]
    fn a_call_a_shared_cooldown_stopped_says_how_long_to_wait() {
        // Another call was told to wait 10 s: the cooldown is closed, and a
        // call with a second left cannot wait for it.
        let cooldown: &'static Cooldown = Box::leak(Box::new(Cooldown::new()));
        let long = Hinted(ErrorClass::RateLimited, Some(Duration::from_secs(10)));
        let _ = failure(Policy::new().max(1).guard(cooldown), &[long]);
        let short = Hinted(ErrorClass::RateLimited, Some(Duration::from_millis(100)));
        let policy = Policy::new()
            .max(3)
            .base(Duration::ZERO)
            .deadline(Duration::from_secs(1))
            .guard(cooldown);
        let stopped = failure(policy, &[short; 3]);
        assert_eq!(stopped.stop_reason(), StopReason::Cooldown);
        // It is told to come back when the cooldown reopens (the guard's
        // own `retry_in`), not after its own 100 ms hint.
        let mut guard = TaskGuard::new(TaskGuardConfig::new());
        let retry_in = guard.failed_call("chat", "a", &stopped).retry_in();
        assert!(
            retry_in.is_some_and(
                |wait| wait > Duration::from_secs(9) && wait <= Duration::from_secs(10)
            ),
            "{retry_in:?}"
        );
    }

    #[test]
    fn json_arguments_fingerprint_key_order_aside() {
        assert_eq!(
            Fingerprint::of_json(&json!({"a": 1, "b": 2})),
            Fingerprint::of_json(&json!({"b": 2, "a": 1}))
        );
        assert_ne!(
            Fingerprint::of_json(&json!({"a": 1})),
            Fingerprint::of_json(&json!({"a": 2}))
        );
        assert_eq!(
            Fingerprint::of(&CanonicalJson(&json!({"a": 1, "b": 2}))),
            Fingerprint::of_json(&json!({"b": 2, "a": 1}))
        );
        // The guard sees one call repeated, however the model orders keys.
        let mut guard = TaskGuard::new(TaskGuardConfig::new().switch_after(2));
        let first = json!({"query": "weather", "units": "metric"});
        let again: serde_json::Value =
            serde_json::from_str(r#"{ "units": "metric", "query": "weather" }"#).unwrap();
        let invalid = Hinted(ErrorClass::Invalid, None);
        guard.failed("search", &CanonicalJson(&first), &invalid);
        assert_eq!(
            guard.failed("search", &CanonicalJson(&again), &TRANSIENT),
            Verdict::SwitchDirection {
                tool: "search".to_owned(),
                repeat: Repeat::SameCall(Fingerprint::of_json(&first)),
                failures: 2,
                retry_in: None,
            }
        );
    }
}
