//! Policies from environment variables (feature `config`): set in this
//! process, each test under a prefix of its own, since the environment is
//! the whole process's.
use std::ffi::OsString;
use std::time::Duration;

use tenacious::config::Policies;
use tenacious::{Jitter, RetryOn};

/// Sets `vars` in this process's environment.
fn set(vars: &[(&str, &str)]) {
    for (name, value) in vars {
        // SAFETY: std serialises its own reads and writes of the
        // environment, and nothing in this test binary reads it otherwise
        // (no C library call that could, no other thread but the tests',
        // which go through std); each test sets names under its own prefix,
        // so none sees another's.
        unsafe { std::env::set_var(name, value) };
    }
}

#[test]
fn a_set_of_policies_reads_from_the_environment() {
    set(&[
        ("TENACIOUS_ENV1_POLICY_OPENAI_MAX", "5"),
        ("TENACIOUS_ENV1_POLICY_OPENAI_BASE", "500ms"),
        ("TENACIOUS_ENV1_POLICY_OPENAI_MAX_RETRY_AFTER", "1m30s"),
        ("TENACIOUS_ENV1_POLICY_OPENAI_JITTER", "equal"),
        ("TENACIOUS_ENV1_POLICY_OPENAI_ON", "RateLimited, Transient"),
        ("TENACIOUS_ENV1_POLICY_OPENAI_RESUME", "true"),
        ("TENACIOUS_ENV1_POLICY_OPENAI_BREAKER", "openai"),
        ("TENACIOUS_ENV1_POLICY_OPEN_AI_MINI_ON", "Transient"),
        ("TENACIOUS_ENV1_POLICY_OPEN_AI_MINI_BREAKER", "openai"),
        ("TENACIOUS_ENV1_BREAKER_OPENAI_OPEN_FOR", "30s"),
        ("TENACIOUS_ENV1_BREAKER_OPENAI_MIN_THROUGHPUT", "4"),
        ("TENACIOUS_ENV1_BREAKER_OPENAI_RATIO", "0.75"),
    ]);
    let set = Policies::from_env("TENACIOUS_ENV1").unwrap();
    assert_eq!(set.source(), "environment");
    assert_eq!(set.names().collect::<Vec<_>>(), ["open_ai_mini", "openai"]);
    let openai = set.require("openai").unwrap();
    assert_eq!(openai.get_max(), 5);
    assert_eq!(openai.get_base(), Duration::from_millis(500));
    assert_eq!(openai.get_max_retry_after(), Duration::from_secs(90));
    assert_eq!(openai.get_jitter(), Jitter::Equal);
    assert_eq!(openai.get_on(), RetryOn::DEFAULT);
    assert!(openai.get_resume());
    let breaker = openai.get_breaker().unwrap();
    assert_eq!(breaker.get_name(), "openai");
    assert_eq!(breaker.get_open_for(), Duration::from_secs(30));
    assert_eq!(breaker.get_min_throughput(), 4);
    assert_eq!(breaker.get_ratio(), 0.75);
    let mini = set.require("open_ai_mini").unwrap();
    assert_eq!(mini.get_on(), RetryOn::TRANSIENT);
    assert!(std::ptr::eq(mini.get_breaker().unwrap(), breaker));
    // A trailing `_` on the prefix reads the same variables.
    assert_eq!(Policies::from_env("TENACIOUS_ENV1_").unwrap().len(), 2);
}

