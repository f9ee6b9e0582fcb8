//! Fault injection: the realised rate, determinism per seed, each fault's
//! classification, and use under a retry policy.
use std::cell::Cell;
use std::time::Duration;

use tenacious_agent::chaos::{Chaos, ChaosError, Fault};
use tenacious_runtime::{Classify, ErrorClass, Policy};

const ROLLS: usize = 20_000;

fn failures(chaos: &Chaos) -> usize {
    (0..ROLLS).filter(|_| chaos.roll().is_some()).count()
}

#[test]
fn the_realised_rate_is_close_to_the_set_rate() {
    for (seed, rate) in [(1, 0.1), (2, 0.25), (3, 0.5), (4, 0.9)] {
        let realised = failures(&Chaos::new(seed).rate(rate)) as f64 / ROLLS as f64;
        // Five standard deviations of a binomial proportion at n = 20 000
        // is under 0.018 for any rate.
        assert!(
            (realised - rate).abs() < 0.02,
            "rate {rate}: realised {realised}"
        );
    }
}

#[test]
fn rates_zero_and_one_are_exact() {
    assert_eq!(failures(&Chaos::new(5).rate(0.0)), 0);
    assert_eq!(failures(&Chaos::new(5).rate(1.0)), ROLLS);
}

#[test]
fn out_of_range_rates_are_clamped_never_panic() {
    for (given, used) in [
        (-0.5, 0.0),
        (1.5, 1.0),
        (f64::NAN, 0.0),
        (f64::INFINITY, 1.0),
        (f64::NEG_INFINITY, 0.0),
    ] {
        let chaos = Chaos::new(0).rate(given);
        assert_eq!(chaos.get_rate(), used, "{given}");
        let _ = chaos.roll();
    }
}

#[test]
fn the_same_seed_gives_the_same_faults() {
    let sequence = |seed| {
        let chaos = Chaos::new(seed).rate(0.5);
        (0..500).map(|_| chaos.roll()).collect::<Vec<_>>()
    };
    assert_eq!(sequence(42), sequence(42));
    assert_ne!(sequence(42), sequence(43));
}

#[test]
fn every_configured_fault_is_picked_about_evenly() {
    let chaos = Chaos::new(11).rate(1.0);
    let mut counts = [0usize; 5];
    for _ in 0..ROLLS {
        let fault = chaos.roll().unwrap();
        let index = Fault::ALL.iter().position(|f| *f == fault).unwrap();
        counts[index] += 1;
    }
    for (fault, count) in Fault::ALL.iter().zip(counts) {
        let share = count as f64 / ROLLS as f64;
        assert!((share - 0.2).abs() < 0.02, "{fault:?}: {share}");
    }
}

#[test]
fn each_fault_is_classified_like_the_real_failure() {
    let wait = Duration::from_millis(1200);
    let expected = [
        (
            Fault::Transient,
            ErrorClass::Transient,
            None,
            "Transient",
            "a temporary failure: try again later or take another route",
            "injected fault: transient failure",
        ),
        (
            Fault::RateLimited(wait),
            ErrorClass::RateLimited,
            Some(wait),
            "RateLimited",
            "rate limited: wait as long as the server asks, then retry",
            "injected fault: rate limited, retry after 1.2s",
        ),
        (
            Fault::Timeout,
            ErrorClass::Transient,
            None,
            "Timeout",
            "the call timed out: try again later or ask for less at once",
            "injected fault: timed out",
        ),
        (
            Fault::InvalidOutput,
            ErrorClass::Invalid,
            None,
            "InvalidOutput",
            "the output does not validate: produce it again, fixed",
            "injected fault: invalid output",
        ),
        (
            Fault::Fatal,
            ErrorClass::Fatal,
            None,
            "Fatal",
            "a fault a human must fix: stop and tell the user",
            "injected fault: fatal failure",
        ),
    ];
    for (fault, class, retry_after, variant, hint, display) in expected {
        let error = ChaosError::from(fault);
        assert_eq!(error.fault(), fault);
        assert_eq!(error.classify(), class, "{fault:?}");
        assert_eq!(error.retry_after(), retry_after, "{fault:?}");
        assert_eq!(error.variant(), variant);
        assert_eq!(error.hint().as_deref(), Some(hint));
        assert_eq!(error.to_string(), display);
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error);
        assert_eq!(boxed.to_string(), display);
    }
}

