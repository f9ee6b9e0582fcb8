//! Routes declared in a set (`[routes.NAME]`), built by
//! `Policies::route`: what each key becomes, the messages a bad route
//! gets, word for word, and hostile values that must be problems, not
//! panics.
//!
//! Target names are kept process-wide (`tenacious::route`): each test
//! names its targets after itself, so that no two tests share one.
use std::time::Duration;

use proptest::prelude::*;
use tenacious::config::Policies;
use tenacious::route::{MAX_TARGETS, RouteError, Then};
use tenacious::{ErrorClass, Reject, StopReason};

/// Every problem of a TOML document, one a line.
fn problems(text: &str) -> String {
    match Policies::from_toml_str(text) {
        Ok(_) => panic!("expected problems, the set was read:\n{text}"),
        Err(err) => err.to_string(),
    }
}

const FULL: &str = r#"
[policies.openai]
max = 2
base = "100ms"
timeout = "20s"
breaker = "openai"

[breakers.openai]
open_for = "30s"

[budgets.fleet]
capacity = 200

[routes.full-chat]
deadline = "2m"
budget = "fleet"
on_class = { Fatal = "stop" }
on_stop = { CircuitOpen = "stop", Exhausted = "next" }
on_silence = "larger"

[[routes.full-chat.targets]]
name = "full-gpt-4o"
data = "https://api.openai.com/v1"
policy = "openai"
context = 128000
silence = "30s"
learn_silence = "1s"

[[routes.full-chat.targets]]
name = "full-gpt-4o-mini"
data = "gpt-4o-mini"
policy = { max = 4, base = "50ms" }
breaker = { open_for = "10s" }
cooldown = {}

[[routes.full-chat.targets]]
name = "full-claude"
data = "https://api.anthropic.com/v1"
breaker = "openai"
context = 200000
"#;

#[test]
fn a_route_reads_into_its_targets_policies_guards_and_rules() {
    let set = Policies::from_toml_str(FULL).unwrap();
    assert_eq!(set.route_names().collect::<Vec<_>>(), ["full-chat"]);
    let route = set.route("full-chat").unwrap();
    assert_eq!(route.name(), "full-chat");
    assert_eq!(route.get_deadline(), Some(Duration::from_secs(120)));

    let [gpt, mini, claude] = route.targets() else {
        panic!("three targets, in order: {route:?}");
    };
    // Each target's name and data, in the order written.
    assert_eq!(gpt.name(), "full-gpt-4o");
    assert_eq!(gpt.data(), "https://api.openai.com/v1");
    assert_eq!(mini.data(), "gpt-4o-mini");
    assert_eq!(claude.name(), "full-claude");

    // A policy by name: the set's, with its shared breaker.
    let openai = set.require("openai").unwrap();
    assert_eq!(gpt.get_policy().get_max(), 2);
    assert_eq!(gpt.get_policy().get_base(), Duration::from_millis(100));
    assert!(std::ptr::eq(
        gpt.get_policy().get_breaker().unwrap(),
        openai.get_breaker().unwrap()
    ));
    assert_eq!(gpt.get_context(), Some(128_000));
    assert_eq!(gpt.get_silence(), Some(Duration::from_secs(30)));
    assert!(gpt.get_breaker().is_none(), "no breaker of its own");

    // An inline policy, and the target's own guards, named after it.
    assert_eq!(mini.get_policy().get_max(), 4);
    assert_eq!(mini.get_policy().get_base(), Duration::from_millis(50));
    let own = mini.get_breaker().unwrap();
    assert_eq!(own.get_open_for(), Duration::from_secs(10));
    assert!(std::ptr::eq(mini.get_policy().get_breaker().unwrap(), own));
    assert!(mini.get_policy().get_cooldown().is_some());
    // No silence limit written: the policy's timeout, here none.
    assert_eq!(mini.get_silence(), None);

    // A guard by name: the set's shared one, as policies naming it have.
    assert!(std::ptr::eq(
        claude.get_policy().get_breaker().unwrap(),
        set.breaker("openai").unwrap()
    ));
    assert_eq!(
        claude.get_policy().get_max(),
        3,
        "no policy written: the defaults"
    );

    // The budget by name: the set's, which every target draws from.
    let fleet = set.budget("fleet").unwrap();
    assert_eq!(fleet.capacity(), 200);
    for target in route.targets() {
        assert!(std::ptr::eq(
            target.get_policy().get_budget().unwrap(),
            fleet
        ));
    }

    // The rules.
    let rules = route.rules();
    let fatal = rules.decide(StopReason::NotRetryable, ErrorClass::Fatal, None, false);
    assert_eq!(fatal, Then::Stop);
    let open = rules.decide(StopReason::CircuitOpen, ErrorClass::Transient, None, false);
    assert_eq!(open, Then::Stop);
    let silent = rules.decide(StopReason::Exhausted, ErrorClass::Transient, None, true);
    assert_eq!(silent, Then::Larger);
    // What is not overridden keeps the defaults.
    let long = Some(Reject::ContextLength);
    let too_long = rules.decide(StopReason::NotRetryable, ErrorClass::Invalid, long, false);
    assert_eq!(too_long, Then::Larger);
}

