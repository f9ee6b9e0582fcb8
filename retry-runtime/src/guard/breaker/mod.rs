//! [`Breaker`]: a circuit breaker on a provider's health, shared by every
//! call naming it, as a [`Guard`].
mod admit;
mod settings;
mod state;
mod window;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::clock::{saturating_nanos, since_epoch};
use crate::stats::GuardRecord;
use crate::{Admit, AttemptResult, ErrorClass, Guard, NextAttempt, Outcome};
use window::{BUCKETS, COUNT_MAX, Seen, TAG_MASK, pack_probes, unpack_probes};

/// A shared circuit breaker: when the provider behind the calls naming it
/// fails too often, it opens and stops every call at once, without the
/// attempt, until the provider had time to recover; then a few probes tell
/// whether it has.
///
/// - **What counts.** Only failures that say the provider is unhealthy: a
///   `Transient` error, or any error whose
///   [`signals`](crate::Classify::signals) say the provider is
///   [overloaded](crate::Signals::is_overloaded). `Invalid` (the request's
///   fault), `Fatal` (a key, a permission: no wait fixes it) and
///   `RateLimited` (the caller's own quota, the
///   [`Cooldown`](crate::Cooldown)'s business) count as nothing, however
///   many. A success counts as a success; an attempt not made as nothing.
/// - **Closed**, it lets every attempt go and keeps the counted outcomes of
///   the last [`window`](Breaker::window) (ten buckets of a tenth of it
///   each, so the window slides by a tenth). When a counted failure brings
///   `failures / total` to [`ratio`](Breaker::ratio) or above, with at
///   least [`min_throughput`](Breaker::min_throughput) outcomes in the
///   window, it opens.
/// - **Open**, for [`open_for`](Breaker::open_for): every attempt is
///   refused with [`StopReason::CircuitOpen`](crate::StopReason::CircuitOpen). Outcomes of attempts
///   admitted before it opened are ignored.
/// - **Half-open**, after that: it admits up to [`probes`](Breaker::probes)
///   attempts and refuses the others. When that many succeed, it closes
///   with a fresh window; one counted failure opens it again for
///   `open_for`. A probe not made (a later guard, or the deadline, stopped
///   its call, or its call was dropped while it waited) gives its slot
///   back, and so does one whose call is dropped during its attempt (a
///   caller's timeout, a `select!`). A probe answered with an error that
///   says nothing of health (rate limited, invalid) keeps its slot, as does
///   one that never reports (its process died): every slot is freed after
///   another `open_for`. (The breaker cannot tell a probe's outcome
///   from another attempt's: any success seen while half-open counts
///   towards closing it, any `NotMade` gives a slot back.)
///
/// # Defaults, against Polly and resilience4j
///
/// | setting | tenacious | Polly v8 | resilience4j |
/// |---|---|---|---|
/// | [`ratio`](Breaker::ratio) | 0.5 | 0.1 | 50 % |
/// | [`window`](Breaker::window) | 30 s | 30 s | the last 100 calls |
/// | [`min_throughput`](Breaker::min_throughput) | 10 | 100 | 100 calls |
/// | [`open_for`](Breaker::open_for) | 15 s | 5 s | 60 s |
/// | [`probes`](Breaker::probes) | 1 | 1 | 10 |
///
/// Those libraries guard services taking hundreds of requests a second.
/// A fleet of LLM agents makes a few calls a second to a provider, each
/// taking seconds: 100 calls in 30 s (Polly) is never reached, so the
/// breaker would never open, and a window of the last 100 calls
/// (resilience4j) spans minutes, so it would open long after the outage
/// began and stay tripped by it long after. Hence a time window of 30 s
/// needing only 10 outcomes. Providers fail a few percent of calls all the
/// time and overload spikes of 10–20 % are routine (the call's retries
/// absorb them): with 10 calls, Polly's 0.1 would open on one failure, so
/// half the calls failing for 30 s — an outage — it takes. Overload
/// episodes last tens of seconds: 5 s re-probes before the provider can
/// have recovered, 60 s is a long part of an agent task's budget; 15 s is
/// a few long completions. Every probe is a costly model call, so one.
///
/// A noisy provider (a tenth of answers 529 or 503 at random, whatever
/// the load) does not open it: half the window's outcomes must fail. In
/// the fleet simulation at 10 % noise (`cargo run --release --example
/// fleet -- --noise 10`) it refused no call in three runs. For a provider
/// whose background failure share runs higher, raise
/// [`ratio`](Breaker::ratio) above twice it, or
/// [`min_throughput`](Breaker::min_throughput), so the breaker hears an
/// outage and not the noise.
///
/// Lock-free: atomics on the calls' clock (tokio's for an async call,
/// paused in tests; the system's for a blocking one), nothing allocated
/// per attempt, one atomic load to admit while closed. Name it with
/// [`Policy::breaker`](crate::Policy::breaker) or `#[retry(breaker = NAME)]`.
/// While it is open a call stops before its first attempt too, returning
/// its error made from a [`Refused`](crate::Refused), if the error type can
/// say so ([`Classify::refused`](crate::Classify::refused): `io::Error`
/// does, an error of your own does with a variant holding a `Refused`);
/// an error type that cannot makes that first attempt, and the breaker
/// refuses its retries.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Breaker, BreakerState, Policy};
///
/// static PROVIDER: Breaker = Breaker::new();
/// const POLICY: Policy = Policy::new().breaker(&PROVIDER);
///
/// assert_eq!(PROVIDER.state(), BreakerState::Closed);
/// assert_eq!(PROVIDER.admits_in(), Duration::ZERO);
/// assert_eq!(PROVIDER.get_open_for(), Duration::from_secs(15));
/// ```
#[derive(Debug)]
pub struct Breaker {
    /// 0 when closed; else when it opened, nanoseconds since the guard
    /// epoch: open for `open_for` from then, half-open after.
    opened: AtomicU64,
    /// The half-open phase's probes (see [`TAG_MASK`]).
    probes_out: AtomicU64,
    /// The sampling window (see [`VALID`]), bucket `n` at `n % BUCKETS`.
    buckets: [AtomicU64; BUCKETS as usize],
    /// The first sampled outcome's time (guard epoch nanoseconds, never 0):
    /// the window's buckets count from it.
    origin: AtomicU64,
    openings: AtomicU64,
    closings: AtomicU64,
    probes_admitted: AtomicU64,
    ratio: f64,
    window: u64,
    min_throughput: u32,
    open_for: u64,
    probes: u16,
    pub(crate) record: GuardRecord,
    pub(crate) shared: crate::store::StoreSlot<dyn crate::store::BreakerStore>,
}

