//! Policies read from files (feature `config`): the fixtures under
//! `tests/fixtures/`, the messages a bad file gets, word for word, and
//! inputs no reading may panic on.
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use proptest::prelude::*;
use tenacious::config::{Policies, PolicyConfig};
use tenacious::{Jitter, Nested, Policy, RetryOn};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Every setting of every policy and guard of a set, for comparing two sets
/// whose guards are different objects.
fn summary(set: &Policies) -> String {
    let mut out = String::new();
    for (name, p) in set.iter() {
        writeln!(
            out,
            "{name}: max {} base {:?} cap {:?} {:?} {:?} hint {:?} timeout {:?} deadline {:?} \
             first {:?} idle {:?} resume {} {:?}",
            p.get_max(),
            p.get_base(),
            p.get_cap(),
            p.get_jitter(),
            p.get_on(),
            p.get_max_retry_after(),
            p.get_timeout(),
            p.get_deadline(),
            p.get_first_item(),
            p.get_idle(),
            p.get_resume(),
            p.get_nested(),
        )
        .unwrap();
        if let Some(b) = p.get_breaker() {
            writeln!(
                out,
                "  breaker {} {} {:?} {} {:?} {}",
                b.get_name(),
                b.get_ratio(),
                b.get_window(),
                b.get_min_throughput(),
                b.get_open_for(),
                b.get_probes()
            )
            .unwrap();
        }
        if let Some(c) = p.get_cooldown() {
            writeln!(out, "  cooldown {} {:?}", c.get_name(), c.get_spacing()).unwrap();
        }
        if let Some(t) = p.get_throttle() {
            writeln!(
                out,
                "  throttle {} {} {} {:?}",
                t.get_name(),
                t.get_min_rate(),
                t.get_max_rate(),
                t.get_probe_first()
            )
            .unwrap();
        }
        if let Some(b) = p.get_budget() {
            writeln!(out, "  budget {}", b.capacity()).unwrap();
        }
    }
    out
}

#[test]
fn the_toml_fixture_reads_into_policies_that_share_their_guards() {
    let set = Policies::from_toml_file(fixture("retry.toml")).unwrap();
    assert!(set.source().ends_with("tests/fixtures/retry.toml"));
    assert_eq!(
        set.names().collect::<Vec<_>>(),
        ["openai", "openai-stream", "search"]
    );
    assert_eq!(set.len(), 3);

    let openai = set.require("openai").unwrap();
    let expected = Policy::new()
        .max(5)
        .base(Duration::from_millis(500))
        .cap(Duration::from_secs(30))
        .jitter(Jitter::Full)
        .on(RetryOn::DEFAULT)
        .max_retry_after(Duration::from_secs(60))
        .timeout(Duration::from_secs(60))
        .deadline(Duration::from_secs(180))
        .cooldown(set.cooldown("openai").unwrap())
        .throttle(set.throttle("openai").unwrap())
        .breaker(set.breaker("openai").unwrap())
        .budget(set.budget("fleet").unwrap());
    assert_eq!(*openai, expected);

    let stream = set.get("openai-stream").unwrap();
    assert_eq!(stream.get_first_item(), Some(Duration::from_secs(10)));
    assert_eq!(stream.get_idle(), Some(Duration::from_secs(30)));
    assert!(stream.get_resume());
    assert!(stream.get_throttle().is_none());
    // One guard per name, whichever policies name it.
    assert!(std::ptr::eq(
        stream.get_cooldown().unwrap(),
        openai.get_cooldown().unwrap()
    ));
    assert!(std::ptr::eq(
        stream.get_breaker().unwrap(),
        openai.get_breaker().unwrap()
    ));
    let search = set.get("search").unwrap();
    assert_eq!(search.get_jitter(), Jitter::Decorrelated);
    assert_eq!(search.get_on(), RetryOn::TRANSIENT);
    assert_eq!(search.get_nested(), Nested::Retry);
    assert!(std::ptr::eq(
        search.get_budget().unwrap(),
        openai.get_budget().unwrap()
    ));

    let breaker = set.breaker("openai").unwrap();
    assert_eq!(breaker.get_name(), "openai");
    assert_eq!(breaker.get_ratio(), 0.25);
    assert_eq!(breaker.get_window(), Duration::from_secs(60));
    assert_eq!(breaker.get_min_throughput(), 20);
    assert_eq!(breaker.get_open_for(), Duration::from_secs(30));
    assert_eq!(breaker.get_probes(), 2);
    let throttle = set.throttle("openai").unwrap();
    assert_eq!(
        (throttle.get_min_rate(), throttle.get_max_rate()),
        (1.0, 50.5)
    );
    assert_eq!(throttle.get_probe_first(), Duration::from_secs(2));
    assert_eq!(
        set.cooldown("openai").unwrap().get_spacing(),
        Duration::from_millis(20)
    );
    assert_eq!(set.budget("fleet").unwrap().capacity(), 1000);
    assert!(set.budget("openai").is_none());
}