#[test]
fn a_route_built_again_shares_its_targets_guards() {
    let text = FULL.replace("full-", "again-");
    let set = Policies::from_toml_str(&text).unwrap();
    let first = set.route("again-chat").unwrap();
    let second = set.route("again-chat").unwrap();
    assert!(std::ptr::eq(
        first.targets()[1].get_breaker().unwrap(),
        second.targets()[1].get_breaker().unwrap()
    ));
    // A set read again (a reloaded file) builds onto the same guards too.
    let reread = Policies::from_toml_str(&text).unwrap();
    let third = reread.route("again-chat").unwrap();
    assert!(std::ptr::eq(
        first.targets()[1].get_breaker().unwrap(),
        third.targets()[1].get_breaker().unwrap()
    ));
    assert!(std::ptr::eq(
        first.targets()[1].stats().unwrap(),
        third.targets()[1].stats().unwrap()
    ));
}

#[test]
fn a_route_of_its_own_budget_and_the_json_form() {
    let set = Policies::from_json_str(
        r#"{
            "routes": {
                "json-chat": {
                    "budget": { "capacity": 40 },
                    "on_stop": { "NotIdempotent": "next" },
                    "targets": [
                        { "name": "json-a", "data": "a", "throttle": { "max_rate": 20 } },
                        { "name": "json-b", "data": "b", "context": 1 }
                    ]
                }
            }
        }"#,
    )
    .unwrap();
    let route = set.route("json-chat").unwrap();
    let [a, b] = route.targets() else {
        panic!("two targets: {route:?}");
    };
    // The route's own budget, kept by the route's name; every target's.
    let budget = a.get_policy().get_budget().unwrap();
    assert_eq!(budget.capacity(), 40);
    assert!(std::ptr::eq(b.get_policy().get_budget().unwrap(), budget));
    assert!(set.budget("json-chat").is_none(), "not one of the set's");
    assert_eq!(a.get_policy().get_throttle().unwrap().get_max_rate(), 20.0);
    assert_eq!(b.get_context(), Some(1));
    let rules = route.rules();
    let maybe_applied = rules.decide(
        StopReason::NotIdempotent,
        ErrorClass::Transient,
        None,
        false,
    );
    assert_eq!(maybe_applied, Then::Next);
    // No deadline written: none.
    assert_eq!(route.get_deadline(), None);
}

#[test]
fn an_unknown_route_says_which_there_are() {
    let set = Policies::from_toml_str(
        "[routes.chat]\ntargets = [{ name = \"unknown-a\", data = \"a\" }]\n\
         [routes.search]\ntargets = [{ name = \"unknown-b\", data = \"b\" }]\n",
    )
    .unwrap();
    let err = set.route("chatt").unwrap_err();
    assert_eq!(err.route(), "chatt");
    assert_eq!(err.target(), None);
    assert_eq!(err.route_error(), None);
    assert_eq!(
        err.to_string(),
        "no route named \"chatt\"; did you mean \"chat\"? the routes are: chat, search"
    );
    assert_eq!(
        set.route("images").unwrap_err().to_string(),
        "no route named \"images\"; the routes are: chat, search"
    );
    let none = Policies::from_toml_str("[policies.a]\n").unwrap();
    assert_eq!(
        none.route("chat").unwrap_err().to_string(),
        "no route named \"chat\": the set declares no route; declare it under `[routes.chat]`"
    );

    // A file's routes say where they were looked for.
    let path = std::env::temp_dir().join(format!("retry-routes-{}.toml", std::process::id()));
    std::fs::write(
        &path,
        "[[routes.chat.targets]]\nname = \"unknown-c\"\ndata = \"c\"\n",
    )
    .unwrap();
    let set = Policies::from_toml_file(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        set.route("cht").unwrap_err().to_string(),
        format!(
            "no route named \"cht\" in {}; did you mean \"chat\"? the routes are: chat",
            path.display()
        )
    );
}

