//! Backoff formulas and jitter.
//!
//! Everything here works in integer nanoseconds (`u64`, about 584 years),
//! saturating, so no retry number and no duration can overflow or panic.
use std::cell::Cell;
use std::hash::{BuildHasher, RandomState};

use rand::rngs::SmallRng;
use rand::{Rng, RngExt, SeedableRng};

use crate::clock::saturating_nanos;

/// How a computed backoff ceiling is randomised.
///
/// For retry `n` (`n = 1` for the first retry) the ceiling is
/// `c = min(cap, base * 2^(n-1))`, and the delay is:
///
/// | jitter | delay |
/// |---|---|
/// | `None` | `c` |
/// | `Full` (the default) | uniform in `[0, c]` |
/// | `Equal` | `c/2` + uniform in `[0, c/2]` |
/// | `Decorrelated` | `min(cap, uniform in [base, 3 * previous])`, `previous` being the last such delay (`base` before the first) |
///
/// No delay is ever above `cap`. Randomness comes from a per-thread RNG that
/// [`seed_jitter`] makes deterministic.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Jitter, Policy};
///
/// assert_eq!(Jitter::default(), Jitter::Full);
/// const POLICY: Policy = Policy::new().jitter(Jitter::Decorrelated);
/// assert_eq!(POLICY.get_jitter(), Jitter::Decorrelated);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Jitter {
    /// No randomness: wait the ceiling.
    None,
    /// Uniform in `[0, ceiling]`.
    #[default]
    Full,
    /// Half the ceiling plus uniform in `[0, ceiling / 2]`.
    Equal,
    /// `min(cap, uniform in [base, 3 * previous])`.
    Decorrelated,
}

impl Jitter {
    /// The name `#[retry(jitter = "...")]` takes: `"none"`, `"full"`,
    /// `"equal"` or `"decorrelated"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Full => "full",
            Self::Equal => "equal",
            Self::Decorrelated => "decorrelated",
        }
    }
}

/// `min(cap, base * 2^(retry-1))`, saturating; retry 0 counts as retry 1.
pub(crate) const fn ceiling(base: u64, cap: u64, retry: u32) -> u64 {
    let shift = retry.saturating_sub(1);
    let grown = if base == 0 {
        0
    } else if shift > base.leading_zeros() {
        // The top bit would be shifted out.
        u64::MAX
    } else {
        base << shift
    };
    if grown < cap { grown } else { cap }
}

/// The delay before retry `retry` (1-based), in nanoseconds.
///
/// `prev` is the previous delay this function returned for the same call
/// (`base` before the first retry); only `Decorrelated` reads it.
pub(crate) fn delay<R: Rng + ?Sized>(
    jitter: Jitter,
    base: u64,
    cap: u64,
    retry: u32,
    prev: u64,
    rng: &mut R,
) -> u64 {
    match jitter {
        Jitter::None => ceiling(base, cap, retry),
        Jitter::Full => rng.random_range(0..=ceiling(base, cap, retry)),
        Jitter::Equal => {
            let c = ceiling(base, cap, retry);
            let half = c / 2;
            // `c - half` rather than `half`: the top of the range is `c`
            // itself even when `c` is odd.
            half + rng.random_range(0..=c - half)
        }
        Jitter::Decorrelated => {
            // `max(base)` keeps the range non-empty when `prev` was capped
            // below `base` (cap < base); the draw is then capped anyway.
            let hi = prev.saturating_mul(3).max(base);
            rng.random_range(base..=hi).min(cap)
        }
    }
}

/// The delay before retry `retry` (1 for the first retry) under `jitter`,
/// drawn from `rng`: the formula `#[retry]` and [`Policy`](crate::Policy)
/// use, as a pure function.
///
/// `prev` is the delay this function returned for the previous retry of the
/// same call, or `base` before the first; only [`Jitter::Decorrelated`]
/// reads it. The result is never above `cap`; durations beyond `u64`
/// nanoseconds (about 584 years) saturate, and no `retry` overflows or
/// panics. A server's `Retry-After` hint is not involved: this is the
/// backoff alone.
///
/// For simulations and for loops written by hand that need their own seeded
/// RNG (any `rand` 0.10 [`Rng`]) rather than the per-thread one
/// [`seed_jitter`] seeds.
///
/// ```
/// use std::time::Duration;
/// use rand::{SeedableRng, rngs::SmallRng};
/// use tenacious::{Jitter, backoff_delay};
///
/// let (base, cap) = (Duration::from_millis(100), Duration::from_secs(1));
/// let mut rng = SmallRng::seed_from_u64(7);
///
/// // Without jitter: 100 ms, 200 ms, 400 ms, 800 ms, then the cap.
/// let ceilings: Vec<_> = (1..=5)
///     .map(|n| backoff_delay(Jitter::None, base, cap, n, base, &mut rng))
///     .collect();
/// assert_eq!(ceilings[3], Duration::from_millis(800));
/// assert_eq!(ceilings[4], cap);
///
/// // Full jitter: anywhere up to the ceiling.
/// let third = backoff_delay(Jitter::Full, base, cap, 3, base, &mut rng);
/// assert!(third <= Duration::from_millis(400));
///
/// // Decorrelated: each delay feeds the next.
/// let mut prev = base;
/// for n in 1..=10 {
///     prev = backoff_delay(Jitter::Decorrelated, base, cap, n, prev, &mut rng);
///     assert!(prev >= base && prev <= cap);
/// }
/// ```
pub fn backoff_delay<R: Rng + ?Sized>(
    jitter: Jitter,
    base: std::time::Duration,
    cap: std::time::Duration,
    retry: u32,
    prev: std::time::Duration,
    rng: &mut R,
) -> std::time::Duration {
    std::time::Duration::from_nanos(delay(
        jitter,
        saturating_nanos(base),
        saturating_nanos(cap),
        retry,
        saturating_nanos(prev),
        rng,
    ))
}

