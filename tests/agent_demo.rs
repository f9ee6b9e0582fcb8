//! The invariants of the main demo (`examples/agent.rs`), checked on the
//! run it makes: at fault rates 0, 0.5 and 1 (and any rate in between)
//! every run finishes, every task ends with a reason, no side effect is
//! repeated, and the figures add up. Runs are on the demo's own paused
//! clock; nothing here sleeps for real.

use std::collections::HashSet;

use tenacious::ErrorClass;
use tenacious::agent::Status;

// The modules the example runs, not a copy of them.
#[path = "../examples/agent"]
#[allow(
    dead_code,
    reason = "shared with examples/agent.rs, which uses what this test does not"
)]
mod agent {
    pub mod cli;
    pub mod model;
    pub mod report;
    pub mod runner;
    pub mod tools;
}

use agent::cli::{Command, Config};
use agent::report::{Outcome, Report};
use agent::runner::{GUARD, run_demo};
use agent::tools::Tool;

/// Seeds for the half-faulty runs: the default, and a few more so one
/// lucky seed cannot carry the claim.
const SEEDS: [u64; 6] = [Config::DEFAULT.seed, 1, 2, 3, 1_000, u64::MAX];

fn run(fault_rate: f64, seed: u64) -> Report {
    let config = Config {
        fault_rate,
        seed,
        ..Config::DEFAULT
    };
    let mut seen = 0;
    let report = run_demo(&config, |task| {
        seen += 1;
        assert_eq!(
            task.task.id, seen,
            "tasks are reported in order, as they end"
        );
    });
    assert_eq!(report.tasks.len(), 20);
    assert_eq!(seen, 20);
    report
}

/// What must hold for every run, whatever the fault rate.
fn check_invariants(report: &Report) {
    let rate = report.config.fault_rate;
    assert_eq!(
        report.duplicates, 0,
        "a side effect was repeated at rate {rate}"
    );
    assert_eq!(
        report.completed() + report.degraded() + report.escalated(),
        20
    );
    let total = report.total();
    // The call layer's own story (notify events and `Failure` provenance)
    // agrees with the attempts the tools' bodies counted, and with what
    // `tenacious::stats` recorded: the figures the demo prints.
    assert_eq!(total.attempts, report.attempts_run);
    assert_eq!(report.check_stats(), Ok(()), "at rate {rate}");
    let recorded = report.stats.total();
    assert_eq!(
        (
            recorded.calls(),
            recorded.attempts(),
            recorded.retried(),
            recorded.recovered()
        ),
        (total.calls, total.attempts, total.retried, total.recovered),
        "at rate {rate}"
    );
    // Every attempt but the one that succeeded failed with a classified
    // error.
    let successes = total.calls - total.failed;
    assert_eq!(
        report.errors_by_class.iter().sum::<u64>(),
        total.attempts - successes
    );
    assert_eq!(
        report.errors_by_variant.values().sum::<u64>(),
        total.attempts - successes
    );
    for task in &report.tasks {
        let id = task.task.id;
        assert!(
            !task.outcome.detail().is_empty(),
            "task {id} ended without a reason"
        );
        // One tool call per round.
        assert_eq!(task.rounds as usize, task.calls.len(), "task {id}");
        assert!(task.rounds <= GUARD.get_max_rounds(), "task {id}");
        assert!(task.plan_tries <= 3, "task {id}: at most 2 re-asks");
        // The guard stops a task once it is over budget: a task may pass a
        // limit by what one round costs, never by more.
        let one_round_tokens = 1_000;
        assert!(
            task.spent.tokens < GUARD.get_max_tokens().unwrap() + one_round_tokens,
            "task {id} spent {} tokens",
            task.spent.tokens
        );
        let one_round_time = std::time::Duration::from_secs(15);
        assert!(
            task.elapsed < GUARD.get_max_time().unwrap() + one_round_time,
            "task {id} took {:?}",
            task.elapsed
        );
        match &task.outcome {
            Outcome::Completed(order) => {
                assert!(order.starts_with("ord-"), "task {id}: {order}");
                let last = task.calls.last().expect("a completed task made calls");
                assert_eq!(last.tool, Tool::CreateOrder);
                assert!(last.succeeded());
            }
            Outcome::Escalated(reason) => {
                // Stopped at once, by the call that met the fatal error.
                let last = task.calls.last().expect("an escalated task made calls");
                assert_eq!(last.errors.last().map(|e| e.0), Some(ErrorClass::Fatal));
                assert_eq!(
                    task.last_observation.as_ref().map(|o| o.status),
                    Some(Status::Escalate),
                    "task {id}"
                );
                assert!(
                    reason.contains("escalate to a human"),
                    "task {id}: {reason}"
                );
            }
            Outcome::Degraded(reason) => assert!(
                reason.starts_with("no valid plan: still invalid after 2 re-asks")
                    || reason.starts_with("out of budget: ")
                    || reason.starts_with("order outcome unknown: "),
                "task {id}: unexpected reason {reason:?}"
            ),
        }
    }
}