#[test]
fn unknown_keys_say_which_there_are_and_where_a_misplaced_one_goes() {
    assert_eq!(
        problems(
            "[routes.chat]\ndeadlin = \"1m\"\nrules = {}\ntimeout = \"1s\"\nbreaker = \"x\"\n\
             targets = [{ name = \"keys-a\", data = \"a\", silense = \"1s\", max = 3, \
             on_class = {} }]\n"
        ),
        "routes.chat.breaker: unknown key `breaker`: `breaker` is a key of each target, in \
         `targets = [{ … }]`; the keys of a route are: targets, deadline, budget, on_class, \
         on_stop, on_silence\n\
         routes.chat.deadlin: unknown key `deadlin`; did you mean `deadline`? the keys are: \
         targets, deadline, budget, on_class, on_stop, on_silence\n\
         routes.chat.rules: unknown key `rules`: the rules are keys of the route itself, \
         `on_class`, `on_stop` and `on_silence`, like `on_class = { Fatal = \"stop\" }`\n\
         routes.chat.targets[0].max: unknown key `max`: `max` is a key of the target's policy: \
         `policy = { max = … }`, or name a policy of the set, `policy = \"openai\"`; the keys \
         of a target are: name, data, policy, breaker, cooldown, throttle, concurrency, \
         context, silence, learn_silence\n\
         routes.chat.targets[0].on_class: unknown key `on_class`: `on_class` is a key of the \
         route, under `[routes.NAME]`; the keys of a target are: name, data, policy, breaker, \
         cooldown, throttle, concurrency, context, silence, learn_silence\n\
         routes.chat.targets[0].silense: unknown key `silense`; did you mean `silence`? the \
         keys are: name, data, policy, breaker, cooldown, throttle, concurrency, context, \
         silence, learn_silence\n\
         routes.chat.timeout: unknown key `timeout`: `timeout` is a key of a target's policy, \
         in `targets = [{ name = \"gpt-4o\", policy = { timeout = … } }]`; the keys of a route \
         are: targets, deadline, budget, on_class, on_stop, on_silence"
    );
    // An inline policy's keys are a policy's, checked as one.
    assert_eq!(
        problems(
            "[[routes.chat.targets]]\nname = \"keys-b\"\ndata = \"b\"\npolicy = { maxx = 2 }\n"
        ),
        "routes.chat.targets[0].policy.maxx: unknown key `maxx`; did you mean `max`? the keys \
         are: max, base, cap, jitter, on, max_retry_after, timeout, deadline, first_item, idle, \
         resume, budget, breaker, cooldown, throttle, concurrency, nested"
    );
    // `route` for `routes`, at the top.
    assert_eq!(
        problems("[route.chat]\n"),
        "route: unknown key `route`; did you mean `routes`? the keys are: policies, budgets, \
         cooldowns, throttles, breakers, concurrencies, routes"
    );
}

#[test]
fn a_route_needs_targets_each_named_once_with_its_data() {
    assert_eq!(
        problems("[routes.chat]\ndeadline = \"1m\"\n[routes.empty]\ntargets = []\n"),
        "routes.chat: a route needs at least one target: `targets = [{ name = \"gpt-4o\", data \
         = \"https://api.openai.com/v1\" }]`\n\
         routes.empty.targets: []: a route needs at least one target: `targets = [{ name = \
         \"gpt-4o\", data = \"https://api.openai.com/v1\" }]`"
    );
    assert_eq!(
        problems(
            "[routes.chat]\ntargets = [{ name = \"twice-a\", data = \"a\" }, { name = \"twice-b\", \
             data = \"b\" }, { name = \"twice-a\", data = \"c\" }]\n"
        ),
        "routes.chat.targets[2].name: \"twice-a\": the route lists target \"twice-a\" twice \
         (targets[0] and targets[2]): results and statistics could not tell them apart; give \
         each its own name"
    );
    assert_eq!(
        problems("[routes.chat]\ntargets = [{ data = \"a\" }, { name = \"needs-b\" }, 3]\n"),
        "routes.chat.targets[0]: a target needs a `name`, the model or deployment results and \
         statistics call it: `name = \"gpt-4o\"`\n\
         routes.chat.targets[1]: a target needs `data`, what the call needs to reach it: a base \
         URL, `data = \"https://api.openai.com/v1\"`, or a model id\n\
         routes.chat.targets[2]: 3: a target takes a table of settings: `{ name = \"gpt-4o\", \
         data = \"https://api.openai.com/v1\" }`"
    );
    assert_eq!(
        problems("[routes.chat]\ntargets = { name = \"needs-c\", data = \"c\" }\n"),
        "routes.chat.targets: `targets` takes a list of targets, tried in order: `targets = [{ \
         name = \"gpt-4o\", data = \"https://api.openai.com/v1\" }]`, or a \
         `[[routes.chat.targets]]` table each"
    );
}