#[test]
fn the_json_fixture_is_the_same_set() {
    let toml = Policies::from_toml_file(fixture("retry.toml")).unwrap();
    let json = Policies::from_json_file(fixture("retry.json")).unwrap();
    assert_eq!(summary(&json), summary(&toml));
    assert!(summary(&json).contains("breaker openai 0.25 60s 20 30s 2"));
    // Read twice, a set has guards of its own.
    assert!(!std::ptr::eq(
        toml.breaker("openai").unwrap(),
        json.breaker("openai").unwrap()
    ));
}

#[test]
fn a_loaded_policy_explains_itself() {
    let set = Policies::from_toml_file(fixture("retry.toml")).unwrap();
    assert_eq!(
        set.require("openai").unwrap().explain().to_string(),
        "5 attempts, full jitter, base 500ms, cap 30s, on transient | rate_limited\n\
         attempt 1: at once\n\
         attempt 2: after 0..=500ms\n\
         attempt 3: after 0..=1s\n\
         attempt 4: after 0..=2s\n\
         attempt 5: after 0..=4s\n\
         worst case: 3m, the deadline (7s500ms of waiting + 5 × 1m timeout would be 5m7s500ms)\n\
         server hints: up to 1m each (max_retry_after), waited on top of the backoff; a longer \
         one stops retrying\n\
         guards (their waits not counted above): breaker \"openai\", cooldown \"openai\", \
         throttle \"openai\", a budget of 1000 tokens"
    );
    assert_eq!(
        set.require("search").unwrap().explain().to_string(),
        "3 attempts, decorrelated jitter, base 100ms, cap 2s, on transient\n\
         attempt 1: at once\n\
         attempt 2: after 100ms..=300ms\n\
         attempt 3: after 100ms..=900ms\n\
         worst case: 1s200ms of waiting (no timeout: attempts unbounded), deadline none\n\
         server hints: up to 2m each (max_retry_after), waited on top of the backoff; a longer \
         one stops retrying\n\
         guards (their waits not counted above): a budget of 1000 tokens"
    );
    assert_eq!(
        set.require("openai-stream")
            .unwrap()
            .explain()
            .to_string()
            .lines()
            .nth(6),
        Some("stream: first item within 10s, idle 30s, resumes after it commits")
    );
}

/// A file's problems, as its reader prints them.
fn problems_of_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("tenacious-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let err = Policies::from_toml_file(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    err.to_string()
        .replace(&dir.join("").display().to_string(), "")
}

fn problems(text: &str) -> String {
    Policies::from_toml_str(text).unwrap_err().to_string()
}

const FORMAT: &str = "write a number and a unit, like \"200ms\", \"1.5s\", \"2m\" or \"1m30s\" \
                      (units: h, m, s, ms, us, ns)";
const KEYS: &str = "max, base, cap, jitter, on, max_retry_after, timeout, deadline, first_item, \
                    idle, resume, budget, breaker, cooldown, throttle, concurrency, nested";

