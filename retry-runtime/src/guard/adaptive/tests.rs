//! The rule's arithmetic and its bounds under hostile samples.
use super::*;
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);

fn ok(ms: u64, k: u32) -> Sample {
    Sample::ok(MS * u32::try_from(ms).unwrap(), k)
}

fn estimate(limit: &AdaptiveLimit) -> f64 {
    limit.lock().estimate
}

#[test]
fn an_overload_cuts_by_backoff_or_under_the_attempts_in_flight() {
    let limit = AdaptiveLimit::new(20);
    limit.sample(Sample::overloaded(MS, 19));
    assert!((estimate(&limit) - 18.0).abs() < 1e-9, "min(20 × 0.9, 18)");
    limit.sample(Sample::overloaded(MS, 5));
    assert_eq!(limit.limit(), 4, "min(18 × 0.9, 4)");
    // A stale one (started under the old limit) only applies k − 1.
    limit.sample(Sample::overloaded(MS, 19));
    assert_eq!(limit.limit(), 4);
    assert_eq!(limit.lock().ceiling, 5.0, "the least overloaded k");
}

#[test]
fn successes_grow_one_per_round_trip_far_from_the_ceiling() {
    let limit = AdaptiveLimit::new(10);
    for _ in 0..10 {
        limit.sample(ok(100, 10));
    }
    let after = estimate(&limit);
    assert!((10.9..11.0).contains(&after), "{after}");
}

#[test]
fn within_one_of_the_ceiling_it_probes_once_per_probe_successes() {
    // A power of two: the sixty-four steps of 1/64 add up exactly.
    let limit = AdaptiveLimit::new(20).probe(64);
    limit.sample(Sample::overloaded(MS, 3));
    assert_eq!(limit.limit(), 2);
    for i in 1..64 {
        limit.sample(ok(100, 2));
        assert_eq!(limit.limit(), 2, "after {i} successes");
    }
    limit.sample(ok(100, 2));
    assert_eq!(limit.limit(), 3, "the 64th success lifts it to the ceiling");
    // The probe meets the cap again: back to 2, same ceiling.
    limit.sample(Sample::overloaded(MS, 3));
    assert_eq!(limit.limit(), 2);
    assert_eq!(limit.lock().ceiling, 3.0);
}

#[test]
fn a_probe_that_goes_through_clears_the_ceiling() {
    let limit = AdaptiveLimit::new(20).probe(64);
    limit.sample(Sample::overloaded(MS, 9));
    assert_eq!(limit.limit(), 8);
    for _ in 0..64 {
        limit.sample(ok(100, 8));
    }
    assert_eq!(limit.limit(), 9);
    // 9 in flight succeeded: the cap rose; one more per round trip.
    limit.sample(ok(100, 9));
    assert_eq!(limit.lock().ceiling, f64::INFINITY);
    for _ in 0..9 {
        limit.sample(ok(100, 9));
    }
    assert_eq!(limit.limit(), 10);
}

#[test]
fn an_idle_caller_does_not_grow_it() {
    let limit = AdaptiveLimit::new(20);
    for _ in 0..1000 {
        limit.sample(ok(100, 5));
    }
    assert_eq!(limit.limit(), 20, "5 in flight says nothing of 20");
}

#[test]
fn a_latency_rise_cuts_once_per_round_trip_and_stops_growth() {
    let limit = AdaptiveLimit::new(10);
    for _ in 0..50 {
        limit.sample(ok(100, 10));
    }
    // Latency triples: the short-term average passes 2× within a few.
    let mut cut = None;
    for i in 0..12 {
        let before = estimate(&limit);
        limit.sample(ok(300, 10));
        let after = estimate(&limit);
        match cut {
            None if after < before => {
                assert!((after - before * 0.9).abs() < 1e-9);
                cut = Some(i);
            }
            None => assert!(after > before, "grows until the average passes 2×"),
            Some(_) => assert_eq!(after, before, "no growth, no second cut"),
        }
    }
    assert_eq!(cut, Some(3), "0.1 → 0.14 → 0.172 → 0.198 → 0.218 s");
}

#[test]
fn a_provider_that_stays_slower_costs_one_cut_then_is_the_new_normal() {
    let limit = AdaptiveLimit::new(10);
    for _ in 0..50 {
        limit.sample(ok(100, limit.limit()));
    }
    let before = estimate(&limit);
    let mut cuts = 0;
    for _ in 0..200 {
        let last = estimate(&limit);
        limit.sample(ok(300, limit.limit()));
        cuts += usize::from(estimate(&limit) < last);
    }
    assert_eq!(cuts, 1, "the rise did not fall after the cut");
    let state = *limit.lock();
    assert!(
        (state.baseline - 0.3 / 2_f64.sqrt()).abs() < 0.01,
        "{state:?}"
    );
    assert!(estimate(&limit) > before, "growing again: {state:?}");
}

#[test]
fn a_queue_of_its_own_is_cut_while_cutting_brings_the_latency_down() {
    // A server that queues above 8: 100 ms × max(1, k / 8).
    let limit = AdaptiveLimit::new(8);
    let mut lowest = u32::MAX;
    for i in 0..5000 {
        let k = limit.limit();
        limit.sample(ok(100 * u64::from(k.max(8)) / 8, k));
        if i > 1000 {
            lowest = lowest.min(limit.limit());
        }
    }
    // Held where the latency is about twice the unloaded one.
    assert!((14..=17).contains(&limit.limit()), "{limit:?}");
    assert!(lowest >= 14, "{lowest}");
    assert!((limit.lock().baseline - 0.1).abs() < 1e-9, "never moved up");
}