#[test]
fn bad_durations_are_refused_in_retrys_words() {
    assert_eq!(
        problems(
            "[routes.chat]\ndeadline = \"2 m\"\n[[routes.chat.targets]]\nname = \"dur-a\"\n\
             data = \"a\"\nsilence = \"30 s\"\nlearn_silence = 1\n"
        ),
        "routes.chat.deadline: \"2 m\": invalid duration: unknown unit ` m`; write a number and \
         a unit, like \"200ms\", \"1.5s\", \"2m\" or \"1m30s\" (units: h, m, s, ms, us, ns)\n\
         routes.chat.targets[0].learn_silence: 1: `learn_silence` takes a duration string with \
         a unit: `learn_silence = \"1s\"`\n\
         routes.chat.targets[0].silence: \"30 s\": invalid duration: unknown unit ` s`; write a \
         number and a unit, like \"200ms\", \"1.5s\", \"2m\" or \"1m30s\" (units: h, m, s, ms, \
         us, ns)"
    );
    // Zero: no time for any attempt, a target that never serves, a floor
    // that takes one slow answer for silence.
    assert_eq!(
        problems(
            "[routes.chat]\ndeadline = \"0s\"\n[[routes.chat.targets]]\nname = \"dur-b\"\n\
             data = \"b\"\nsilence = \"0ms\"\nlearn_silence = \"0s\"\n"
        ),
        "routes.chat.deadline: \"0s\": a zero `deadline` leaves no time for any attempt; give \
         the longest the whole call may run, like `deadline = \"60s\"`, or remove the key\n\
         routes.chat.targets[0].learn_silence: \"0s\": a zero `learn_silence` floor lets the \
         learnt limit fall to the target's fastest answers, so one slower answer is taken for \
         silence; give a positive duration, like `learn_silence = \"1s\"`, or remove the key\n\
         routes.chat.targets[0].silence: \"0ms\": a zero `silence` takes every attempt for \
         silent before its answer can come, so the target never serves; give a positive \
         duration, like `silence = \"30s\"`, or remove the key"
    );
    assert_eq!(
        problems(
            "[[routes.chat.targets]]\nname = \"dur-c\"\ndata = \"c\"\nsilence = \"1s\"\n\
             learn_silence = \"2s\"\n"
        ),
        "routes.chat.targets[0].silence: `learn_silence` (2s) is above `silence` (1s): the floor \
         wins, so the limit written never holds; lower `learn_silence` or raise `silence`"
    );
    // Past `u64` nanoseconds: refused. Just under: read, and built.
    let err = problems(
        "[routes.chat]\ndeadline = \"1000000000h\"\n[[routes.chat.targets]]\nname = \"dur-d\"\n\
         data = \"d\"\n",
    );
    assert!(err.contains("the longest is about 584 years"), "{err}");
    let set = Policies::from_toml_str(
        "[routes.huge]\ndeadline = \"5000000h\"\n[[routes.huge.targets]]\nname = \"dur-e\"\n\
         data = \"e\"\nsilence = \"18446744073709551615ns\"\nlearn_silence = \"1ns\"\n\
         context = 9223372036854775807\n",
    )
    .unwrap();
    let route = set.route("huge").unwrap();
    assert_eq!(
        route.get_deadline(),
        Some(Duration::from_secs(5_000_000 * 3600))
    );
    let target = &route.targets()[0];
    assert_eq!(target.get_silence(), Some(Duration::from_nanos(u64::MAX)));
    assert_eq!(target.get_context(), Some(i64::MAX as u64));
}

#[test]
fn rules_name_known_classes_stop_reasons_and_moves() {
    assert_eq!(
        problems(
            "[routes.chat]\non_class = { Fatl = \"stop\", Invalid = \"nxt\", Transient = 1 }\n\
             on_stop = { CircuitOpn = \"stop\", Timeout = \"next\" }\non_silence = \"Next\"\n\
             targets = [{ name = \"rules-a\", data = \"a\" }]\n"
        ),
        "routes.chat.on_class.Fatl: unknown class `Fatl` in `on_class`; did you mean `Fatal`? \
         the classes are: Transient, RateLimited, Invalid, Fatal\n\
         routes.chat.on_class.Invalid: \"nxt\": unknown rule \"nxt\"; did you mean \"next\"? \
         `on_class` takes \"next\" (try the next target), \"larger\" (the next target with a \
         larger `context`) or \"stop\" (stop the route)\n\
         routes.chat.on_class.Transient: 1: `on_class` takes \"next\" (try the next target), \
         \"larger\" (the next target with a larger `context`) or \"stop\" (stop the route)\n\
         routes.chat.on_silence: \"Next\": unknown rule \"Next\"; did you mean \"next\"? \
         `on_silence` takes \"next\" (try the next target), \"larger\" (the next target with a \
         larger `context`) or \"stop\" (stop the route)\n\
         routes.chat.on_stop.CircuitOpn: unknown stop reason `CircuitOpn` in `on_stop`; did you \
         mean `CircuitOpen`? the stop reasons are: Exhausted, NotRetryable, HintTooLong, \
         Deadline, Budget, Nested, Guard, Cooldown, CircuitOpen, PartialOutput, NotIdempotent, \
         Concurrency\n\
         routes.chat.on_stop.Timeout: unknown stop reason `Timeout` in `on_stop`; the stop \
         reasons are: Exhausted, NotRetryable, HintTooLong, Deadline, Budget, Nested, Guard, \
         Cooldown, CircuitOpen, PartialOutput, NotIdempotent, Concurrency"
    );
    assert_eq!(
        problems(
            "[routes.chat]\non_class = \"stop\"\ntargets = [{ name = \"rules-b\", data = \"b\" }]\n"
        ),
        "routes.chat.on_class: \"stop\": `on_class` takes a table of classes, each to \"next\", \
         \"larger\" or \"stop\": `on_class = { Fatal = \"stop\" }`, not a string"
    );
    // Every class and every stop reason is a name the table takes.
    let mut text =
        String::from("[routes.every]\ntargets = [{ name = \"rules-c\", data = \"c\" }]\n");
    text.push_str("on_class = { Transient = \"stop\", RateLimited = \"stop\", Invalid = \"next\", Fatal = \"stop\" }\n");
    let reasons: Vec<String> = StopReason::ALL
        .iter()
        .map(|reason| format!("{reason:?} = \"larger\""))
        .collect();
    text.push_str(&format!("on_stop = {{ {} }}\n", reasons.join(", ")));
    let route = Policies::from_toml_str(&text)
        .unwrap()
        .route("every")
        .unwrap();
    for reason in StopReason::ALL {
        let then = route
            .rules()
            .decide(reason, ErrorClass::Transient, None, false);
        assert_eq!(then, Then::Larger, "{reason:?}");
    }
}