/// Where a [`Breaker`] stands, from [`Breaker::state`].
///
/// ```
/// use tenacious::{Breaker, BreakerState};
///
/// assert_eq!(Breaker::new().state(), BreakerState::Closed);
/// assert_eq!(BreakerState::HalfOpen.as_str(), "half_open");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BreakerState {
    /// Attempts go; counted outcomes are sampled.
    Closed,
    /// Every attempt is refused with [`StopReason::CircuitOpen`](crate::StopReason::CircuitOpen).
    Open,
    /// A few probe attempts go, the others are refused.
    HalfOpen,
}

impl BreakerState {
    /// `"closed"`, `"open"` or `"half_open"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Open => "open",
            Self::HalfOpen => "half_open",
        }
    }
}

/// What a [`Breaker`] did since it was made, from [`Breaker::stats`]:
/// counters kept in atomics, read one by one (not a snapshot at one
/// instant). `stopped` is its [`GuardRecord`](crate::stats::GuardRecord)'s,
/// the count [`stats::snapshot`](crate::stats::snapshot) lists (and
/// [`stats::reset`](crate::stats::reset) zeroes).
///
/// ```
/// use tenacious::{Breaker, BreakerStats};
///
/// static PROVIDER: Breaker = Breaker::new();
/// let stats: BreakerStats = PROVIDER.stats();
/// assert_eq!((stats.stopped, stats.opened, stats.closed, stats.probes), (0, 0, 0, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct BreakerStats {
    /// Attempts it refused with [`StopReason::CircuitOpen`](crate::StopReason::CircuitOpen) (a call's first
    /// attempt included, which is made anyway, see [`Guard`]).
    pub stopped: u64,
    /// Times it opened: from closed, or again after a failed probe.
    pub opened: u64,
    /// Times it closed after its probes succeeded.
    pub closed: u64,
    /// Probe attempts it admitted while half-open.
    pub probes: u64,
}