#[test]
fn jitter_and_a_rise_below_the_tolerance_do_not_cut() {
    let limit = AdaptiveLimit::new(10);
    for i in 0..2000_u64 {
        // 80..120 ms, then 30 % slower: as the simulated server near its cap.
        let ms = 80 + (i * 37) % 41;
        let ms = if i > 1000 { ms * 13 / 10 } else { ms };
        let before = estimate(&limit);
        limit.sample(ok(ms, limit.limit()));
        let after = estimate(&limit);
        assert!(before.is_nan() || after > before, "sample {i}: no cut");
    }
}

#[test]
fn one_stuck_attempt_does_not_cut() {
    let limit = AdaptiveLimit::new(10);
    for _ in 0..50 {
        limit.sample(ok(100, 10));
    }
    let before = limit.limit();
    limit.sample(Sample::ok(Duration::MAX, 10));
    for _ in 0..5 {
        limit.sample(ok(100, 10));
    }
    assert!(limit.limit() >= before, "counted as 2 × tolerance at most");
}

#[test]
fn a_drop_cuts_once_per_round_trip_and_sets_no_ceiling() {
    let limit = AdaptiveLimit::new(10);
    for _ in 0..10 {
        limit.sample(ok(100, 10));
    }
    let before = estimate(&limit);
    for _ in 0..5 {
        limit.sample(Sample::dropped(Duration::from_secs(30), 10));
    }
    assert!((estimate(&limit) - before * 0.9).abs() < 1e-9);
    assert_eq!(limit.lock().ceiling, f64::INFINITY);
}

#[test]
fn hostile_samples_keep_it_in_bounds() {
    let limit = AdaptiveLimit::new(20).min(2).max(30);
    let hostile = [
        Sample::ok(Duration::ZERO, 0),
        Sample::ok(Duration::MAX, u32::MAX),
        Sample::overloaded(Duration::MAX, 0),
        Sample::overloaded(Duration::ZERO, u32::MAX),
        Sample::overloaded(Duration::ZERO, 1),
        Sample::dropped(Duration::MAX, u32::MAX),
        Sample::dropped(Duration::ZERO, 0),
        Sample::ok(Duration::from_nanos(1), 30),
        Sample::ok(Duration::MAX, 30),
    ];
    for _ in 0..100 {
        for sample in hostile {
            limit.sample(sample);
            assert!((2..=30).contains(&limit.limit()), "{sample:?}: {limit:?}");
            let state = *limit.lock();
            assert!(state.estimate.is_finite());
            assert!(state.short.is_finite() && state.baseline.is_finite());
        }
    }
    // Zero latencies alone leave no baseline of zero.
    let zero = AdaptiveLimit::new(4);
    for _ in 0..100 {
        zero.sample(Sample::ok(Duration::ZERO, 4));
    }
    assert_eq!(zero.lock().baseline, 0.0);
    assert!(zero.limit() > 4);
}

#[test]
fn builders_hold_the_start_and_fix_zero() {
    assert_eq!(AdaptiveLimit::new(0).min(0).get_min(), 1);
    assert_eq!(AdaptiveLimit::new(0).limit(), 1);
    assert_eq!(AdaptiveLimit::new(50).max(u32::MAX).limit(), 50);
    assert_eq!(AdaptiveLimit::new(20).probe(0).get_probe(), 1);
    let limit = AdaptiveLimit::new(u32::MAX).max(u32::MAX);
    assert_eq!(limit.limit(), u32::MAX);
    for _ in 0..10 {
        limit.sample(Sample::ok(MS, u32::MAX));
    }
    assert_eq!(limit.limit(), u32::MAX);
    limit.sample(Sample::overloaded(MS, u32::MAX));
    assert_eq!(limit.limit(), (f64::from(u32::MAX) * 0.9) as u32);
}

mod props {
    use proptest::prelude::*;

    use super::*;

    fn sample() -> impl Strategy<Value = Sample> {
        let latency = prop_oneof![
            Just(Duration::ZERO),
            Just(Duration::MAX),
            (0_u64..10_000_000_000).prop_map(Duration::from_nanos),
            any::<u64>().prop_map(Duration::from_nanos),
        ];
        let in_flight = prop_oneof![Just(0_u32), Just(u32::MAX), 0_u32..100, any::<u32>()];
        let outcome = prop_oneof![
            Just(SampleOutcome::Ok),
            Just(SampleOutcome::Overloaded),
            Just(SampleOutcome::Dropped),
        ];
        (latency, in_flight, outcome).prop_map(|(l, k, o)| Sample::new(l, k, o))
    }

    proptest! {
        #[test]
        fn the_limit_stays_within_min_and_max(
            initial in any::<u32>(),
            min in 0_u32..50,
            span in 0_u32..100,
            backoff in 0.01_f64..0.99,
            smoothing in 0.01_f64..=1.0,
            tolerance in prop_oneof![1.01_f64..10.0, Just(f64::INFINITY), Just(f64::MAX)],
            probe in any::<u32>(),
            samples in prop::collection::vec(sample(), 0..200),
        ) {
            let limit = AdaptiveLimit::new(initial)
                .min(min)
                .max(min.max(1) + span)
                .backoff(backoff)
                .smoothing(smoothing)
                .tolerance(tolerance)
                .probe(probe);
            let (lo, hi) = (limit.get_min(), limit.get_max());
            prop_assert!((lo..=hi).contains(&limit.limit()));
            for sample in samples {
                limit.sample(sample);
                prop_assert!((lo..=hi).contains(&limit.limit()), "{sample:?}");
                let state = *limit.lock();
                prop_assert!(state.estimate.is_finite());
                prop_assert!(state.short.is_finite() && state.baseline.is_finite());
            }
        }
    }
}