#[test]
fn a_target_guard_or_policy_names_one_the_set_has() {
    assert_eq!(
        problems(
            "[policies.openai]\nbreaker = \"openai\"\n[throttles.openai]\n\
             [routes.chat]\nbudget = \"flet\"\n[[routes.chat.targets]]\nname = \"names-a\"\n\
             data = \"a\"\npolicy = \"opnai\"\nbreaker = \"opnai\"\ncooldown = \"openai\"\n\
             throttle = \"openai\"\n"
        ),
        "routes.chat.budget: \"flet\": no budget named \"flet\": the set declares none; declare \
         it under `[budgets.flet]` (an empty table for the defaults), or give the settings here, \
         like `budget = {}`\n\
         routes.chat.targets[0].policy: \"opnai\": no policy named \"opnai\" in the set; did you \
         mean \"openai\"? the policies are: openai\n\
         routes.chat.targets[0].breaker: \"opnai\": no breaker named \"opnai\": a name here is a \
         shared breaker of the set, declared under `[breakers.NAME]` or named by a policy; did \
         you mean \"openai\"? the breakers are: openai\n\
         routes.chat.targets[0].cooldown: \"openai\": no cooldown named \"openai\": the set \
         declares none; declare it under `[cooldowns.openai]` (an empty table for the defaults), \
         or give the settings here, like `cooldown = {}`"
    );
    // A guard only a target names is declared, built and shared by name.
    let set = Policies::from_toml_str(
        "[cooldowns.provider]\nspacing = \"50ms\"\n[routes.chat]\ntargets = [\
         { name = \"names-b\", data = \"b\", cooldown = \"provider\" },\
         { name = \"names-c\", data = \"c\", cooldown = \"provider\" }]\n",
    )
    .unwrap();
    let shared = set.cooldown("provider").unwrap();
    assert_eq!(shared.get_spacing(), Duration::from_millis(50));
    let route = set.route("chat").unwrap();
    for target in route.targets() {
        assert!(std::ptr::eq(
            target.get_policy().get_cooldown().unwrap(),
            shared
        ));
    }
    // A target's inline policy names no guard: they are the target's keys.
    assert_eq!(
        problems(
            "[breakers.openai]\n[policies.p]\nbreaker = \"openai\"\n[[routes.chat.targets]]\n\
             name = \"names-d\"\ndata = \"d\"\npolicy = { max = 2, breaker = \"openai\", budget \
             = \"fleet\" }\n"
        ),
        "routes.chat.targets[0].policy.budget: \"fleet\": a target's policy names no budget: \
         the route's budget is a key of the route, `budget = \"fleet\"`, which every target's \
         retries draw from\n\
         routes.chat.targets[0].policy.breaker: \"openai\": a target's policy names no breaker: \
         the target's guards are keys of the target, beside `policy`: `breaker = \"openai\"`"
    );
    // A guard's inline settings are checked as its table's.
    assert_eq!(
        problems(
            "[[routes.chat.targets]]\nname = \"names-e\"\ndata = \"e\"\nbreaker = { ratio = 2 }\n\
             throttle = 5\n"
        ),
        "routes.chat.targets[0].breaker.ratio: 2: `ratio` takes the share of failures that \
         opens the breaker, from 0 to 1: `ratio = 0.5`\n\
         routes.chat.targets[0].throttle: 5: `throttle` takes the name of a shared throttle of \
         the set, `throttle = \"openai\"` (declared under `[throttles.openai]`), or its own \
         settings, `throttle = { max_rate = 50 }`"
    );
}