impl Breaker {
    /// A closed breaker with the default settings (see the type's docs).
    #[must_use]
    pub const fn new() -> Self {
        Self {
            opened: AtomicU64::new(0),
            probes_out: AtomicU64::new(0),
            buckets: [const { AtomicU64::new(0) }; BUCKETS as usize],
            origin: AtomicU64::new(0),
            openings: AtomicU64::new(0),
            closings: AtomicU64::new(0),
            probes_admitted: AtomicU64::new(0),
            ratio: Self::RATIO,
            window: saturating_nanos(Self::WINDOW),
            min_throughput: Self::MIN_THROUGHPUT,
            open_for: saturating_nanos(Self::OPEN_FOR),
            #[allow(clippy::cast_possible_truncation)] // 1
            probes: Self::PROBES as u16,
            record: GuardRecord::new("breaker", "breaker"),
            shared: crate::store::StoreSlot::new(),
        }
    }

    crate::stats::guard_name!(Breaker, ANTHROPIC, "anthropic", "breaker");

    /// Closes it now, by hand, with a fresh window and no probe out: for
    /// an operator who knows the provider is serving again (or a test).
    /// Its statistics stay. Bound to a store (feature `redis`), the
    /// fleet's breaker closes too, in every process at its next read.
    ///
    /// ```
    /// use tenacious::{Breaker, BreakerState};
    ///
    /// static PROVIDER: Breaker = Breaker::new();
    /// PROVIDER.reset();
    /// assert_eq!(PROVIDER.state(), BreakerState::Closed);
    /// ```
    pub fn reset(&self) {
        self.opened.store(0, Ordering::Release);
        self.probes_out.store(0, Ordering::Release);
        for bucket in &self.buckets {
            bucket.store(0, Ordering::Release);
        }
        self.origin.store(0, Ordering::Release);
        self.record.changed("reset by hand");
        if let Some(shared) = self.shared.get() {
            shared.reset();
        }
    }

    /// What it did so far: attempts stopped, openings, closings, probes.
    #[must_use]
    pub fn stats(&self) -> BreakerStats {
        BreakerStats {
            stopped: self.record.snapshot().stopped,
            opened: self.openings.load(Ordering::Relaxed),
            closed: self.closings.load(Ordering::Relaxed),
            probes: self.probes_admitted.load(Ordering::Relaxed),
        }
    }
}

impl Default for Breaker {
    /// [`Breaker::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl Guard for Breaker {
    /// Go while closed; while open, [`StopReason::CircuitOpen`](crate::StopReason::CircuitOpen); while
    /// half-open, Go for a free probe slot, else `CircuitOpen`.
    #[inline]
    fn admit(&self, next: &NextAttempt) -> Admit {
        if let Some(shared) = self.shared.get() {
            // Bound to a store: the fleet's state, mirrored (in process
            // while Redis is down).
            if shared.is_up() {
                return shared.admit(next);
            }
            shared.local_decision();
        }
        self.admit_here(next)
    }

