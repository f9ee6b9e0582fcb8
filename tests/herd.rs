//! The thundering-herd simulation (`examples/herd`): its model holds, and it
//! reproduces the ranking of Marc Brooker's "Exponential Backoff And Jitter".

use std::time::Duration;

// The simulation the example runs, not a copy of it.
#[path = "../examples/herd/sim.rs"]
mod sim;

use sim::{Strategy, Summary, average, simulate};

/// Herd size of the ranking check: contended enough to separate the
/// strategies, small enough for a quick debug test.
const CLIENTS: u32 = 100;

/// Runs averaged per strategy. Over 2 000 seeds at 100 clients one run's
/// calls vary with a standard deviation of about 7 (full jitter), 8 (equal),
/// 31 (decorrelated), 49 (no backoff) and 73 (no jitter) around means of
/// 897, 921, 1031, 2785 and 2677. With 32 runs the closest check (full
/// against decorrelated, 135 calls apart) sits about 24 standard errors from
/// failing, and the whole test stays well under a second in debug.
const RUNS: u32 = 32;

/// Far fewer calls: the measured ratio to full jitter is about 3.1 (no
/// backoff) and 3.0 (no jitter); 2.5 leaves room for seed noise but not for
/// a strategy that stopped spreading the herd.
const FAR: f64 = 2.5;

fn summaries(seed: u64) -> Vec<(Strategy, Summary)> {
    Strategy::ALL
        .into_iter()
        .map(|strategy| (strategy, average(strategy, CLIENTS, seed, RUNS)))
        .collect()
}

fn of(results: &[(Strategy, Summary)], strategy: Strategy) -> Summary {
    results
        .iter()
        .find(|(s, _)| *s == strategy)
        .map(|(_, summary)| *summary)
        .expect("every strategy was simulated")
}

#[test]
fn full_jitter_does_the_least_work_and_no_jitter_takes_the_longest() {
    let results = summaries(0x00c0_ffee);
    let table: String = results
        .iter()
        .map(|(s, r)| {
            format!(
                "\n  {:<24} {:>7.1} calls {:>6.2} s",
                s.name(),
                r.calls,
                r.completion_secs
            )
        })
        .collect();

    let full = of(&results, Strategy::Full);
    let equal = of(&results, Strategy::Equal);
    let decorrelated = of(&results, Strategy::Decorrelated);
    let none = of(&results, Strategy::NoBackoff);
    let exponential = of(&results, Strategy::Exponential);

    assert!(
        full.calls <= equal.calls * 1.05,
        "full jitter should be within 5 % of equal jitter:{table}"
    );
    assert!(
        full.calls < decorrelated.calls,
        "full jitter should make fewer calls than decorrelated:{table}"
    );
    for (far, name) in [(none, "no backoff"), (exponential, "no jitter")] {
        assert!(
            far.calls >= FAR * full.calls,
            "{name} should make at least {FAR}x the calls of full jitter:{table}"
        );
    }
    for (strategy, other) in &results {
        if *strategy != Strategy::Exponential {
            assert!(
                exponential.completion_secs > other.completion_secs,
                "exponential backoff without jitter should finish last, not before {}:{table}",
                strategy.name()
            );
        }
    }
    // Shown with `--nocapture`: the measured ratios.
    println!(
        "calls / full jitter: equal {:.3}, decorrelated {:.3}, no backoff {:.2}, no jitter {:.2}{table}",
        equal.calls / full.calls,
        decorrelated.calls / full.calls,
        none.calls / full.calls,
        exponential.calls / full.calls,
    );
}

#[test]
fn every_client_succeeds_once_and_no_write_fails_without_cause() {
    for strategy in Strategy::ALL {
        for clients in [0, 1, 2, 10, 50] {
            let out = simulate(strategy, clients, 3, Duration::MAX);
            let n = u64::from(clients);
            assert_eq!(out.successes, n, "{} with {clients}", strategy.name());
            // A write fails only if another client's write succeeded since
            // its read, and those are different writes on every failure:
            // at most 0 + 1 + … + (n - 1) failures in all.
            assert!(
                out.calls >= n && out.calls <= n * (n + 1) / 2,
                "{} with {clients}: {} calls",
                strategy.name(),
                out.calls
            );
        }
    }
}

#[test]
fn a_lone_client_reads_writes_and_hears_back() {
    for strategy in Strategy::ALL {
        let out = simulate(strategy, 1, 9, Duration::MAX);
        assert_eq!(out.calls, 1);
        // Read there, answer back, write there, answer back: four hops.
        assert!(
            out.completion >= sim::NET_MIN * 4 && out.completion <= sim::NET_MAX * 4,
            "{:?}",
            out.completion
        );
    }
    let empty = simulate(Strategy::Full, 0, 9, Duration::MAX);
    assert_eq!((empty.calls, empty.completion), (0, Duration::ZERO));
}

#[test]
fn waits_follow_the_strategy_and_never_pass_the_cap() {
    let longest = |strategy| simulate(strategy, CLIENTS, 4, Duration::MAX).longest_wait;
    assert_eq!(longest(Strategy::NoBackoff), Duration::ZERO);
    // A hundred clients fail often enough to reach the cap: without jitter
    // the wait is then exactly the cap, with jitter it comes close.
    assert_eq!(longest(Strategy::Exponential), sim::CAP);
    for strategy in [Strategy::Equal, Strategy::Full, Strategy::Decorrelated] {
        let wait = longest(strategy);
        assert!(
            wait > sim::CAP / 2 && wait <= sim::CAP,
            "{}: {wait:?}",
            strategy.name()
        );
    }
}

#[test]
fn no_client_takes_longer_than_its_attempts_allow() {
    // A client fails at most once per other client's success, so it makes at
    // most `n` attempts of four hops each, and waits at most the cap before
    // each retry.
    for strategy in Strategy::ALL {
        let n = 20;
        let out = simulate(strategy, n, 6, Duration::MAX);
        let bound = sim::NET_MAX * 4 * n + sim::CAP * (n - 1);
        assert!(
            out.completion <= bound,
            "{}: {:?}",
            strategy.name(),
            out.completion
        );
    }
}

#[test]
fn calls_over_time_add_up_to_the_calls() {
    let bin = Duration::from_millis(100);
    for strategy in Strategy::ALL {
        let out = simulate(strategy, 200, 5, bin);
        assert_eq!(out.bin, bin);
        assert_eq!(out.calls_over_time.iter().sum::<u64>(), out.calls);
        // The last write reached the server before its answer came back.
        let span = bin * u32::try_from(out.calls_over_time.len()).unwrap();
        assert!(span >= out.completion - sim::NET_MAX && span <= out.completion + bin);
        assert_ne!(out.calls_over_time.last(), Some(&0));
    }
    // A bin narrower than the floor is widened rather than allocating a
    // slot per nanosecond.
    assert_eq!(
        simulate(Strategy::Full, 10, 5, Duration::ZERO).bin,
        sim::MIN_BIN
    );
}

#[test]
fn a_seed_fixes_the_run() {
    for strategy in Strategy::ALL {
        let bin = Duration::from_millis(10);
        assert_eq!(
            simulate(strategy, 50, 8, bin),
            simulate(strategy, 50, 8, bin)
        );
    }
    // Network delays and jitter come from the seed: another seed, another run.
    assert_ne!(
        simulate(Strategy::Full, 50, 8, Duration::MAX),
        simulate(Strategy::Full, 50, 9, Duration::MAX)
    );
}