#[test]
fn a_target_names_a_concurrency_limit_of_the_set() {
    // By name: the set's, shared with the policies naming it.
    let set = Policies::from_toml_str(
        "[policies.p]\nconcurrency = \"gpu\"\n[concurrencies.gpu]\nlimit = 2\n\
         [routes.chat]\ntargets = [\
         { name = \"limit-a\", data = \"a\", concurrency = \"gpu\" },\
         { name = \"limit-b\", data = \"b\", policy = \"p\" },\
         { name = \"limit-c\", data = \"c\" }]\n",
    )
    .unwrap();
    let gpu = set.concurrency("gpu").unwrap();
    assert_eq!(gpu.limit(), 2);
    let route = set.route("chat").unwrap();
    let [a, b, c] = route.targets() else {
        panic!("three targets: {route:?}");
    };
    assert!(std::ptr::eq(a.get_policy().get_concurrency().unwrap(), gpu));
    assert!(std::ptr::eq(b.get_policy().get_concurrency().unwrap(), gpu));
    assert!(c.get_policy().get_concurrency().is_none());
    // Only a target names it: declared, built and shared all the same.
    let only = Policies::from_toml_str(
        "[concurrencies.gpu]\nlimit = 3\n[routes.chat]\ntargets = [\
         { name = \"limit-d\", data = \"d\", concurrency = \"gpu\" }]\n",
    )
    .unwrap();
    let route = only.route("chat").unwrap();
    assert!(std::ptr::eq(
        route.targets()[0].get_policy().get_concurrency().unwrap(),
        only.concurrency("gpu").unwrap()
    ));
    // Not inline, not a name the set lacks, not in an inline policy.
    assert_eq!(
        problems(
            "[concurrencies.gpu]\nlimit = 1\n[policies.p]\nconcurrency = \"gpu\"\n\
             [[routes.chat.targets]]\nname = \"limit-e\"\ndata = \"e\"\n\
             concurrency = { limit = 2 }\n\
             [[routes.chat.targets]]\nname = \"limit-f\"\ndata = \"f\"\nconcurrency = \"gpx\"\n\
             policy = { concurrency = \"gpu\" }\n"
        ),
        "routes.chat.targets[0].concurrency: `concurrency` takes the name of a shared \
         concurrency limit of the set, `concurrency = \"gpu\"`, declared under \
         `[concurrencies.gpu]` with its `limit` (a target has no concurrency limit of its own: \
         declare it in the set and name it)\n\
         routes.chat.targets[1].policy.concurrency: \"gpu\": a target's policy names no \
         concurrency: the target's guards are keys of the target, beside `policy`: \
         `concurrency = \"gpu\"`\n\
         routes.chat.targets[1].concurrency: \"gpx\": no concurrency named \"gpx\": a name \
         here is a shared concurrency limit of the set, declared under `[concurrencies.NAME]` \
         with its `limit`; did you mean \"gpu\"? the concurrencies are: gpu"
    );
}