#[test]
fn a_bad_variable_is_named_with_its_value() {
    set(&[
        ("TENACIOUS_ENV2_POLICY_OPENAI_MAXX", "3"),
        ("TENACIOUS_ENV2_POLICY_OPENAI_BASE", "200 ms"),
        ("TENACIOUS_ENV2_POLICY_OPENAI_ON", "Transient|Fatal"),
        ("TENACIOUS_ENV2_POLCY_SEARCH_MAX", "3"),
        ("TENACIOUS_ENV2_POLICY_MAX", "3"),
        ("TENACIOUS_ENV2_POLICY_SEARCH", "3"),
        ("TENACIOUS_ENV2_BUDGET_FLEET_CAPACITY", "lots"),
    ]);
    let err = Policies::from_env("TENACIOUS_ENV2").unwrap_err();
    let forms = "`TENACIOUS_ENV2_POLICY_<NAME>_<KEY>`, `TENACIOUS_ENV2_BUDGET_<NAME>_<KEY>`, \
                 `TENACIOUS_ENV2_COOLDOWN_<NAME>_<KEY>`, `TENACIOUS_ENV2_THROTTLE_<NAME>_<KEY>`, \
                 `TENACIOUS_ENV2_BREAKER_<NAME>_<KEY>`, `TENACIOUS_ENV2_CONCURRENCY_<NAME>_<KEY>`";
    let keys = "max, base, cap, jitter, on, max_retry_after, timeout, deadline, first_item, idle, \
                resume, budget, breaker, cooldown, throttle, concurrency, nested";
    let expected = [
        format!(
            "environment: TENACIOUS_ENV2_POLCY_SEARCH_MAX: unknown kind `POLCY` after \
             `TENACIOUS_ENV2_`; did you mean `POLICY`? every variable under `TENACIOUS_ENV2_` is \
             one of {forms}"
        ),
        "environment: TENACIOUS_ENV2_POLICY_MAX: names no policy: write \
         `TENACIOUS_ENV2_POLICY_<NAME>_<KEY>`, like `TENACIOUS_ENV2_POLICY_OPENAI_MAX`"
            .to_owned(),
        format!(
            "environment: TENACIOUS_ENV2_POLICY_SEARCH: names no key: write \
             `TENACIOUS_ENV2_POLICY_<NAME>_<KEY>`, like `TENACIOUS_ENV2_POLICY_SEARCH_MAX`; the \
             keys of a policy are: {keys}"
        ),
        "environment: TENACIOUS_ENV2_BUDGET_FLEET_CAPACITY: \"lots\": `capacity` takes a whole \
         number of tokens: `capacity = 500` (a retry costs 5)"
            .to_owned(),
        "environment: TENACIOUS_ENV2_POLICY_OPENAI_BASE: \"200 ms\": invalid duration: unknown unit \
         ` ms`; write a number and a unit, like \"200ms\", \"1.5s\", \"2m\" or \"1m30s\" (units: h, \
         m, s, ms, us, ns)"
            .to_owned(),
        format!(
            "environment: TENACIOUS_ENV2_POLICY_OPENAI_MAXX: unknown key `maxx`; did you mean \
             `max`? the keys are: {keys}"
        ),
        "environment: TENACIOUS_ENV2_POLICY_OPENAI_ON: \"Fatal\": `Fatal` errors are never \
         retried: a human must fix the cause; classify the variant `transient` if a retry can \
         succeed (`when` can only narrow `on`, not widen it)"
            .to_owned(),
        "environment: TENACIOUS_ENV2_BUDGET_FLEET_*: no policy names this budget; name it in one, \
         like `budget = \"fleet\"`, or remove it"
            .to_owned(),
    ];
    assert_eq!(err.to_string(), expected.join("\n"));
    assert_eq!(err.problems()[4].key(), "TENACIOUS_ENV2_POLICY_OPENAI_BASE");
    assert_eq!(err.problems()[4].value(), Some("\"200 ms\""));
}

#[test]
fn variables_under_another_prefix_are_not_read() {
    set(&[
        ("TENACIOUS_ENV3X_POLICY_A_MAX", "0"),
        ("TENACIOUS_ENV3_POLICY_A_MAX", "2"),
    ]);
    let set = Policies::from_env("TENACIOUS_ENV3").unwrap();
    assert_eq!(set.require("a").unwrap().get_max(), 2);
    assert!(Policies::from_env("TENACIOUS_ENV_NONE").unwrap().is_empty());
}

#[cfg(unix)]
#[test]
fn names_and_values_that_are_not_utf8_are_problems() {
    use std::os::unix::ffi::OsStringExt;

    let not_utf8 = |bytes: &[u8]| OsString::from_vec(bytes.to_vec());
    let err = Policies::from_vars(
        "T",
        [
            (not_utf8(b"T_POLICY_A\xff_MAX"), not_utf8(b"3")),
            (not_utf8(b"T_POLICY_A_BASE"), not_utf8(b"2\xb5s")),
            (not_utf8(b"OTHER\xff"), not_utf8(b"\xff")),
        ],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "environment: T_POLICY_A_BASE: \"2\u{fffd}s\": the value is not UTF-8\n\
         environment: T_POLICY_A\u{fffd}_MAX: the variable's name is not UTF-8; name it in ASCII, \
         like `TENACIOUS_POLICY_OPENAI_MAX`"
    );
}

#[test]
fn hostile_values_from_the_environment_are_problems_not_panics() {
    let huge = "9".repeat(100_000);
    let err = Policies::from_vars(
        "T",
        [
            ("T_POLICY_A_MAX".to_owned(), huge.clone()),
            ("T_POLICY_A_BASE".to_owned(), format!("{huge}h")),
            ("T_POLICY_A_ON".to_owned(), ",,|".to_owned()),
            ("T_THROTTLE_B_MIN_RATE".to_owned(), "NaN".to_owned()),
            ("T_BREAKER_µ_RATIO".to_owned(), "0.5".to_owned()),
            ("T_POLICY_É_MAX".to_owned(), "1".to_owned()),
        ],
    )
    .unwrap_err();
    assert!(err.to_string().len() < 4_000, "{err}");
    let keys: Vec<_> = err.problems().iter().map(|p| p.key()).collect();
    assert_eq!(
        keys,
        [
            "T_POLICY_A_BASE",
            "T_POLICY_A_MAX",
            "T_POLICY_A_ON",
            "T_THROTTLE_B_MIN_RATE",
            "T_BREAKER_µ_*",
            "T_THROTTLE_B_*",
        ],
        "{err}"
    );
}