#[test]
fn only_the_configured_faults_are_injected() {
    let chaos = Chaos::new(8)
        .rate(1.0)
        .faults(&[Fault::Timeout, Fault::Fatal]);
    for _ in 0..1_000 {
        assert!(matches!(chaos.roll(), Some(Fault::Timeout | Fault::Fatal)));
    }
    assert_eq!(Chaos::new(8).rate(1.0).faults(&[]).roll(), None);
}

#[derive(Debug, PartialEq)]
enum ToolError {
    Chaos(ChaosError),
}

impl From<ChaosError> for ToolError {
    fn from(e: ChaosError) -> Self {
        Self::Chaos(e)
    }
}

impl Classify for ToolError {
    fn classify(&self) -> ErrorClass {
        match self {
            Self::Chaos(e) => e.classify(),
        }
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::Chaos(e) => e.retry_after(),
        }
    }
}

#[test]
fn inject_skips_the_call_and_inject_after_loses_its_result() {
    let chaos = Chaos::new(3).rate(0.5).faults(&[Fault::Transient]);
    let calls = Cell::new(0);
    let mut outcomes = Vec::new();
    for _ in 0..200 {
        outcomes.push(chaos.inject(|| {
            calls.set(calls.get() + 1);
            Ok::<_, ToolError>(())
        }));
    }
    let ok = outcomes.iter().filter(|r| r.is_ok()).count();
    // A faulted call never reached the tool.
    assert_eq!(calls.get(), ok);
    assert!(ok > 0 && ok < 200);

    calls.set(0);
    let lost = (0..200)
        .filter(|_| {
            chaos
                .inject_after(|| {
                    calls.set(calls.get() + 1);
                    Ok::<_, ToolError>(())
                })
                .is_err()
        })
        .count();
    // Every call ran, some answers were lost on the way back.
    assert_eq!(calls.get(), 200);
    assert!(lost > 0 && lost < 200);
}

#[test]
fn the_tools_own_error_passes_through() {
    let chaos = Chaos::new(1).rate(0.0);
    let own = ToolError::Chaos(ChaosError::from(Fault::Fatal));
    assert_eq!(
        chaos.inject(|| Err::<(), _>(own)),
        Err(ToolError::Chaos(Fault::Fatal.into()))
    );
}

#[test]
fn a_retry_policy_absorbs_injected_transient_faults_deterministically() {
    let run = |seed| {
        let chaos = Chaos::new(seed)
            .rate(0.5)
            .faults(&[Fault::Transient, Fault::Timeout]);
        let mut attempts = 0;
        let mut outcomes = Vec::new();
        for _ in 0..50 {
            let result = Policy::new()
                .max(5)
                .base(Duration::ZERO)
                .retry_blocking(|| {
                    attempts += 1;
                    chaos.inject(|| Ok::<_, ToolError>("done"))
                });
            outcomes.push(result.is_ok());
        }
        (attempts, outcomes)
    };
    let (attempts, outcomes) = run(77);
    assert_eq!((attempts, outcomes.clone()), run(77));
    // At rate 0.5 and five attempts, a call fails only if all five do (1/32).
    let succeeded = outcomes.iter().filter(|ok| **ok).count();
    assert!(succeeded >= 40, "{succeeded} of 50");
    assert!(
        attempts > 50,
        "faults were injected and retried: {attempts}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_async_forms_inject_too() {
    let chaos = Chaos::new(2)
        .rate(1.0)
        .faults(&[Fault::RateLimited(Duration::from_secs(2))]);
    let mut created = false;
    let skipped: Result<(), ToolError> = chaos
        .inject_async(|| async {
            created = true;
            Ok(())
        })
        .await;
    assert!(!created);
    assert_eq!(
        skipped.unwrap_err().retry_after(),
        Some(Duration::from_secs(2))
    );

    let lost: Result<(), ToolError> = chaos
        .inject_after_async(|| async {
            created = true;
            Ok(())
        })
        .await;
    assert!(created);
    assert!(lost.is_err());

    let through: Result<u8, ToolError> = Chaos::new(2)
        .rate(0.0)
        .inject_async(|| async { Ok(9) })
        .await;
    assert_eq!(through, Ok(9));
}

#[test]
fn one_injector_is_shared_across_threads() {
    let chaos = std::sync::Arc::new(Chaos::new(4).rate(0.5));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let chaos = chaos.clone();
            std::thread::spawn(move || (0..1_000).filter(|_| chaos.roll().is_some()).count())
        })
        .collect();
    let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert!((1_800..=2_200).contains(&total), "{total}");
}