#[test]
fn a_bad_file_gets_every_problem_naming_the_file_the_key_and_the_value() {
    let text = "\
[policies.openai]
base = \"200 ms\"
maxx = 3
on = [\"Transient\", \"Fatal\"]
breaker = \"openai\"

[policies.search]
max = 0
timeout = \"30s\"
deadline = \"10s\"

[breakers.opnai]
ratio = 0.5
";
    let expected = [
        format!("retry.toml: policies.openai.base: \"200 ms\": invalid duration: unknown unit ` ms`; {FORMAT}"),
        format!("retry.toml: policies.openai.maxx: unknown key `maxx`; did you mean `max`? the keys are: {KEYS}"),
        "retry.toml: policies.openai.on: \"Fatal\": `Fatal` errors are never retried: a human must fix the \
         cause; classify the variant `transient` if a retry can succeed (`when` can only narrow `on`, not \
         widen it)".to_owned(),
        "retry.toml: policies.search.max: 0: `max` counts every attempt, the first included, so it is at \
         least 1; write `max = 1` for a single attempt without retries".to_owned(),
        "retry.toml: policies.search.timeout: \"30s\": `timeout` (30s) is longer than `deadline` (10s): no \
         attempt can run longer than the whole call; lower `timeout` or raise `deadline`".to_owned(),
        "retry.toml: breakers.opnai: no policy names this breaker; name it in one, like `breaker = \"opnai\"`, \
         or remove it".to_owned(),
    ];
    assert_eq!(problems_of_file("retry.toml", text), expected.join("\n"));
}

#[test]
fn what_retry_refuses_at_compile_time_is_refused_in_its_words() {
    for (text, expected) in [
        (
            "cap = \"100ms\"",
            "policies.a.cap: \"100ms\": `cap` (100ms) is below the default `base` (200ms): `cap` is \
             the ceiling of every backoff, so it must be at least `base`; raise `cap` or lower `base`",
        ),
        (
            "base = \"2s\"\ncap = \"1s\"",
            "policies.a.cap: \"1s\": `cap` (1s) is below `base` (2s): `cap` is the ceiling of every \
             backoff, so it must be at least `base`; raise `cap` or lower `base`",
        ),
        (
            "base = \"30s\"",
            "policies.a.base: \"30s\": `base` (30s) is above the default `cap` (20s): `cap` is the \
             ceiling of every backoff; raise it too, like `cap = \"5m\"`",
        ),
        (
            "base = \"0s\"",
            "policies.a.base: \"0s\": a zero `base` makes every backoff zero, so retries run in a \
             tight loop against a failing service; give a positive duration, like `base = \"200ms\"`",
        ),
        (
            "deadline = \"0ms\"",
            "policies.a.deadline: \"0ms\": a zero `deadline` leaves no time for any attempt; give the \
             longest the whole call may run, like `deadline = \"60s\"`, or remove the key",
        ),
        (
            "idle = \"1m\"\ndeadline = \"30s\"",
            "policies.a.idle: \"1m\": `idle` (1m) is longer than `deadline` (30s): the deadline ends \
             the stream first; lower `idle` or raise `deadline`",
        ),
        (
            "on = [\"Invalid\"]",
            "policies.a.on: \"Invalid\": `Invalid` errors are never retried: the same request fails \
             the same way; return the error so the caller (or the model) can fix the input, or \
             classify the variant `transient` if a retry can succeed (`when` can only narrow `on`, \
             not widen it)",
        ),
        (
            "on = [\"rate_limited\"]",
            "policies.a.on: \"rate_limited\": unknown class `rate_limited` in `on`; did you mean \
             `RateLimited`? `on` takes a list of the classes retried, `Transient`, `RateLimited` or \
             both: `on = [\"Transient\", \"RateLimited\"]`",
        ),
        (
            "on = [\"Transient\", \"Transient\"]",
            "policies.a.on: \"Transient\": `Transient` is listed twice in `on`; list it once",
        ),
        (
            "on = []",
            "policies.a.on: []: `on` lists no class, so no error would be retried; list \
             `Transient`, `RateLimited` or both, or write `max = 1` for a single attempt",
        ),
        (
            "jitter = \"ful\"",
            "policies.a.jitter: \"ful\": unknown jitter \"ful\"; did you mean \"full\"? expected one \
             of \"full\", \"equal\", \"decorrelated\", \"none\"",
        ),
        (
            "nested = \"twice\"",
            "policies.a.nested: \"twice\": unknown `nested` value \"twice\"; expected \"once\" (the \
             default: one attempt inside another retried call) or \"retry\" (retry as configured \
             even there)",
        ),
        (
            "retries = 2",
            "policies.a.retries: unknown key `retries`; did you mean `max`? (`max` counts every \
             attempt, the first included: `retries = 2` is `max = 3`); the keys are: max, base, \
             cap, jitter, on, max_retry_after, timeout, deadline, first_item, idle, resume, budget, \
             breaker, cooldown, throttle, concurrency, nested",
        ),
        (
            "when = \"is_retryable\"",
            "policies.a.when: `when` names a fn, which a config cannot hold; pass the predicate in \
             code, to `Policy::retry_with` (or `#[retry(when = ...)]`)",
        ),
    ] {
        assert_eq!(
            problems(&format!("[policies.a]\n{text}\n")),
            expected,
            "{text}"
        );
    }
}

#[test]
fn values_of_the_wrong_type_say_what_the_key_takes() {
    for (text, expected) in [
        (
            "[policies.a]\nbase = 200",
            "policies.a.base: 200: `base` takes a duration string with a unit: `base = \"200ms\"`",
        ),
        (
            "[policies.a]\nbase = 1979-05-27",
            "policies.a.base: a date-time: `base` takes a duration string with a unit: \
             `base = \"200ms\"`",
        ),
        (
            "[policies.a]\nmax = \"3\"",
            "policies.a.max: \"3\": `max` takes an integer, the total number of attempts: `max = 3`",
        ),
        (
            "[policies.a]\non = \"Transient\"",
            "policies.a.on: \"Transient\": `on` takes a list of the classes retried, `Transient`, \
             `RateLimited` or both: `on = [\"Transient\", \"RateLimited\"]`",
        ),
        (
            "[policies.a]\nresume = \"yes\"",
            "policies.a.resume: \"yes\": `resume` takes `true` or `false`: `resume = true`",
        ),
        (
            "[policies.a]\nbreaker = 3",
            "policies.a.breaker: 3: `breaker` takes the name of a shared breaker: `breaker = \
             \"openai\"` (its settings, if not the defaults, under `[breakers.openai]`)",
        ),
        (
            "[policies]\na = 3",
            "policies.a: 3: a policy takes a table of settings, like `max = 3`, not an integer",
        ),
        (
            "policies = [1]",
            "policies: [1]: `policies` takes a table of named policies, like `[policies.openai]`, \
             not a list",
        ),
        (
            "max = 3",
            "max: unknown key `max`: a set of policies names each one, with its settings under \
             `[policies.NAME]`; the keys are: policies, budgets, cooldowns, throttles, breakers, \
             concurrencies, routes",
        ),
        (
            "[policy.a]",
            "policy: unknown key `policy`; the keys are: policies, budgets, cooldowns, throttles, \
             breakers, concurrencies, routes",
        ),
        (
            "[policies.\"my.policy\"]\nmaxx = 1",
            "policies.\"my.policy\".maxx: unknown key `maxx`; did you mean `max`? the keys are: max, \
             base, cap, jitter, on, max_retry_after, timeout, deadline, first_item, idle, resume, \
             budget, breaker, cooldown, throttle, concurrency, nested",
        ),
        (
            "[policies.a]\nmax = ",
            "invalid TOML at line 2, column 7: string values must be quoted, expected literal string",
        ),
    ] {
        assert_eq!(problems(text), expected, "{text}");
    }
}

#[test]
fn guard_settings_are_checked_too() {
    assert_eq!(
        problems(
            "[policies.a]\nbreaker = \"b\"\nthrottle = \"t\"\nbudget = \"f\"\n\
             [breakers.b]\nratio = 2\nprobes = 70000\nmin_throughput = 0\nwindow = \"0s\"\ncolour = 1\n\
             [throttles.t]\nmax_rate = 0.1\n\
             [budgets.f]\ncapacity = -1\n"
        ),
        [
            "breakers.b.colour: unknown key `colour`; the keys are: ratio, window, min_throughput, \
             open_for, probes",
            "breakers.b.min_throughput: 0: `min_throughput` takes the fewest outcomes the breaker \
             weighs, a whole number at least 1: `min_throughput = 10`",
            "breakers.b.probes: 70000: `probes` takes the attempts let through while half-open, a \
             whole number from 1 to 65535: `probes = 1`",
            "breakers.b.ratio: 2: `ratio` takes the share of failures that opens the breaker, from \
             0 to 1: `ratio = 0.5`",
            "breakers.b.window: \"0s\": a zero `window` weighs no outcome, so the breaker never \
             opens; give how far back to weigh them, like `window = \"30s\"`",
            "budgets.f.capacity: -1: `capacity` takes a whole number of tokens: `capacity = 500` (a \
             retry costs 5)",
            "throttles.t.max_rate: 0.1: `max_rate` (0.1) is below the default `min_rate` (0.5): \
             the rate never goes under `min_rate`, so it would never grow at all; raise `max_rate` \
             or lower `min_rate`",
        ]
        .join("\n")
    );
    // A name with no settings gets the defaults; zero spacing and no
    // probe wait are settings, not mistakes.
    let set = Policies::from_toml_str(
        "[policies.a]\ncooldown = \"c\"\nthrottle = \"t\"\n[cooldowns.c]\nspacing = \"0s\"\n\
         [throttles.t]\nprobe_first = \"0s\"\nmax_rate = inf\n",
    )
    .unwrap();
    assert_eq!(set.cooldown("c").unwrap().get_spacing(), Duration::ZERO);
    assert_eq!(set.throttle("t").unwrap().get_max_rate(), f64::INFINITY);
    let defaults = Policies::from_toml_str("[policies.a]\nbreaker = \"b\"\n").unwrap();
    assert_eq!(
        defaults.breaker("b").unwrap().get_open_for(),
        Duration::from_secs(15)
    );
}

#[test]
fn hostile_values_are_problems_not_panics() {
    let long = "9".repeat(10_000);
    let key = "k".repeat(10_000);
    let text = format!(
        "[policies.a]\nmax = 9223372036854775807\nbase = \"18446744073709551616ns\"\n\
         cap = \"{long}h\"\ntimeout = \"1.5ns\"\ndeadline = \"{}s\"\n{key} = 1\n",
        "1".repeat(400)
    );
    let err = Policies::from_toml_str(&text).unwrap_err();
    let shown = err.to_string();
    assert_eq!(err.problems().len(), 6, "{shown}");
    assert!(shown.len() < 3_000, "long values are cut: {shown}");
    assert!(shown.contains("`max` must fit a `u32`"), "{shown}");
    assert!(shown.contains("the longest is about 584 years"), "{shown}");
    assert!(
        shown.contains("`1.5` is finer than a nanosecond"),
        "{shown}"
    );
    let problem = err.problems().iter().find(|p| p.key() == "policies.a.cap");
    assert!(problem.unwrap().value().unwrap().ends_with("…\""));

    // Not UTF-8, not a file, a number JSON cannot hold, a repeated key.
    let dir = std::env::temp_dir().join(format!("tenacious-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("latin1.toml");
    std::fs::write(&path, b"[policies.a]\nbase = \"2\xb5s\"\n").unwrap();
    let err = Policies::from_toml_file(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: it is not UTF-8 (at byte 22)", path.display())
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        Policies::from_json_str(r#"{"policies": {"a": {"max": 1e400}}}"#)
            .unwrap_err()
            .to_string(),
        "invalid JSON: number out of range at line 1 column 32"
    );
    assert_eq!(
        Policies::from_json_str(r#"{"policies": {"a": {"max": 1, "max": 2}}}"#)
            .unwrap_err()
            .to_string(),
        "policies.a.max: `max` is given twice; give it once"
    );
    assert_eq!(
        Policies::from_json_str(r#"{"policies": {"a": {"max": null}}}"#)
            .unwrap_err()
            .to_string(),
        "policies.a.max: null: `max` takes an integer, the total number of attempts: `max = 3`"
    );
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(Policies::from_json_str(&deep).is_err());
}

#[test]
fn a_policy_config_goes_onto_a_const_base_and_into_configs_of_your_own() {
    static BUDGET: tenacious::RetryBudget = tenacious::RetryBudget::new();
    const BASE: Policy = Policy::new()
        .base(Duration::from_secs(2))
        .cap(Duration::from_secs(4))
        .budget(&BUDGET);
    let config: PolicyConfig = toml::from_str("max = 7\ncap = \"8s\"\n").unwrap();
    let policy = config.apply(BASE).unwrap();
    assert_eq!(policy, BASE.max(7).cap(Duration::from_secs(8)));
    let low: PolicyConfig = toml::from_str("cap = \"1s\"\n").unwrap();
    assert_eq!(
        low.apply(BASE).unwrap_err().to_string(),
        "cap: `cap` (1s) is below the base policy's `base` (2s): `cap` is the ceiling of every \
         backoff, so it must be at least `base`; raise `cap` or lower `base`"
    );
    // A lone policy names no shared guard: it has no set to declare one.
    let err = toml::from_str::<PolicyConfig>("breaker = \"openai\"\n").unwrap_err();
    assert!(
        err.to_string().contains(
            "breaker: \"openai\": `breaker` names a shared breaker, which only a set of policies \
             declares (`tenacious::config::Policies`, under `[breakers.NAME]`); for a policy on \
             its own, add it in code with `Policy::breaker`"
        ),
        "{err}"
    );

    #[derive(serde::Deserialize)]
    struct App {
        #[allow(dead_code)]
        name: String,
        retry: Policies,
        #[serde(deserialize_with = "tenacious::config::deserialize_policy")]
        fallback: Policy,
    }
    let app: App = toml::from_str(
        "name = \"agent\"\nfallback = { max = 2 }\n[retry.policies.openai]\nmax = 4\n",
    )
    .unwrap();
    assert_eq!(app.retry.require("openai").unwrap().get_max(), 4);
    assert_eq!(app.fallback, Policy::new().max(2));
    let err = toml::from_str::<App>("name = \"agent\"\nfallback = { max = 0 }\n[retry]\n")
        .map(|_| ())
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("max: 0: `max` counts every attempt"),
        "{err}"
    );
}

#[test]
fn a_missing_name_says_which_there_are() {
    let set = Policies::from_toml_file(fixture("retry.toml")).unwrap();
    let missing = set.require("serch").unwrap_err();
    let shown = missing.to_string();
    assert!(
        shown.starts_with("no policy named \"serch\" in "),
        "{shown}"
    );
    assert!(
        shown.ends_with(
            "tests/fixtures/retry.toml; did you mean \"search\"? the policies are: openai, \
             openai-stream, search"
        ),
        "{shown}"
    );
    assert_eq!(
        set.require("anthropic").unwrap_err().to_string(),
        format!(
            "no policy named \"anthropic\" in {}; the policies are: openai, openai-stream, search",
            set.source()
        )
    );
    assert_eq!(
        Policies::from_toml_str("")
            .unwrap()
            .require("a")
            .unwrap_err()
            .to_string(),
        "no policy named \"a\": it holds no policy"
    );
}

proptest! {
    /// Whatever a duration string holds, reading it gives a value or a
    /// problem naming the key, never a panic.
    #[test]
    fn any_duration_string_reads_or_says_why(text in "\\PC{0,40}") {
        let doc = serde_json::json!({ "policies": { "a": { "deadline": text } } }).to_string();
        match Policies::from_json_str(&doc) {
            Ok(set) => {
                let deadline = set.get("a").unwrap().get_deadline().unwrap();
                prop_assert!(deadline > Duration::ZERO);
            }
            Err(err) => {
                prop_assert_eq!(err.problems().len(), 1);
                prop_assert_eq!(err.problems()[0].key(), "policies.a.deadline");
            }
        }
    }

    /// Documents of random keys and values: a set or problems, never a panic.
    #[test]
    fn random_documents_never_panic(
        entries in proptest::collection::vec(
            (
                prop_oneof![
                    Just("max"), Just("base"), Just("cap"), Just("jitter"), Just("on"),
                    Just("timeout"), Just("deadline"), Just("resume"), Just("breaker"),
                    Just("nested"), Just("zzz"),
                ],
                prop_oneof![
                    any::<i64>().prop_map(|n| n.to_string()),
                    any::<f64>().prop_map(|x| format!("{x:?}").replace("inf", "1e999")),
                    "\\PC{0,12}".prop_map(|s| serde_json::to_string(&s).unwrap()),
                    Just("[\"Transient\", \"Fatal\", 3]".to_owned()),
                    Just("true".to_owned()),
                    Just("{}".to_owned()),
                ],
            ),
            0..8,
        ),
    ) {
        let body = entries
            .iter()
            .map(|(key, value)| format!("\"{key}\": {value}"))
            .collect::<Vec<_>>()
            .join(", ");
        let doc = format!("{{\"policies\": {{\"a\": {{{body}}}}}}}");
        match Policies::from_json_str(&doc) {
            Ok(set) => prop_assert!(set.get("a").is_some()),
            Err(err) => prop_assert!(!err.problems().is_empty()),
        }
    }
}

/// The config chapter's example file reads, and explains itself as the
/// chapter says (`tenacious::docs::config`).
#[test]
fn the_readme_example_is_true() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/config.md"),
    )
    .unwrap();
    let section = &readme[readme.find("# Policies from config").unwrap()..];
    let block = |fence: &str| {
        let start = section.find(fence).unwrap() + fence.len();
        &section[start..start + section[start..].find("\n```").unwrap()]
    };
    let set = Policies::from_toml_str(block("```toml\n")).unwrap();
    let explained = section
        .split("```text\n")
        .nth(2)
        .and_then(|rest| rest.split("\n```").next())
        .unwrap();
    assert_eq!(
        set.require("openai").unwrap().explain().to_string(),
        explained
    );
}

/// A policy's name is what `#[retry(policy = "name")]` writes, which
/// refuses the same names at compile time (`tests/ui/fail` of the facade,
/// `retry_policy_name_invalid.rs`).
#[test]
fn a_policy_name_with_whitespace_or_a_control_character_is_refused() {
    assert_eq!(
        problems("[policies.\"open ai\"]\n[policies.\"search\\t\"]\n[policies.\"\"]\n"),
        [
            "policies.\"\": a policy needs a name, not an empty string",
            "policies.\"open ai\": a policy's name has no whitespace or control character (' ' \
             here): `#[retry(policy = \"name\")]` names it as written; name it like \
             `[policies.openai]`",
            "policies.\"search\\t\": a policy's name has no whitespace or control character \
             ('\\t' here): `#[retry(policy = \"name\")]` names it as written; name it like \
             `[policies.openai]`",
        ]
        .join("\n"),
    );
    let err = Policies::from_vars("APP", [("APP_POLICY_OPEN AI_MAX", "3")]).unwrap_err();
    assert!(
        err.to_string()
            .contains("a policy's name has no whitespace"),
        "{err}"
    );
    // Any other name a file can hold is a name.
    let set =
        Policies::from_toml_str("[policies.\"open-ai.v2\"]\n[policies.\"Ünïcode\"]\n").unwrap();
    assert_eq!(set.names().collect::<Vec<_>>(), ["open-ai.v2", "Ünïcode"]);
}

/// A guard's name is the one a store (feature `redis`) binds it by,
/// whose `Store::bind` refuses the same names in the same words
/// (`BindError::BadName`): no braces, 1 to 200 bytes.
#[test]
fn a_guard_name_a_store_would_refuse_is_refused_in_its_words() {
    const WHY: &str = "cannot name a shared guard: 1 to 200 bytes, no braces (a store keys the \
                       guard by its name, in braces as the key's hash tag)";
    let long = "a".repeat(201);
    let text = format!(
        "[policies.a]\nbudget = \"x{{y}}\"\nbreaker = \"{long}\"\n\
         [budgets.\"x{{y}}\"]\ncapacity = 5\n[cooldowns.\"{{z}}\"]\n"
    );
    let shown = format!("\"{}…\"", "a".repeat(60));
    assert_eq!(
        problems(&text),
        [
            format!("budgets.\"x{{y}}\": {WHY}"),
            format!("cooldowns.\"{{z}}\": {WHY}"),
            format!("policies.a.breaker: {shown}: {WHY}"),
            format!("policies.a.budget: \"x{{y}}\": {WHY}"),
        ]
        .join("\n"),
    );
    // 200 bytes are a name, as they are for a store.
    let name = "é".repeat(100);
    let set = Policies::from_toml_str(&format!(
        "[policies.a]\nthrottle = \"{name}\"\n[throttles.\"{name}\"]\nmin_rate = 1\n"
    ))
    .unwrap();
    assert_eq!(set.throttle(&name).unwrap().get_min_rate(), 1.0);
    let err = Policies::from_vars("APP", [("APP_POLICY_A_COOLDOWN", "open{ai}")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("environment: APP_POLICY_A_COOLDOWN: \"open{{ai}}\": {WHY}")
    );
}

/// `[concurrencies.NAME]`: a concurrency limit, declared with its `limit`
/// and shared by name, as the other guards are.
#[test]
fn a_concurrency_limit_is_declared_and_shared_by_name() {
    let text = "[policies.embed]\nconcurrency = \"gpu\"\n[policies.rerank]\nmax = 2\n\
                concurrency = \"gpu\"\n[policies.now]\nconcurrency = \"now\"\n\
                [concurrencies.gpu]\nlimit = 4\nmax_wait = \"30s\"\n\
                [concurrencies.now]\nlimit = 1\nmax_wait = \"0s\"\n";
    let set = Policies::from_toml_str(text).unwrap();
    let gpu = set.require("embed").unwrap().get_concurrency().unwrap();
    assert_eq!(gpu.limit(), 4);
    assert_eq!(gpu.get_max_wait(), Some(Duration::from_secs(30)));
    assert_eq!(gpu.get_name(), "gpu");
    // One limit per name, whichever policies name it.
    let rerank = set.require("rerank").unwrap();
    assert!(std::ptr::eq(rerank.get_concurrency().unwrap(), gpu));
    assert!(std::ptr::eq(set.concurrency("gpu").unwrap(), gpu));
    assert_eq!(rerank.get_max(), 2);
    // "0s": refused at once when no permit is free.
    let now = set.concurrency("now").unwrap();
    assert_eq!((now.limit(), now.get_max_wait()), (1, Some(Duration::ZERO)));
    assert!(set.concurrency("cpu").is_none());
    assert!(
        set.require("embed")
            .unwrap()
            .explain()
            .to_string()
            .ends_with(
                "guards (their waits not counted above): concurrency \"gpu\" (at most 4 in flight)"
            )
    );
    // Without `max_wait`: the policy's `max_retry_after`.
    let json = Policies::from_json_str(
        r#"{"policies": {"a": {"concurrency": "gpu"}}, "concurrencies": {"gpu": {"limit": 8}}}"#,
    )
    .unwrap();
    let gpu = json.concurrency("gpu").unwrap();
    assert_eq!((gpu.limit(), gpu.get_max_wait()), (8, None));
    // From the environment, as the other kinds.
    let env = Policies::from_vars(
        "APP",
        [
            ("APP_POLICY_A_CONCURRENCY", "gpu"),
            ("APP_CONCURRENCY_GPU_LIMIT", "4"),
            ("APP_CONCURRENCY_GPU_MAX_WAIT", "30s"),
        ],
    )
    .unwrap();
    let gpu = env.require("a").unwrap().get_concurrency().unwrap();
    assert_eq!(
        (gpu.limit(), gpu.get_max_wait()),
        (4, Some(Duration::from_secs(30)))
    );
}

#[test]
fn a_concurrency_limit_needs_its_limit_and_a_declared_name() {
    assert_eq!(
        problems(
            "[policies.a]\nconcurrency = \"gpu\"\n[policies.b]\nconcurrency = \"gpx\"\n\
             [policies.c]\nconcurrency = \"cpu\"\n[policies.d]\nconcurrency = \"tpu\"\n\
             [concurrencies.gpu]\nlimit = 0\n[concurrencies.cpu]\nmax_wait = \"1s\"\n\
             [concurrencies.tpu]\nlimit = 2\nlimits = 3\n"
        ),
        [
            "concurrencies.cpu: a concurrency limit needs its `limit`, the most attempts in \
             flight at once: `limit = 4` (it has no default)",
            "concurrencies.gpu.limit: 0: a `limit` below 1 admits no attempt, so every call \
             naming it would be refused; give the most attempts in flight at once, at least 1, \
             like `limit = 4`",
            "concurrencies.tpu.limits: unknown key `limits`; did you mean `limit`? the keys are: \
             limit, max_wait",
            "policies.b.concurrency: \"gpx\": no concurrency named \"gpx\": a name here is a \
             shared concurrency limit of the set, declared under `[concurrencies.NAME]` with its \
             `limit`; did you mean \"gpu\"? the concurrencies are: cpu, gpu, tpu",
        ]
        .join("\n")
    );
    // No defaults: a name without its table is not a limit.
    assert_eq!(
        problems("[policies.a]\nconcurrency = \"gpu\"\n"),
        "policies.a.concurrency: \"gpu\": no concurrency named \"gpu\": the set declares none; \
         declare it under `[concurrencies.gpu]` with its `limit`, like `limit = 4` (a \
         concurrency limit has no default)"
    );
    assert_eq!(
        problems(
            "[policies.a]\nconcurrency = 3\n[concurrencies.x]\nlimit = \"4\"\n\
             max_wait = \"soon\"\n"
        ),
        [
            "concurrencies.x.limit: \"4\": `limit` takes the most attempts in flight at once, a \
             whole number at least 1: `limit = 4`",
            format!(
                "concurrencies.x.max_wait: \"soon\": invalid duration: `soon` has no number \
                 before it; {FORMAT}"
            )
            .as_str(),
            "policies.a.concurrency: 3: `concurrency` takes the name of a shared concurrency \
             limit: `concurrency = \"gpu\"` (declared under `[concurrencies.gpu]`, with its \
             `limit`)",
            "concurrencies.x: no policy names this concurrency; name it in one, like \
             `concurrency = \"x\"`, or remove it",
        ]
        .join("\n")
    );
    // On its own, as the other guards' settings.
    let err = serde_json::from_str::<tenacious::config::ConcurrencyConfig>(r#"{"limit": 0}"#)
        .map(|_| ())
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("limit: 0: a `limit` below 1 admits no attempt"),
        "{err}"
    );
    let err = toml::from_str::<PolicyConfig>("concurrency = \"gpu\"\n").unwrap_err();
    assert!(
        err.to_string().contains(
            "`concurrency` names a shared concurrency, which only a set of policies declares \
             (`tenacious::config::Policies`, under `[concurrencies.NAME]`); for a policy on its \
             own, add it in code with `Policy::concurrency`"
        ),
        "{err}"
    );
}

/// The concurrency limits the docs show read as they say: the module's
/// and the config chapter's (`tenacious::docs::config`).
#[test]
fn the_documented_concurrency_limits_read() {
    let root = env!("CARGO_MANIFEST_DIR");
    let module = std::fs::read_to_string(format!("{root}/src/lib.rs")).unwrap();
    let chapter = std::fs::read_to_string(format!("{root}/../docs/config.md")).unwrap();
    for (text, prefix) in [(module.as_str(), "//!"), (chapter.as_str(), "")] {
        let lines: Vec<&str> = text
            .lines()
            .map(|line| line.strip_prefix(prefix).unwrap_or(line))
            .map(|line| line.strip_prefix(' ').unwrap_or(line))
            .collect();
        let block = lines
            .split(|line| line.starts_with("```"))
            .find(|block| block.contains(&"[concurrencies.gpu]"))
            .unwrap()
            .join("\n");
        let set = Policies::from_toml_str(&block).unwrap();
        let gpu = set.concurrency("gpu").unwrap();
        assert_eq!(gpu.limit(), 4);
        assert_eq!(gpu.get_max_wait(), Some(Duration::from_secs(30)));
        assert!(std::ptr::eq(
            set.require("embed").unwrap().get_concurrency().unwrap(),
            set.require("rerank").unwrap().get_concurrency().unwrap()
        ));
    }
}
