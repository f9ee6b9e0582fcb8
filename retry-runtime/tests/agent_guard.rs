//! The task guard: verdicts, their order and their reasons.
#![cfg(feature = "agent")]
use std::borrow::Cow;
use std::time::Duration;

use tenacious_runtime::agent::{
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
