//! The adaptive concurrency limit's simulation (`examples/adaptive`): the
//! chosen rule, `tenacious::AdaptiveLimit` with its defaults, meets the
//! targets of issue 29 on every scenario and seed the example prints —
//! within ±15 % of the unknown cap in at most 30 simulated seconds (by the
//! rolling 10 s median) with at most 2 % of requests answered 429, for
//! caps of 2, 8 and 64 and steps 64 → 8 and 8 → 64 — and the baselines
//! fall short where the example says they do.
//!
//! Virtual time, seeded: the runs are the example's, to the event.

use std::time::Duration;

// The modules the example runs, not a copy of them.
#[path = "../examples/adaptive"]
#[allow(
    dead_code,
    reason = "shared with examples/adaptive.rs, which uses what this test does not"
)]
mod adaptive {
    pub mod measure;
    pub mod rules;
    pub mod sim;
}

use adaptive::measure::{self, Measured, measure, meets};
use adaptive::rules::Kind;
use adaptive::sim::{Scenario, simulate};

/// The example's seeds.
const SEEDS: [u64; 3] = [1, 2, 3];

fn runs(kind: Kind, scenario: Scenario) -> Vec<Measured> {
    runs_of(kind, scenario, &SEEDS)
}

fn runs_of(kind: Kind, scenario: Scenario, seeds: &[u64]) -> Vec<Measured> {
    seeds
        .iter()
        .map(|&seed| measure(&simulate(kind.build().as_mut(), scenario, seed), scenario))
        .collect()
}

#[test]
fn the_chosen_rule_settles_on_every_cap_and_step_with_few_429s() {
    for scenario in Scenario::ALL.into_iter().chain([Scenario::LATENCY[0]]) {
        let (_, _, cap) = scenario.last_phase();
        let runs = runs(Kind::Tenacious, scenario);
        for (seed, run) in SEEDS.iter().zip(&runs) {
            let name = format!("{} seed {seed}: {run:?}", scenario.name);
            let settle = run.settle.unwrap_or(Duration::MAX);
            assert!(settle <= measure::SETTLE, "settles within 30 s: {name}");
            assert!(
                run.rejected <= measure::REJECTED,
                "at most 2 % 429s: {name}"
            );
            let mean = run.mean_limit / f64::from(cap);
            assert!((0.85..=1.15).contains(&mean), "within ±15 %: {name}");
            assert!(run.in_band >= 0.99, "in band all but probes: {name}");
            assert!(run.goodput >= 0.9, "{name}");
        }
        assert!(meets(&measure::mean(&runs), scenario), "{}", scenario.name);
    }
}

#[test]
fn on_a_queueing_server_the_chosen_rule_bounds_the_latency() {
    let scenario = Scenario::LATENCY[1];
    assert!(scenario.queue);
    let runs = runs(Kind::Tenacious, scenario);
    assert!(meets(&measure::mean(&runs), scenario), "{runs:?}");
    // Plain AIMD, deaf to latency, does not.
    assert!(!meets(
        &measure::mean(&self::runs(Kind::Aimd, scenario)),
        scenario
    ));
}

#[test]
fn the_baselines_fall_short_where_the_example_says() {
    // One seed each: the margins are wide, and Gradient2's 429s are many events.
    let runs = |kind, scenario| runs_of(kind, scenario, &SEEDS[..1]);
    let c2 = Scenario::ALL[0];
    // Gradient2's min of 20 is above a cap of 2: nearly every request a 429.
    for run in runs(Kind::Gradient2, c2) {
        assert!(run.mean_limit >= 20.0 && run.rejected > 0.9, "{run:?}");
    }
    // Plain AIMD's halving saws out of ±15 % of a cap of 64.
    for run in runs(Kind::Aimd, Scenario::ALL[2]) {
        assert!(
            run.settle.is_none() && run.mean_limit < 0.85 * 64.0,
            "{run:?}"
        );
    }
    // Without the remembered ceiling, probing a cap of 2 costs 429s.
    for run in runs(Kind::NoCeiling, c2) {
        assert!(run.rejected > 0.1, "{run:?}");
    }
}

#[test]
fn a_seed_gives_one_run() {
    let scenario = Scenario::ALL[4];
    let run = || simulate(Kind::Tenacious.build().as_mut(), scenario, 7);
    assert_eq!(run(), run());
}