    /// Bound to a store (feature `redis`): a probe's slot from the fleet's
    /// half-open breaker, or in process when Redis fails to answer.
    fn admit_async(&self, next: NextAttempt) -> crate::PendingAdmit<'_> {
        if let Some(shared) = self.shared.get() {
            return shared.probe(next);
        }
        Box::pin(std::future::ready(self.admit_here(&next)))
    }

    /// Closed: samples a success or a counted failure, and opens at the
    /// ratio. Open: ignores it. Half-open: a counted failure reopens it, a
    /// success counts towards closing it, an attempt not made gives a probe
    /// slot back. Other failures count as nothing. See the type's docs.
    fn record(&self) -> Option<&GuardRecord> {
        Some(&self.record)
    }

    /// [`admits_in_at`](Breaker::admits_in_at) the attempt's `now`.
    fn retry_in(&self, next: &NextAttempt) -> Option<Duration> {
        Some(self.admits_in_at(next.now))
    }

    fn observe(&self, outcome: &Outcome) {
        if let Some(shared) = self.shared.get() {
            shared.observe(outcome);
        }
        let seen = match outcome.result {
            AttemptResult::Success => Seen::Success,
            AttemptResult::Failure { class, .. }
                if class == ErrorClass::Transient || outcome.signals.is_overloaded() =>
            {
                Seen::Unhealthy
            }
            AttemptResult::Failure { .. } => return,
            AttemptResult::NotMade => Seen::NotMade,
        };
        let opened = self.opened.load(Ordering::Acquire);
        let now = since_epoch(outcome.now);
        if opened == 0 {
            let failed = match seen {
                Seen::Success => false,
                Seen::Unhealthy => true,
                Seen::NotMade => return,
            };
            self.sample(now, failed);
            if failed {
                // Weighed only when a failure is added: a success never
                // opens it.
                let (failures, total) = self.sampled(now);
                #[allow(clippy::cast_precision_loss)] // counts below 2^20
                let tripped = total >= u64::from(self.min_throughput)
                    && failures as f64 >= self.ratio * total as f64;
                if tripped {
                    self.open(0, now);
                }
            }
            return;
        }
        if now < opened.saturating_add(self.open_for) {
            // Open: an attempt admitted before it opened.
            return;
        }
        let tag = opened & TAG_MASK;
        match seen {
            Seen::Unhealthy => self.open(opened, now),
            Seen::NotMade => {
                // A probe not made: its slot goes back.
                let _ = self
                    .probes_out
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |out| {
                        let (out_tag, taken, succeeded) = unpack_probes(out);
                        (out_tag == tag && taken > 0)
                            .then(|| pack_probes(tag, taken - 1, succeeded))
                    });
            }
            Seen::Success => {
                let probes = u64::from(self.probes);
                let succeeded = self
                    .probes_out
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |out| {
                        let (out_tag, taken, succeeded) = unpack_probes(out);
                        (out_tag == tag)
                            .then(|| pack_probes(tag, taken, (succeeded + 1).min(COUNT_MAX)))
                    })
                    .map_or(0, |out| unpack_probes(out).2 + 1);
                if succeeded >= probes
                    && self
                        .opened
                        .compare_exchange(opened, 0, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                {
                    for bucket in &self.buckets {
                        bucket.store(0, Ordering::Release);
                    }
                    self.closings.fetch_add(1, Ordering::Relaxed);
                    self.record.changed("closed");
                }
            }
        }
    }
}

impl Breaker {
    /// [`Guard::admit`] on this process's state alone.
    #[inline]
    #[doc(hidden)]
    pub fn admit_here(&self, next: &NextAttempt) -> Admit {
        match self.opened.load(Ordering::Acquire) {
            0 => Admit::Go,
            opened => self.admit_open(opened, since_epoch(next.now)),
        }
    }
}

/// Whether a breaker counts `outcome`, and as a failure: a success counts
/// as none, a transient or overloaded failure as one; anything else is not
/// counted.
pub fn counted(outcome: &Outcome) -> Option<bool> {
    match outcome.result {
        AttemptResult::Success => Some(false),
        AttemptResult::Failure { class, .. }
            if class == ErrorClass::Transient || outcome.signals.is_overloaded() =>
        {
            Some(true)
        }
        AttemptResult::Failure { .. } | AttemptResult::NotMade => None,
    }
}