thread_local! {
    // `Cell<Option<_>>` of a type without drop glue: no destructor is
    // registered and no heap is touched, so drawing never allocates.
    static JITTER_RNG: Cell<Option<SmallRng>> = const { Cell::new(None) };
}

/// Runs `f` with this thread's jitter RNG, seeding it on first use.
pub(crate) fn with_thread_rng<T>(f: impl FnOnce(&mut SmallRng) -> T) -> T {
    // Taken out and put back rather than borrowed, so there is no borrow
    // flag to panic on; if the thread-local is already gone (thread exit), a
    // fresh RNG serves this one draw.
    let mut rng = JITTER_RNG
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_else(os_seeded);
    let out = f(&mut rng);
    let _ = JITTER_RNG.try_with(|cell| cell.set(Some(rng)));
    out
}

/// A fresh RNG seeded from the OS through std's hash keys: they are drawn
/// from the OS once per thread and never repeat within it, so this needs no
/// extra dependency and has no failure path of its own.
fn os_seeded() -> SmallRng {
    SmallRng::seed_from_u64(RandomState::new().hash_one(0x7e4a_c105_u64))
}

/// Reseeds this thread's jitter RNG, so the delays that follow on this
/// thread are the same on every run.
///
/// The RNG is per thread: in async tests use a current-thread runtime
/// (`#[tokio::test]` is one) so every attempt draws from the seeded RNG.
/// Without a call to this function the RNG is seeded from the OS on first
/// use.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Policy, seed_jitter};
///
/// let policy = Policy::new().max(4).base(Duration::from_millis(1));
/// let delays = || {
///     let mut seen = Vec::new();
///     let _ = policy.retry_blocking_with(
///         || Err::<(), _>(std::io::Error::from(std::io::ErrorKind::TimedOut)),
///         |_| true,
///         |_, event| seen.push(event.delay),
///     );
///     seen
/// };
/// seed_jitter(7);
/// let first = delays();
/// seed_jitter(7);
/// assert_eq!(delays(), first);
/// ```
pub fn seed_jitter(seed: u64) {
    let _ = JITTER_RNG.try_with(|cell| cell.set(Some(SmallRng::seed_from_u64(seed))));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    fn rng(seed: u64) -> SmallRng {
        SmallRng::seed_from_u64(seed)
    }

    #[test]
    fn ceiling_doubles_from_base_then_caps() {
        let ceilings: Vec<_> = (1..=6).map(|n| ceiling(100 * MS, 1_000 * MS, n)).collect();
        assert_eq!(
            ceilings,
            [
                100 * MS,
                200 * MS,
                400 * MS,
                800 * MS,
                1_000 * MS,
                1_000 * MS
            ]
        );
        // Retry 0 is not a retry; it gets the first retry's ceiling.
        assert_eq!(ceiling(100 * MS, 1_000 * MS, 0), 100 * MS);
    }

    #[test]
    fn ceiling_saturates_instead_of_overflowing() {
        assert_eq!(ceiling(1, u64::MAX, 64), 1 << 63);
        assert_eq!(ceiling(1, u64::MAX, 65), u64::MAX);
        assert_eq!(ceiling(3, u64::MAX, 63), 3 << 62);
        assert_eq!(ceiling(3, u64::MAX, 64), u64::MAX);
        assert_eq!(ceiling(u64::MAX, u64::MAX, u32::MAX), u64::MAX);
        assert_eq!(ceiling(0, u64::MAX, u32::MAX), 0);
    }

    #[test]
    fn no_jitter_is_the_ceiling() {
        let mut r = rng(1);
        let delays: Vec<_> = (1..=4)
            .map(|n| delay(Jitter::None, 10, 50, n, 0, &mut r))
            .collect();
        assert_eq!(delays, [10, 20, 40, 50]);
    }

    #[test]
    fn cap_below_base_makes_every_ceiling_the_cap() {
        for n in 1..=10 {
            assert_eq!(ceiling(100, 30, n), 30);
        }
        // Without jitter, and with decorrelated jitter (whose draws start at
        // base), that is every delay.
        for jitter in [Jitter::None, Jitter::Decorrelated] {
            let mut r = rng(2);
            let mut prev = 100;
            for n in 1..=10 {
                prev = delay(jitter, 100, 30, n, prev, &mut r);
                assert_eq!(prev, 30, "{jitter:?} retry {n}");
            }
        }
    }

    #[test]
    fn zero_base_means_no_wait() {
        for jitter in [
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
        ] {
            let mut r = rng(3);
            let mut prev = 0;
            for n in [1, 2, 40, u32::MAX] {
                prev = delay(jitter, 0, u64::MAX, n, prev, &mut r);
                assert_eq!(prev, 0, "{jitter:?} retry {n}");
            }
        }
    }

    #[test]
    fn jitter_actually_varies() {
        // A constant `Full` would pass every bound check; make sure it draws.
        let mut r = rng(4);
        let draws: std::collections::HashSet<_> = (0..64)
            .map(|_| delay(Jitter::Full, MS, 1_000 * MS, 3, MS, &mut r))
            .collect();
        assert!(draws.len() > 32, "{draws:?}");
    }

    #[test]
    fn same_seed_same_delays() {
        let run = |seed| {
            let mut r = rng(seed);
            let mut prev = MS;
            (1..=8)
                .map(|n| {
                    prev = delay(Jitter::Decorrelated, MS, 100 * MS, n, prev, &mut r);
                    prev
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
    }

    #[test]
    fn seeding_the_thread_rng_makes_it_repeat() {
        let draw = || with_thread_rng(|r| r.random_range(0..=u64::MAX));
        seed_jitter(11);
        let first = (draw(), draw());
        seed_jitter(11);
        assert_eq!((draw(), draw()), first);
    }

    #[test]
    fn threads_seeded_from_the_os_differ() {
        let draw = || {
            std::thread::spawn(|| with_thread_rng(|r| r.random_range(0..=u64::MAX)))
                .join()
                .unwrap()
        };
        assert_ne!(draw(), draw());
    }

    fn any_jitter() -> impl Strategy<Value = Jitter> {
        prop_oneof![
            Just(Jitter::None),
            Just(Jitter::Full),
            Just(Jitter::Equal),
            Just(Jitter::Decorrelated),
        ]
    }

    // Nanosecond counts that reach the edges (0, u64::MAX) as often as the
    // middle, so saturation paths are exercised.
    fn any_nanos() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(0),
            Just(u64::MAX),
            0..=10_000u64,
            any::<u64>(),
            (0..64u32).prop_map(|s| 1u64 << s),
        ]
    }

    fn any_retry() -> impl Strategy<Value = u32> {
        prop_oneof![Just(0), Just(u32::MAX), 0..=130u32, any::<u32>()]
    }

    proptest! {
        #[test]
        fn never_above_cap(
            jitter in any_jitter(),
            base in any_nanos(),
            cap in any_nanos(),
            retry in any_retry(),
            prev in any_nanos(),
            seed in any::<u64>(),
        ) {
            let d = delay(jitter, base, cap, retry, prev, &mut rng(seed));
            prop_assert!(d <= cap);
            prop_assert!(d <= ceiling(base, cap, retry) || jitter == Jitter::Decorrelated);
        }

        #[test]
        fn no_jitter_and_equal_stay_within_the_ceiling(
            base in any_nanos(),
            cap in any_nanos(),
            retry in any_retry(),
            seed in any::<u64>(),
        ) {
            let c = ceiling(base, cap, retry);
            prop_assert_eq!(delay(Jitter::None, base, cap, retry, 0, &mut rng(seed)), c);
            let equal = delay(Jitter::Equal, base, cap, retry, 0, &mut rng(seed));
            prop_assert!(equal >= c / 2 && equal <= c, "{} not in [{}, {}]", equal, c / 2, c);
        }

        #[test]
        fn ceiling_is_exact_when_it_fits(base in 1..=u64::MAX, retry in 1..=64u32) {
            let exact = u128::from(base) << (retry - 1);
            let expected = u64::try_from(exact).unwrap_or(u64::MAX);
            prop_assert_eq!(ceiling(base, u64::MAX, retry), expected);
        }

        #[test]
        fn decorrelated_stays_in_base_to_cap(
            base in any_nanos(),
            cap in any_nanos(),
            retries in 1..40usize,
            seed in any::<u64>(),
        ) {
            let mut r = rng(seed);
            let mut prev = base;
            for n in 1..=retries {
                let n = u32::try_from(n).unwrap();
                let d = delay(Jitter::Decorrelated, base, cap, n, prev, &mut r);
                prop_assert!(d >= base.min(cap) && d <= cap, "{} not in [{}, {}]", d, base.min(cap), cap);
                prop_assert!(d <= prev.saturating_mul(3).max(base));
                prev = d;
            }
        }
    }
}