#[test]
fn without_faults_every_task_completes_without_a_retry() {
    let report = run(0.0, Config::DEFAULT.seed);
    check_invariants(&report);
    assert_eq!(report.completed(), 20);
    let total = report.total();
    assert_eq!(total.calls, 60, "search, price, create_order per task");
    assert_eq!(total.attempts, total.calls);
    assert_eq!(total.retried, 0);
    assert_eq!(report.errors_by_class, [0; 4]);
    let recorded = report.stats.total();
    assert_eq!((recorded.calls(), recorded.attempts()), (60, 60));
    assert_eq!(recorded.retry_rate(), Some(0.0));
    assert_eq!(recorded.error_total(), 0);
    for tool in Tool::ALL {
        assert_eq!(report.stats.get(tool.name()).map(|s| s.calls()), Some(20));
    }
    assert_eq!(report.reasks(), 0);
    assert_eq!(report.switches(), 0);
    assert_eq!(report.waited, std::time::Duration::ZERO);
    assert_eq!((report.orders, report.replays), (20, 0));
    assert!(
        report
            .tasks
            .iter()
            .all(|t| t.rounds == 3 && t.last_observation.is_none())
    );
}

#[test]
fn at_half_faults_most_tasks_complete() {
    let mut shares = Vec::new();
    for seed in SEEDS {
        let report = run(0.5, seed);
        check_invariants(&report);
        let total = report.total();
        // Faults were injected and the call layer absorbed many of them:
        // without retries far fewer tasks would complete.
        assert!(total.retried > 0 && total.recovered > 0, "seed {seed}");
        assert!(
            report.completed() * 2 > 20,
            "seed {seed}: only {} of 20 tasks completed",
            report.completed()
        );
        shares.push((seed, report.completed()));
    }
    // `cargo test -- --nocapture` shows the measured shares.
    println!("tasks completed of 20 at fault rate 0.5, by seed: {shares:?}");
}

#[test]
fn with_every_attempt_failing_every_task_ends_degraded_or_escalated_with_a_reason() {
    for seed in [Config::DEFAULT.seed, 1, 2] {
        let report = run(1.0, seed);
        check_invariants(&report);
        assert_eq!(report.completed(), 0, "seed {seed}");
        let total = report.total();
        assert_eq!(total.failed, total.calls, "seed {seed}: every call gave up");
        assert_eq!(total.recovered, 0);
        assert_eq!(report.orders, 0, "no task got as far as ordering");
        // Both ways out were taken, and the guard stopped flip-flopping.
        assert!(
            report.degraded() > 0 && report.escalated() > 0,
            "seed {seed}"
        );
        assert!(report.switches() > 0, "seed {seed}");
    }
}

#[test]
fn no_run_repeats_a_side_effect_though_answers_were_lost() {
    let mut replays = 0;
    for rate in [0.1, 0.25, 0.5, 0.75, 0.9] {
        for seed in [Config::DEFAULT.seed, 11, 12] {
            let report = run(rate, seed);
            check_invariants(&report);
            replays += report.replays;
            // Each task places at most one order; a task that lost the
            // answer of its create has its order placed all the same.
            assert!(report.orders >= report.completed());
            assert!(report.orders <= 20);
        }
    }
    // Answers were lost after the store acted, and the retries carried the
    // same key: without it each replay would have been a duplicate order.
    assert!(replays > 0);
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let digest = |report: &Report| {
        report
            .tasks
            .iter()
            .map(|t| {
                (
                    t.outcome.clone(),
                    t.rounds,
                    t.attempts(),
                    t.spent,
                    t.elapsed,
                )
            })
            .collect::<Vec<_>>()
    };
    let a = run(0.5, 42);
    let b = run(0.5, 42);
    assert_eq!(digest(&a), digest(&b));
    assert_eq!(a.errors_by_variant, b.errors_by_variant);
    assert_eq!(a.waited, b.waited);
    let c = run(0.5, 43);
    assert_ne!(digest(&a), digest(&c), "the seed drives the run");
}