crate::store::store_hooks!(Breaker, BreakerStore);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Signals;
    use crate::StopReason;
    use std::time::Instant;

    fn next(attempt: u32, now: Instant) -> NextAttempt {
        NextAttempt {
            attempt,
            max: 3,
            after_timeout: false,
            wait: Duration::ZERO,
            recheck: false,
            now,
            elapsed: None,
            deadline_left: None,
            max_retry_after: Duration::from_secs(120),
            queues: false,
        }
    }

    fn outcome(result: AttemptResult, signals: Signals, now: Instant) -> Outcome {
        Outcome {
            attempt: 1,
            after_timeout: false,
            result,
            signals,
            now,
            elapsed: None,
        }
    }

    fn failure(class: ErrorClass) -> AttemptResult {
        AttemptResult::Failure {
            class,
            hint: None,
            timed_out: false,
        }
    }

    const STOP: Admit = Admit::Stop(StopReason::CircuitOpen);

    /// A breaker opening after 4 counted outcomes half failed, open for
    /// 10 s, with `probes` probes; and a clock.
    fn breaker(probes: u32) -> (Breaker, Instant) {
        let breaker = Breaker::new()
            .min_throughput(4)
            .open_for(Duration::from_secs(10))
            .probes(probes);
        (breaker, Instant::now())
    }

    fn trip(breaker: &Breaker, now: Instant) {
        for result in [
            AttemptResult::Success,
            AttemptResult::Success,
            failure(ErrorClass::Transient),
        ] {
            breaker.observe(&outcome(result, Signals::NONE, now));
        }
        assert_eq!(breaker.state_at(now), BreakerState::Closed);
        breaker.observe(&outcome(failure(ErrorClass::Transient), Signals::NONE, now));
        assert_eq!(breaker.state_at(now), BreakerState::Open);
    }

    #[test]
    fn the_window_counts_from_its_first_outcome_wherever_the_clock_starts() {
        // 5 successes, then 9.6 s later 4 failures, in a window of 10 s (1 s
        // buckets): whether the successes still count depends on where
        // the bucket boundaries fall. They fall from the first outcome, so
        // every run gives the same answer, however its clock is offset.
        let t0 = Instant::now();
        let states: Vec<BreakerState> = [0, 250, 500, 750]
            .into_iter()
            .map(|offset| {
                let breaker = Breaker::new()
                    .window(Duration::from_secs(10))
                    .min_throughput(4);
                let start = t0 + Duration::from_millis(offset) + Duration::from_millis(500);
                for _ in 0..5 {
                    breaker.observe(&outcome(AttemptResult::Success, Signals::NONE, start));
                }
                let later = start + Duration::from_millis(9_600);
                for _ in 0..4 {
                    let failed = outcome(failure(ErrorClass::Transient), Signals::NONE, later);
                    breaker.observe(&failed);
                }
                breaker.state_at(later)
            })
            .collect();
        assert!(states.windows(2).all(|w| w[0] == w[1]), "{states:?}");
        // 9.6 s after the first outcome is still in its tenth bucket: the
        // successes count, 4 failures of 9 stay below half.
        assert_eq!(states[0], BreakerState::Closed);
    }

    #[test]
    fn it_refuses_even_a_first_attempt_while_open() {
        let (breaker, now) = breaker(1);
        assert_eq!(breaker.admit(&next(1, now)), Admit::Go);
        trip(&breaker, now);
        assert_eq!(breaker.admit(&next(1, now)), STOP);
        assert_eq!(breaker.admit(&next(2, now)), STOP);
        let later = now + Duration::from_millis(9_999);
        assert_eq!(breaker.admit(&next(1, later)), STOP);
        assert_eq!(breaker.admits_in_at(later), Duration::from_millis(1));
        assert_eq!(breaker.stats().stopped, 3);
        assert_eq!(breaker.stats().opened, 1);
    }

    #[test]
    fn only_transient_and_overloaded_failures_count() {
        let (breaker, now) = breaker(1);
        for class in [
            ErrorClass::Invalid,
            ErrorClass::Fatal,
            ErrorClass::RateLimited,
        ] {
            for _ in 0..300 {
                breaker.observe(&outcome(failure(class), Signals::NONE, now));
            }
        }
        assert_eq!(breaker.state_at(now), BreakerState::Closed);
        let overloaded = Signals::NONE.overloaded(true);
        for _ in 0..4 {
            breaker.observe(&outcome(failure(ErrorClass::RateLimited), overloaded, now));
        }
        assert_eq!(breaker.state_at(now), BreakerState::Open);
    }

    #[test]
    fn a_probe_success_closes_it_with_a_fresh_window() {
        let (breaker, now) = breaker(2);
        trip(&breaker, now);
        let half_open = now + Duration::from_secs(10);
        assert_eq!(breaker.state_at(half_open), BreakerState::HalfOpen);
        assert_eq!(breaker.admit(&next(2, half_open)), Admit::Go);
        assert_eq!(breaker.admits_in_at(half_open), Duration::ZERO);
        assert_eq!(breaker.admit(&next(2, half_open)), Admit::Go);
        assert_eq!(breaker.admit(&next(2, half_open)), STOP);
        assert_eq!(breaker.admits_in_at(half_open), Duration::from_secs(10));
        breaker.observe(&outcome(AttemptResult::Success, Signals::NONE, half_open));
        assert_eq!(breaker.state_at(half_open), BreakerState::HalfOpen);
        breaker.observe(&outcome(AttemptResult::Success, Signals::NONE, half_open));
        assert_eq!(breaker.state_at(half_open), BreakerState::Closed);
        // The window starts over: three failures of four do not reopen it
        // before the fourth outcome.
        for _ in 0..3 {
            breaker.observe(&outcome(
                failure(ErrorClass::Transient),
                Signals::NONE,
                half_open,
            ));
        }
        assert_eq!(breaker.state_at(half_open), BreakerState::Closed);
        let stats = breaker.stats();
        assert_eq!((stats.opened, stats.closed, stats.probes), (1, 1, 2));
    }

    #[test]
    fn a_probe_failure_reopens_it_and_a_probe_not_made_frees_its_slot() {
        let (breaker, now) = breaker(1);
        trip(&breaker, now);
        let half_open = now + Duration::from_secs(10);
        assert_eq!(breaker.admit(&next(2, half_open)), Admit::Go);
        assert_eq!(breaker.admit(&next(2, half_open)), STOP);
        breaker.observe(&outcome(AttemptResult::NotMade, Signals::NONE, half_open));
        assert_eq!(breaker.admit(&next(2, half_open)), Admit::Go);
        breaker.observe(&outcome(
            failure(ErrorClass::RateLimited),
            Signals::NONE,
            half_open,
        ));
        assert_eq!(breaker.state_at(half_open), BreakerState::HalfOpen);
        assert_eq!(breaker.admit(&next(2, half_open)), STOP, "keeps its slot");
        breaker.observe(&outcome(
            failure(ErrorClass::Transient),
            Signals::NONE,
            half_open,
        ));
        assert_eq!(breaker.state_at(half_open), BreakerState::Open);
        assert_eq!(breaker.admit(&next(2, half_open)), STOP);
        let again = half_open + Duration::from_secs(10);
        assert_eq!(breaker.admit(&next(2, again)), Admit::Go);
        assert_eq!(breaker.stats().opened, 2);
    }

    #[test]
    fn probes_that_never_report_free_their_slots_after_another_break() {
        let (breaker, now) = breaker(1);
        trip(&breaker, now);
        let half_open = now + Duration::from_secs(10);
        assert_eq!(breaker.admit(&next(2, half_open)), Admit::Go);
        let stuck = half_open + Duration::from_millis(9_999);
        assert_eq!(breaker.admit(&next(2, stuck)), STOP);
        let freed = half_open + Duration::from_secs(10);
        assert_eq!(breaker.admit(&next(2, freed)), Admit::Go);
        assert_eq!(breaker.admit(&next(2, freed)), STOP);
        assert_eq!(breaker.state_at(freed), BreakerState::HalfOpen);
    }

    #[test]
    fn outcomes_older_than_the_window_fall_out_of_it() {
        let breaker = Breaker::new()
            .min_throughput(4)
            .window(Duration::from_secs(10));
        let now = Instant::now();
        for _ in 0..3 {
            breaker.observe(&outcome(failure(ErrorClass::Transient), Signals::NONE, now));
        }
        let later = now + Duration::from_secs(12);
        breaker.observe(&outcome(
            failure(ErrorClass::Transient),
            Signals::NONE,
            later,
        ));
        assert_eq!(breaker.state_at(later), BreakerState::Closed);
        for _ in 0..3 {
            breaker.observe(&outcome(
                failure(ErrorClass::Transient),
                Signals::NONE,
                later,
            ));
        }
        assert_eq!(breaker.state_at(later), BreakerState::Open);
    }

    #[test]
    fn threads_racing_for_probe_slots_get_exactly_the_probes() {
        let (breaker, now) = breaker(3);
        trip(&breaker, now);
        let half_open = now + Duration::from_secs(10);
        let admitted: u32 = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..8)
                .map(|_| {
                    scope.spawn(|| {
                        (0..1_000)
                            .map(|_| u32::from(breaker.admit(&next(2, half_open)) == Admit::Go))
                            .sum::<u32>()
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).sum()
        });
        assert_eq!(admitted, 3);
        let stats = breaker.stats();
        assert_eq!((stats.probes, stats.stopped), (3, 7_997));
    }

    #[test]
    fn threads_failing_at_once_open_it_once() {
        let breaker = Breaker::new().min_throughput(100);
        let now = Instant::now();
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    for _ in 0..100 {
                        breaker.observe(&outcome(
                            failure(ErrorClass::Transient),
                            Signals::NONE,
                            now,
                        ));
                    }
                });
            }
        });
        assert_eq!(breaker.state_at(now), BreakerState::Open);
        assert_eq!(breaker.stats().opened, 1);
    }

    #[test]
    fn outcomes_while_open_are_ignored() {
        let (breaker, now) = breaker(1);
        trip(&breaker, now);
        let open = now + Duration::from_secs(5);
        for _ in 0..10 {
            breaker.observe(&outcome(AttemptResult::Success, Signals::NONE, open));
        }
        assert_eq!(breaker.state_at(open), BreakerState::Open);
        assert_eq!(
            breaker.state_at(now + Duration::from_secs(10)),
            BreakerState::HalfOpen
        );
    }
}