#[test]
fn a_target_name_has_one_set_of_guards() {
    // In one document: refused when read.
    assert_eq!(
        problems(
            "[routes.a]\ntargets = [{ name = \"one-a\", data = \"a\", breaker = { open_for = \
             \"30s\" } }]\n[routes.b]\ntargets = [{ name = \"one-a\", data = \"a\", breaker = { \
             open_for = \"10s\" } }]\n"
        ),
        "routes.b.targets[0].name: \"one-a\": target \"one-a\" has other guards in route \"a\" \
         (targets[0]): a target name's guards are shared by every route of the process \
         (`tenacious::route`), so give it the same guards and settings, or another name"
    );
    // The same settings written two ways are one set of guards.
    Policies::from_toml_str(
        "[routes.a]\ntargets = [{ name = \"one-b\", data = \"a\", breaker = { open_for = \
         \"15s\" } }]\n[routes.b]\ntargets = [{ name = \"one-b\", data = \"b\", breaker = {} }]\n",
    )
    .unwrap();
    // Across sets (a reloaded file that changed them): refused when built.
    let first = Policies::from_toml_str(
        "[routes.a]\ntargets = [{ name = \"one-c\", data = \"c\", breaker = { open_for = \
         \"30s\" } }]\n",
    )
    .unwrap();
    first.route("a").unwrap();
    let changed = Policies::from_toml_str(
        "[routes.a]\ntargets = [{ name = \"one-d\", data = \"d\" }, { name = \"one-c\", data = \
         \"c\", breaker = { open_for = \"10s\" } }]\n",
    )
    .unwrap();
    let err = changed.route("a").unwrap_err();
    assert_eq!(err.target(), Some((1, "one-c")));
    assert_eq!(
        err.route_error(),
        Some(&RouteError::Conflict("one-c".to_owned()))
    );
    assert_eq!(
        err.to_string(),
        "route \"a\": targets[1] (\"one-c\"): target `one-c` was built before with other guards: \
         a target name's guards are shared process-wide, so give the same guards and settings, \
         or another name"
    );
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn hostile_values_are_problems_not_panics() {
    // Empty strings, names a store would refuse, numbers out of range.
    let long = "n".repeat(10_000);
    let err = problems(&format!(
        "[routes.\"\"]\ntargets = []\n[routes.\"{long}\"]\ntargets = []\n\
         [routes.chat]\ntargets = [\
         {{ name = \"\", data = \"\", policy = \"\", breaker = \"\", cooldown = \"\" }},\
         {{ name = \"a{{b}}\", data = \"a\", context = 0 }},\
         {{ name = \"{long}\", data = \"{long}\", context = -1 }},\
         {{ name = \"hostile-a\", data = \"a\", context = 1.5 }}]\n"
    ));
    assert!(err.len() < 6_000, "long values are cut: {err}");
    for expected in [
        "routes.\"\": a route's name names its guards and statistics process-wide: 1 to 200 \
         bytes, no braces, no control character",
        "routes.chat.targets[0].name: \"\": `name` takes a string, not an empty one",
        "routes.chat.targets[0].data: \"\": `data` takes a string, not an empty one",
        "routes.chat.targets[0].policy: \"\": `policy` takes the name of a policy of the set",
        "routes.chat.targets[0].breaker: \"\": `breaker` takes the name of a shared breaker",
        "routes.chat.targets[0].cooldown: \"\": `cooldown` takes the name of a shared cooldown",
        "routes.chat.targets[1].name: \"a{b}\": a target's name names its guards",
        "routes.chat.targets[1].context: 0: a context window of no tokens fits no request",
        "routes.chat.targets[2].context: -1: a context window of no tokens fits no request",
        "routes.chat.targets[3].context: 1.5: `context` takes the target's context window in \
         tokens, a whole number",
    ] {
        assert!(err.contains(expected), "{expected}\nnot in:\n{err}");
    }
    assert_eq!(err.lines().count(), 12, "{err}");

    // Control characters in a name, a JSON number past `u64`.
    let err = Policies::from_json_str(
        r#"{"routes": {"chat": {"targets": [
            {"name": "a\nb", "data": "a"},
            {"name": "hostile-b", "data": "b", "context": 18446744073709551616},
            {"name": "hostile-c", "data": "c", "context": 18446744073709551615}
        ]}}}"#,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "routes.chat.targets[0].name: \"a\\nb\": a target's name names its guards and statistics \
         process-wide: 1 to 200 bytes, no braces, no control character; name it after a model \
         or provider, like `gpt-4o`\n\
         routes.chat.targets[1].context: 1.8446744073709552e19: `context` takes the target's \
         context window in tokens, a whole number: `context = 128000`"
    );
}

/// A JSON route of `n` targets named `{prefix}-{i}`.
fn many(route: &str, prefix: &str, n: usize) -> String {
    let targets: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"name": "{prefix}-{i}", "data": "x"}}"#))
        .collect();
    format!(r#""{route}": {{"targets": [{}]}}"#, targets.join(", "))
}

#[test]
fn ten_thousand_targets_are_refused_with_the_bound() {
    let text = format!(r#"{{"routes": {{{}}}}}"#, many("big", "big", 10_000));
    let err = Policies::from_json_str(&text).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "routes.big.targets: the route lists 10000 targets: a route holds at most \
             {MAX_TARGETS}, the target names a process keeps (`tenacious::route::MAX_TARGETS`); \
             name targets after models or providers, not requests"
        )
    );
    // Each route within the bound, all of them past it.
    let text = format!(
        r#"{{"routes": {{{}, {}, {}}}}}"#,
        many("a", "split-a", 2_000),
        many("b", "split-b", 2_000),
        many("c", "split-a", 2_000),
    );
    Policies::from_json_str(&text).unwrap();
    let text = format!(
        r#"{{"routes": {{{}, {}, {}}}}}"#,
        many("a", "split-a", 2_000),
        many("b", "split-b", 2_000),
        many("c", "split-c", 2_000),
    );
    assert_eq!(
        Policies::from_json_str(&text).unwrap_err().to_string(),
        format!(
            "routes: the routes name 6000 targets: a process keeps at most {MAX_TARGETS} target \
             names (`tenacious::route::MAX_TARGETS`); name targets after models or providers, \
             not requests"
        )
    );
}