#[test]
fn the_observation_of_a_failed_call_is_what_the_model_reads() {
    let report = run(1.0, Config::DEFAULT.seed);
    let mut ids = HashSet::new();
    for task in &report.tasks {
        let Some(observation) = &task.last_observation else {
            // No call made: the plan never validated.
            assert!(task.calls.is_empty());
            continue;
        };
        assert!(
            ids.insert(observation.tool_call_id.clone()),
            "call ids are unique"
        );
        assert!(
            observation
                .tool_call_id
                .starts_with(&format!("call_{}_", task.task.id)),
            "{observation:?}"
        );
        let last = task.calls.last().unwrap();
        assert_eq!(observation.attempts, last.attempts);
        assert_eq!(Some(observation.class), last.errors.last().map(|e| e.0));
        let json: serde_json::Value = serde_json::to_value(observation).unwrap();
        let mut keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "attempts",
                "class",
                "error",
                "retry_after_ms",
                "status",
                "system_hint",
                "tool_call_id"
            ]
        );
    }
    assert!(!ids.is_empty());
}

#[test]
fn a_difference_from_tenacious_stats_is_caught_and_named() {
    let report = run(0.5, Config::DEFAULT.seed);
    assert_eq!(report.check_stats(), Ok(()));

    let mut miscounted = report.clone();
    miscounted.tools[Tool::Price.index()].attempts += 1;
    let error = miscounted.check_stats().unwrap_err();
    assert!(
        error.starts_with("price: attempts: the agent counted"),
        "{error}"
    );

    let mut misfiled = report;
    let call = misfiled
        .tasks
        .iter_mut()
        .flat_map(|t| &mut t.calls)
        .find(|c| c.tool == Tool::Search && !c.errors.is_empty())
        .expect("a search attempt failed at rate 0.5");
    call.errors[0].1 = "Misfiled";
    let error = misfiled.check_stats().unwrap_err();
    assert!(error.starts_with("search: errors:"), "{error}");
}

#[test]
fn flags_have_defaults_and_bad_values_are_refused_with_a_reason() {
    let parse = |args: &[&str]| Command::parse(args.iter().map(ToString::to_string));
    assert_eq!(parse(&[]), Ok(Command::Run(Config::DEFAULT)));
    assert_eq!(
        (Config::DEFAULT.fault_rate, Config::DEFAULT.tasks),
        (0.5, 20)
    );
    assert_eq!(
        parse(&["--fault-rate", "0.2", "--seed=9", "--tasks", "3"]),
        Ok(Command::Run(Config {
            fault_rate: 0.2,
            seed: 9,
            tasks: 3
        }))
    );
    assert_eq!(parse(&["--fault-rate=1"]).map(|_| ()), Ok(()));
    assert_eq!(parse(&["--help"]), Ok(Command::Help));
    for (args, expected) in [
        (
            &["--fault-rate", "1.5"][..],
            "expected a probability from 0 to 1",
        ),
        (
            &["--fault-rate", "-0.1"],
            "expected a probability from 0 to 1",
        ),
        (
            &["--fault-rate", "NaN"],
            "expected a probability from 0 to 1",
        ),
        (
            &["--fault-rate", "half"],
            "expected a probability from 0 to 1",
        ),
        (&["--seed", "-1"], "expected a whole number from 0 to"),
        (
            &["--tasks", "0"],
            "expected a whole number from 1 to 100000",
        ),
        (
            &["--tasks", "100001"],
            "expected a whole number from 1 to 100000",
        ),
        (&["--tasks"], "`--tasks` needs a value"),
        (&["--faults", "0.5"], "unknown argument `--faults`"),
        (&["0.5"], "unknown argument `0.5`"),
    ] {
        let error = parse(args).expect_err(&format!("{args:?} must be refused"));
        assert!(error.contains(expected), "{args:?}: {error}");
    }
}