#[test]
fn routes_are_not_read_from_the_environment() {
    let err = Policies::from_vars("APP", [("APP_ROUTE_CHAT_DEADLINE", "1m")]).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("environment: APP_ROUTE_CHAT_DEADLINE: unknown kind `ROUTE` after `APP_`"),
        "{err}"
    );
}

#[test]
fn nothing_loaded_says_so() {
    let err = tenacious::config::route("chat").unwrap_err();
    assert_eq!(
        err.to_string(),
        "no route named \"chat\": no policies are loaded; load them at start-up, with \
         `tenacious::config::load`"
    );
}

proptest! {
    /// Targets of random keys and values: a set whose route builds, or
    /// problems, never a panic.
    #[test]
    fn random_targets_never_panic(
        entries in proptest::collection::vec(
            (
                prop_oneof![
                    Just("name"), Just("data"), Just("policy"), Just("breaker"),
                    Just("cooldown"), Just("throttle"), Just("context"), Just("silence"),
                    Just("learn_silence"), Just("zzz"),
                ],
                prop_oneof![
                    any::<i64>().prop_map(|n| n.to_string()),
                    any::<f64>().prop_map(|x| format!("{x:?}").replace("inf", "1e999")),
                    "\\PC{0,12}".prop_map(|s| serde_json::to_string(&s).unwrap()),
                    Just("\"1s\"".to_owned()),
                    Just("{}".to_owned()),
                    Just("{\"max\": 0}".to_owned()),
                    Just("[]".to_owned()),
                ],
            ),
            0..8,
        ),
        rule in prop_oneof![
            Just("\"next\""), Just("\"larger\""), Just("\"stop\""), Just("3"), Just("{}"),
        ],
    ) {
        let body = entries
            .iter()
            .map(|(key, value)| format!("\"{key}\": {value}"))
            .collect::<Vec<_>>()
            .join(", ");
        let doc = format!(
            "{{\"routes\": {{\"prop\": {{\"on_silence\": {rule}, \"targets\": [{{{body}}}]}}}}}}"
        );
        match Policies::from_json_str(&doc) {
            Ok(set) => {
                // A name kept for the life of the process: the route may
                // meet one built before with other guards, never a panic.
                let _ = set.route("prop");
            }
            Err(err) => prop_assert!(!err.problems().is_empty()),
        }
    }
}

/// The ```toml blocks of `text`, each line with `prefix` and one space
/// taken off.
fn toml_blocks(text: &str, prefix: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut block: Option<Vec<&str>> = None;
    for line in text.lines() {
        let line = line.strip_prefix(prefix).unwrap_or(line);
        let line = line.strip_prefix(' ').unwrap_or(line);
        match &mut block {
            None if line == "```toml" => block = Some(Vec::new()),
            Some(lines) if line.starts_with("```") => {
                blocks.push(lines.join("\n"));
                block = None;
            }
            Some(lines) => lines.push(line),
            None => {}
        }
    }
    blocks
}

/// The routes the docs show read as they say: the module's (with its
/// policies) and the config chapter's (`tenacious::docs::config`).
#[test]
fn the_documented_routes_read() {
    let root = env!("CARGO_MANIFEST_DIR");
    let module = std::fs::read_to_string(format!("{root}/src/lib.rs")).unwrap();
    let blocks = toml_blocks(&module, "//!");
    let routes = blocks
        .iter()
        .find(|block| block.starts_with("[routes.chat]"))
        .unwrap();
    let text = format!("{}\n{routes}", blocks[0]).replace("\"gpt-4o\"", "\"doc-module-gpt\"");
    let set = Policies::from_toml_str(&text).unwrap();
    let route = set.route("chat").unwrap();
    assert_eq!(route.targets().len(), 2);
    assert!(std::ptr::eq(
        route.targets()[0].get_policy().get_budget().unwrap(),
        set.budget("fleet").unwrap()
    ));

    let chapter = std::fs::read_to_string(format!("{root}/../docs/config.md")).unwrap();
    let routes = toml_blocks(&chapter, "")
        .into_iter()
        .find(|block| block.contains("[routes.chat]"))
        .unwrap()
        .replace("\"gpt-4o\"", "\"doc-chapter-gpt\"");
    let set = Policies::from_toml_str(&routes).unwrap();
    let route = set.route("chat").unwrap();
    let [gpt, claude] = route.targets() else {
        panic!("two targets: {route:?}");
    };
    assert_eq!(gpt.get_context(), Some(128_000));
    assert_eq!(
        claude.get_breaker().unwrap().get_open_for(),
        Duration::from_secs(30)
    );
    let hint = route.rules().decide(
        StopReason::HintTooLong,
        ErrorClass::RateLimited,
        None,
        false,
    );
    assert_eq!(hint, Then::Next);
}
