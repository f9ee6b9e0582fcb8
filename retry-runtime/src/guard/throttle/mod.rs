//! [`Throttle`]: an adaptive client-side request rate shared by every call
//! naming it, as a [`Guard`] — the AWS SDKs' adaptive retry mode (CUBIC
//! after the first throttling response) plus pacing ahead of a 429 from the
//! provider's rate-limit headers.
mod admit;
mod bucket;
mod queue;
mod settings;
mod window;

pub use admit::{overload_only, throttled};
pub use window::MAX_RESET;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::clock::since_epoch;
use crate::stats::GuardRecord;
use crate::{Admit, Guard, NextAttempt, Outcome};
use bucket::{State, nanos_ceil};

/// A client-side request rate limiter shared by every call naming it: off
/// until the provider throttles, then an adaptive rate that every attempt
/// is paced to; paced ahead of any throttle by the provider's rate-limit
/// window when its headers say how much is left.
///
/// # The adaptive rate (AWS SDKs' adaptive retry mode)
///
/// - **Off until the first throttle.** Every attempt goes at once until an
///   attempt fails with [`ErrorClass::RateLimited`](crate::ErrorClass::RateLimited) or with
///   [`Signals::is_overloaded`](crate::Signals::is_overloaded). From then on the rate limiter stays on.
/// - **A token bucket paces the attempts.** Each attempt takes one token;
///   the bucket fills at the current rate and holds at most
///   `max(rate, 1)` tokens. An attempt with no token waits until one comes,
///   reserving it, so calls that ask at once get successive slots, not the
///   same one. A token that comes within the wait the call already plans
///   (its backoff and server hint) costs nothing more. A retry not made
///   after all gives its token back.
/// - **The starts keep to the rate too.** An attempt about to start now,
///   or after a wait (asked again, [`NextAttempt::recheck`]), goes only as
///   the rate allows starts (a GCRA at the rate, a bucket's worth at
///   once); else it waits, taking nothing more. Its token was taken when
///   its wait was planned; this keeps calls another guard held meanwhile
///   from starting in a burst — the [`Cooldown`](crate::Cooldown), asked
///   first, closes on a 429 and then releases its queue every 10 ms,
///   100 a second. *Not in smithy-rs*, whose rate limiter is asked once,
///   just before the send. In the fleet simulation (`examples/fleet.rs`,
///   64 workers against 10 requests a second, no rate-limit headers) this
///   took the throttle from 60 % of the quota served (6.6 % of requests
///   answered 429) to 97 % (3.6 %).
/// - **CUBIC sets the rate** (β = 0.7, C = 0.4, as the AWS SDKs and Tools
///   reference guide, "Retry behavior", and smithy-rs's
///   `client_rate_limiter.rs` have them). A throttle at time `t₀` records
///   `last_max = min(measured, rate)` (the measured send rate the first
///   time) and cuts the rate to `last_max × β`; a success at `t` sets it to
///   `W(t) = C × (t − t₀ − K)³ + last_max` with `K = ∛(last_max × (1 − β) /
///   C)`: back to `last_max` after `K` seconds, then faster. The rate is
///   never set above twice the measured send rate (half-second buckets,
///   smoothed 0.8 to the newest), never below
///   [`min_rate`](Throttle::min_rate) (default 0.5 a second), never above
///   [`max_rate`](Throttle::max_rate) (default unbounded).
///   Every throttle cuts, as in smithy-rs, even a burst of them: cutting
///   once per congestion episode (ignoring the throttles for a while
///   after a cut, as TCP does once per round trip) was tried in the fleet
///   simulation and did worse: 7.5 % of requests answered 429 instead of
///   3.5 %, and 29 % instead of 7 % when rejected requests are charged
///   (both with the start spacing below, without its burst).
/// - **What it hears.** A `RateLimited` or overloaded failure is a
///   throttle; a success raises the rate; any other failure (a `Transient`
///   error that is not an overload says nothing about the rate) only
///   counts as a request sent. A `RateLimited` failure whose signals say
///   where the provider's bucket stands (`limit`, `remaining` and
///   `reset`) is not a throttle either: it corrects the mirror of the
///   bucket (below), which paces at the provider's own refill rate;
///   cutting an adaptive rate under it too served 96 % of the quota in
///   the simulation instead of 100 %.
///
/// # Pacing from rate-limit headers
///
/// When an outcome's [`Signals`](crate::Signals) carry [`remaining`](crate::Signals::get_remaining)
/// (`r` requests left) and [`reset`](crate::Signals::get_reset) (`d`), the
/// attempts are paced ahead of any throttle, from the first response, on
/// top of the adaptive rate (an attempt waits for both). How depends on
/// whether the [`limit`](crate::Signals::get_limit) (`L`, the most the window
/// holds) is said too.
///
/// - **With a limit: a mirror of the provider's token bucket.** OpenAI's
///   `x-ratelimit-reset-requests` and Anthropic's
///   `anthropic-ratelimit-requests-reset` say when the bucket is *full
///   again*, not when a window ends: it refills at `(L − r) / d`, and its
///   `r` tokens may go at once. The throttle keeps a bucket of `L` tokens
///   filling at that rate (a GCRA), holding `r` now, and every attempt
///   takes a token from it. Since `r` is a whole count (the bucket holds
///   between `r` and `r + 1`), each report bounds the rate between
///   `(L − r − 1) / d` and `(L − r) / d`; the throttle keeps what all the
///   reports so far allow (a report outside it starts afresh: the rate
///   changed) and paces at the middle. A report only ever holds the
///   mirror back, never fills it: its count was taken when its request
///   reached the provider, before the starts given since. In the fleet
///   simulation (64 workers against a bucket of 20 refilling 10 a second)
///   the mirror serves 100 % of the quota with no 429; `d / r`, the
///   fixed-window spacing below, served 32 % (with `r = 1`, `d = 2 s`:
///   one start every 2 s instead of 10 a second), and pacing at
///   `(L − r) / d` from each report alone, 100 % with 3.2 % answered 429
///   (the rate it reads is up to `1 / (L − r)` too high).
/// - **Without a limit: a fixed window** of `r` requests until the reset:
///   the attempts are spread over it, one every `d / r`; with `r = 0`
///   none starts before the reset. The spacing goes on after the reset
///   until the calls catch up with it, and a newer report replaces it.
///   Calls held by the window are released at the adaptive rate, not in a
///   burst at the reset.
///
/// A newer report replaces the window before it: what an older one held
/// back (none left for an hour, say) is held no longer than the newer one
/// says. A fixed window ends once its reset has passed and the calls have
/// caught up with it. A reset longer than a day (a saturated or garbled
/// header) says nothing of the window. A start already given is never
/// taken back. A wait on the provider's word is held to the policy's
/// `max_retry_after`. A window's start is not
/// given back by a retry not made; its token is.
///
/// A failed attempt's error gives its signals through
/// [`Classify::signals`](crate::Classify::signals) (an `HttpError`,
/// feature `http`, reads them from the response's headers with
/// `rate_limits::from_headers`). A success's headers are the user's own:
/// hand them over with [`report`](Throttle::report) from inside the
/// retried fn, before returning the value.
///
/// # Stopping
///
/// A wait that would leave less than [`MIN_ATTEMPT`](crate::MIN_ATTEMPT)
/// before the call's deadline stops the call with
/// [`StopReason::Deadline`](crate::StopReason::Deadline) and reserves nothing. Before the first attempt
/// the call returns its error made from a [`Refused`](crate::Refused) if
/// its type can say so; otherwise it makes its attempt at once (see
/// [`Guard`]).
///
/// # Cost
///
/// Off, with no window reported, `admit` reads one atomic. Otherwise each
/// `admit` and each `observe` takes one uncontended `std::sync::Mutex`
/// around a small struct (a few floating-point operations, no allocation);
/// [`stats`](Throttle::stats) reads atomics only. All times are on the
/// calls' clock (tokio's for async calls, paused in tests; the system's for
/// blocking ones).
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Policy, Throttle};
///
/// static OPENAI: Throttle = Throttle::new();
/// const POLICY: Policy = Policy::new().throttle(&OPENAI);
///
/// let stats = OPENAI.stats();
/// assert_eq!(stats.rate, None, "off until the first throttle");
/// assert_eq!(OPENAI.get_min_rate(), 0.5);
/// ```
#[derive(Debug)]
pub struct Throttle {
    /// Whether the adaptive rate is on or a window was reported: until
    /// then `admit` goes without the lock.
    engaged: AtomicBool,
    state: Mutex<State>,
    min_rate: f64,
    max_rate: f64,
    decreases: AtomicU64,
    increases: AtomicU64,
    /// The current rate's bits, when on; 0 when off.
    rate: AtomicU64,
    /// The measured send rate's bits.
    pub(super) measured: AtomicU64,
    pub(crate) record: GuardRecord,
    pub(crate) shared: crate::store::StoreSlot<dyn crate::store::ThrottleStore>,
    /// How long the other calls wait for the first answer (see
    /// [`probe_first`](Throttle::probe_first)), nanoseconds; 0 for not.
    probe_first: u64,
    /// 0 before the first attempt; then when it started; [`HEARD`] once
    /// an answer came (or the probe's wait ran out).
    probe: AtomicU64,
    /// Calls waiting for the first answer: asked again after that wait,
    /// they hold no token, and are admitted afresh.
    gated: AtomicU64,
    // Wakes the calls queued for a token when the rate rose (see
    // `Throttle::queue`), to look at their tickets again.
    rose: tokio::sync::Notify,
}

/// [`Throttle::probe`] once the provider has answered.
const HEARD: u64 = u64::MAX;
/// How often a call held for the first answer asks again.
const PROBE_POLL: u64 = 20_000_000;

/// What [`Throttle::stats`] reads: counts since the throttle was created,
/// and its current rates. `waits`, `waited` and `stopped` are its
/// [`GuardRecord`](crate::stats::GuardRecord)'s, the counts
/// [`stats::snapshot`](crate::stats::snapshot) lists (and
/// [`stats::reset`](crate::stats::reset) zeroes).
///
/// ```
/// use tenacious::{Throttle, ThrottleStats};
///
/// static THROTTLE: Throttle = Throttle::new();
/// let stats: ThrottleStats = THROTTLE.stats();
/// assert_eq!((stats.waits, stats.stopped, stats.decreases), (0, 0, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct ThrottleStats {
    /// Attempts it asked to wait.
    pub waits: u64,
    /// The total of those waits (beyond what the calls planned anyway).
    pub waited: Duration,
    /// Attempts it refused because the wait left no room before the call's
    /// deadline (a first attempt, which goes anyway, counted too).
    pub stopped: u64,
    /// Throttles heard: times the rate was cut by β.
    pub decreases: u64,
    /// Successes that raised the rate, while on.
    pub increases: u64,
    /// The adaptive rate, in requests a second, once on; `None` until the
    /// first throttle.
    pub rate: Option<f64>,
    /// The measured send rate, in requests a second (half-second buckets,
    /// smoothed).
    pub measured_rate: f64,
}

impl Throttle {
    /// A throttle that is off until the first throttling response, with
    /// the default settings.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            engaged: AtomicBool::new(false),
            state: Mutex::new(State::new()),
            min_rate: Self::MIN_RATE,
            max_rate: f64::INFINITY,
            decreases: AtomicU64::new(0),
            increases: AtomicU64::new(0),
            rate: AtomicU64::new(0),
            measured: AtomicU64::new(0),
            record: GuardRecord::new("throttle", "throttle"),
            probe_first: 0,
            probe: AtomicU64::new(0),
            gated: AtomicU64::new(0),
            rose: tokio::sync::Notify::const_new(),
            shared: crate::store::StoreSlot::new(),
        }
    }

    crate::stats::guard_name!(Throttle, OPENAI, "openai", "throttle");

    /// Turns it off now, by hand, forgetting its rate and any reported
    /// window: for an operator who knows the provider's limit was raised
    /// (or a test). Calls already waiting keep the wait they were given;
    /// the next calls go at once, until a throttling response or a report
    /// turns it on again. Bound to a store (feature `redis`), the fleet's
    /// throttle is turned off too.
    ///
    /// ```
    /// use tenacious::Throttle;
    ///
    /// static OPENAI: Throttle = Throttle::new();
    /// OPENAI.reset();
    /// assert_eq!(OPENAI.stats().rate, None);
    /// ```
    pub fn reset(&self) {
        {
            let mut state = self.lock();
            *state = State::new();
        }
        self.engaged.store(false, Ordering::Release);
        self.rate.store(0, Ordering::Release);
        self.record.changed("reset by hand");
        if let Some(shared) = self.shared.get() {
            shared.reset();
        }
    }

    /// Its counts and current rates (atomics only, no lock).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Throttle;
    ///
    /// static THROTTLE: Throttle = Throttle::new();
    /// let stats = THROTTLE.stats();
    /// assert_eq!(stats.waited, Duration::ZERO);
    /// assert_eq!(stats.rate, None);
    /// ```
    #[must_use]
    pub fn stats(&self) -> ThrottleStats {
        let rate = self.rate.load(Ordering::Relaxed);
        // The waits and stops are its record's (`stats::snapshot` lists
        // the same counts).
        let counted = self.record.snapshot();
        ThrottleStats {
            waits: counted.waits,
            waited: counted.waited,
            stopped: counted.stopped,
            decreases: self.decreases.load(Ordering::Relaxed),
            increases: self.increases.load(Ordering::Relaxed),
            rate: (rate != 0).then(|| f64::from_bits(rate)),
            measured_rate: f64::from_bits(self.measured.load(Ordering::Relaxed)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics under the lock; a poisoned one holds a whole state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Publishes the rates after an update.
    fn publish(&self, state: &State) {
        if state.enabled {
            self.rate
                .store(state.fill_rate.to_bits(), Ordering::Relaxed);
        }
        self.measured
            .store(state.measured.to_bits(), Ordering::Relaxed);
    }
}

impl Default for Throttle {
    /// [`Throttle::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl Guard for Throttle {
    /// Go at once while off; else a token from the bucket and a start under
    /// the reported window, waiting for whichever comes later beyond what
    /// the call plans anyway, reserved; [`StopReason::Deadline`](crate::StopReason::Deadline) when that
    /// wait leaves no room before the deadline. Asked again after its wait,
    /// it lets the attempt go. An async call that must wait for a token
    /// (no reported window pacing it) is answered [`Admit::Later`] instead,
    /// taking nothing — at a retry's decision as just before an attempt —
    /// and queued by [`admit_async`](Guard::admit_async) just before its
    /// attempt, which brings it forward when the provider's headers raise
    /// the rate: a retry reserves no token minutes ahead at an outage's
    /// rate.
    fn admit(&self, next: &NextAttempt) -> Admit {
        if let Some(shared) = self.shared.get() {
            // Bound to a store: a token from the lease, or a batch from
            // the fleet's bucket (in process while Redis is down); until
            // the fleet's throttle paces, this process's calls wait for
            // its first answer, if it probes first.
            if shared.is_up() {
                if self.probe_first != 0 && !shared.is_on() {
                    if next.recheck {
                        // Asked again after the gate's wait: it held no
                        // token (the count `admit_here` keeps the same way).
                        let _ = self
                            .gated
                            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                                n.checked_sub(1)
                            });
                    }
                    if let Some(answer) = self.gate(next) {
                        if matches!(answer, Admit::Go) {
                            // This process's probe: one for the fleet.
                            return shared.probe();
                        }
                        return answer;
                    }
                }
                return shared.admit(next);
            }
            shared.local_decision();
        }
        self.admit_here(next)
    }

    /// Bound to a store (feature `redis`): a batch of tokens from the
    /// fleet's bucket, or in process when Redis fails to answer.
    fn admit_async(&self, next: NextAttempt) -> crate::PendingAdmit<'_> {
        if let Some(shared) = self.shared.get() {
            return shared.take(next);
        }
        Box::pin(self.queue(next))
    }

    fn record(&self) -> Option<&GuardRecord> {
        Some(&self.record)
    }

    /// A `RateLimited` or overloaded failure cuts the rate (and turns the
    /// throttle on); a success raises it; another failure only counts as
    /// sent; a retry not made gives back its token. Any reported window
    /// (`remaining` and `reset`) replaces the last one. Bound to a store
    /// (feature `redis`), the fleet's throttle hears the cut and the
    /// window too.
    fn observe(&self, outcome: &Outcome) {
        if let Some(shared) = self.shared.get()
            && shared.is_up()
        {
            // The fleet's throttle hears every throttle, and its script
            // keeps the rule for overloads, fleet-wide (see
            // `OVERLOADS_TO_CUT`).
            shared.observe(outcome);
        }
        self.observe_here(outcome);
    }

    /// The wait it would have asked of the call it refused (for a token
    /// and a start under the reported window, as this process's state
    /// stands): when a call with the time to wait would go.
    fn retry_in(&self, next: &NextAttempt) -> Option<Duration> {
        let now = since_epoch(next.now);
        let mut state = self.lock();
        let mut wait = state.window_next.saturating_sub(now);
        if state.enabled && state.fill_rate > 0.0 {
            let at = state.at(now);
            state.fill(at);
            let missing = 1.0 - state.tokens;
            if missing > 0.0 {
                wait = wait.max(nanos_ceil(missing / state.fill_rate));
            }
        }
        Some(Duration::from_nanos(wait))
    }
}

impl Throttle {
    /// Whether the throttle is bound to a store (feature `redis`).
    fn is_bound(&self) -> bool {
        if self.shared.get().is_some() {
            return true;
        }
        false
    }
}

crate::store::store_hooks!(Throttle, ThrottleStore);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AttemptResult, ErrorClass, Signals, StopReason};
    use std::time::Instant;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    fn next(now: Instant, wait: Duration, deadline_left: Option<Duration>) -> NextAttempt {
        NextAttempt {
            attempt: 2,
            max: 3,
            after_timeout: false,
            wait,
            recheck: false,
            now,
            elapsed: None,
            deadline_left,
            max_retry_after: Duration::from_secs(120),
            // Asked off any runtime: the reserving answers.
            queues: false,
        }
    }

    fn outcome(now: Instant, result: AttemptResult, signals: Signals) -> Outcome {
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

    #[test]
    fn off_it_admits_everything_at_once() {
        let throttle = Throttle::new();
        let now = Instant::now();
        for _ in 0..100 {
            assert_eq!(throttle.admit(&next(now, Duration::ZERO, None)), Admit::Go);
            throttle.observe(&outcome(now, AttemptResult::Success, Signals::NONE));
        }
        let transient = failure(ErrorClass::Transient);
        throttle.observe(&outcome(now, transient, Signals::NONE));
        assert_eq!(throttle.admit(&next(now, Duration::ZERO, None)), Admit::Go);
        assert_eq!(throttle.stats().rate, None);
    }

    #[test]
    fn a_throttle_reserves_successive_slots_and_a_recheck_takes_none() {
        let throttle = Throttle::new();
        let t0 = Instant::now();
        let limited = failure(ErrorClass::RateLimited);
        throttle.observe(&outcome(t0, limited, Signals::NONE));
        // Nothing measured yet: the floor, 0.5 a second, an empty bucket.
        assert_eq!(throttle.stats().rate, Some(0.5));
        let ask = |wait| throttle.admit(&next(t0, wait, None));
        assert_eq!(ask(Duration::ZERO), Admit::Wait(Duration::from_secs(2)));
        assert_eq!(ask(Duration::ZERO), Admit::Wait(Duration::from_secs(4)));
        // Planning to wait 7 s anyway: the token at 6 s costs nothing.
        assert_eq!(ask(Duration::from_secs(7)), Admit::Go);
        // 1.5 s planned, the token comes at 8 s: 6.5 s more.
        assert_eq!(
            ask(Duration::from_millis(1500)),
            Admit::Wait(Duration::from_millis(6500))
        );
        let mut again = next(t0, Duration::ZERO, None);
        again.recheck = true;
        assert_eq!(throttle.admit(&again), Admit::Go);
        // A retry not made gives its token back: the next waits as the
        // last one did.
        throttle.observe(&outcome(t0, AttemptResult::NotMade, Signals::NONE));
        assert_eq!(ask(Duration::ZERO), Admit::Wait(Duration::from_secs(8)));
        let stats = throttle.stats();
        assert_eq!((stats.waits, stats.decreases), (4, 1));
        assert_eq!(
            stats.waited,
            Duration::from_millis(2000 + 4000 + 6500 + 8000)
        );
    }

    #[test]
    fn a_wait_past_the_deadline_stops_and_reserves_nothing() {
        let throttle = Throttle::new();
        let t0 = Instant::now();
        throttle.observe(&outcome(
            t0,
            failure(ErrorClass::RateLimited),
            Signals::NONE,
        ));
        let left = Some(Duration::from_secs(1));
        assert_eq!(
            throttle.admit(&next(t0, Duration::ZERO, left)),
            Admit::Stop(StopReason::Deadline)
        );
        assert_eq!(
            throttle.admit(&next(t0, Duration::ZERO, None)),
            Admit::Wait(Duration::from_secs(2)),
            "the refused call took no token"
        );
        assert_eq!(throttle.stats().stopped, 1);
    }

    #[test]
    fn an_overload_is_a_throttle_and_a_plain_transient_is_not() {
        let throttle = Throttle::new();
        let now = Instant::now();
        let transient = failure(ErrorClass::Transient);
        throttle.observe(&outcome(now, transient, Signals::NONE));
        assert_eq!(throttle.stats().decreases, 0);
        throttle.observe(&outcome(now, transient, Signals::NONE.overloaded(true)));
        assert_eq!(throttle.stats().decreases, 1);
        assert!(throttle.stats().rate.is_some());
    }

    #[test]
    fn a_window_spreads_what_is_left_over_the_reset() {
        let throttle = Throttle::new();
        let t0 = Instant::now();
        let window = Signals::NONE.remaining(2).reset(Duration::from_secs(10));
        throttle.report_at(t0, window);
        let ask = || throttle.admit(&next(t0, Duration::ZERO, None));
        assert_eq!(ask(), Admit::Go);
        assert_eq!(ask(), Admit::Wait(Duration::from_secs(5)));
        assert_eq!(ask(), Admit::Wait(Duration::from_secs(10)));
        // Long after, caught up: no pacing.
        let later = t0 + Duration::from_secs(60);
        assert_eq!(
            throttle.admit(&next(later, Duration::ZERO, None)),
            Admit::Go
        );
        // None left: nothing before the reset, capped at `max_retry_after`.
        throttle.report_at(
            later,
            Signals::NONE.remaining(0).reset(Duration::from_secs(3)),
        );
        let ask = |wait| throttle.admit(&next(later, wait, None));
        assert_eq!(
            ask(Duration::from_secs(1)),
            Admit::Wait(Duration::from_secs(2))
        );
        // An hour's hold, capped at `max_retry_after`; a saturated reset
        // says nothing.
        let throttle = Throttle::new();
        throttle.report_at(
            t0,
            Signals::NONE.remaining(0).reset(Duration::from_secs(3600)),
        );
        assert_eq!(
            throttle.admit(&next(t0, Duration::ZERO, None)),
            Admit::Wait(Duration::from_secs(120))
        );
        throttle.report_at(t0, Signals::NONE.remaining(0).reset(Duration::MAX));
        assert_eq!(throttle.admit(&next(t0, Duration::ZERO, None)), Admit::Go);
        // A window without a reset, or a reset without a count, says nothing.
        let throttle = Throttle::new();
        throttle.report_at(t0, Signals::NONE.remaining(0));
        throttle.report_at(t0, Signals::NONE.reset(Duration::from_secs(9)));
        assert_eq!(throttle.admit(&next(t0, Duration::ZERO, None)), Admit::Go);
    }

    /// A bucket of 20 with 5 left, full again in 1.5 s: the 5 go at once,
    /// then one every 1 / 9.67 s (the middle of what `remaining`, a whole
    /// count, allows: 15 / 1.5 s = 10, 14 / 1.5 s = 9.33).
    #[test]
    fn a_limit_mirrors_the_provider_s_bucket_its_burst_then_its_refill() {
        let throttle = Throttle::new();
        let t0 = Instant::now();
        let bucket = Signals::NONE
            .remaining(5)
            .reset(Duration::from_millis(1500))
            .limit(20);
        throttle.report_at(t0, bucket);
        let ask = || throttle.admit(&next(t0, Duration::ZERO, None));
        for _ in 0..5 {
            assert_eq!(ask(), Admit::Go);
        }
        let spacing = nanos_ceil(1.5 / 14.5);
        for k in 1..=3 {
            assert_eq!(ask(), Admit::Wait(Duration::from_nanos(k * spacing)));
        }
        // A later report of more left does not fill the mirror: its count
        // was taken before the starts given since.
        throttle.report_at(t0, bucket.remaining(19).reset(Duration::from_millis(100)));
        assert_eq!(ask(), Admit::Wait(Duration::from_nanos(4 * spacing)));
        // One of none left, full in 2 s, narrows the rate to 9.5–10 a
        // second and holds the next start a spacing from its time.
        let later = t0 + Duration::from_secs(10);
        throttle.report_at(later, bucket.remaining(0).reset(Duration::from_secs(2)));
        assert_eq!(
            throttle.admit(&next(later, Duration::ZERO, None)),
            Admit::Wait(Duration::from_nanos(nanos_ceil(1.0 / 9.75)))
        );
        // Pacing is not a throttle.
        assert_eq!(throttle.stats().rate, None);
    }

    #[test]
    fn reports_narrow_the_refill_rate_and_a_change_starts_afresh() {
        let mut state = State::new();
        let second = Duration::from_secs(1);
        // 20 − 15 = 5 taken, full in 1 s: 4 to 5 a second.
        state.report(0, 15, second, Some(20));
        assert!((state.rate_lo, state.rate_hi) == (4.0, 5.0));
        // 20 − 4 = 16 in 3.5 s: 4.29 to 4.57.
        state.report(0, 4, Duration::from_millis(3500), Some(20));
        assert!(close(state.rate_lo, 15.0 / 3.5) && close(state.rate_hi, 16.0 / 3.5));
        // 10 a second now: outside, so it starts afresh.
        state.report(0, 10, second, Some(20));
        assert!((state.rate_lo, state.rate_hi) == (9.0, 10.0));
        // A full bucket says no rate, and keeps the one known.
        state.report(0, 20, Duration::ZERO, Some(20));
        assert!(state.mirrored && state.rate_hi == 10.0);
        // Without a limit, a fixed window again.
        state.report(0, 4, second, None);
        assert!(!state.mirrored);
        assert_eq!(state.window_spacing, 250_000_000);
        // A full bucket with no rate known is no mirror: the fixed window.
        let mut state = State::new();
        state.report(0, 20, second, Some(20));
        assert!(!state.mirrored);
    }

    #[test]
    fn a_429_that_says_where_the_bucket_stands_is_not_a_throttle() {
        let throttle = Throttle::new();
        let now = Instant::now();
        let limited = failure(ErrorClass::RateLimited);
        let bucket = Signals::NONE
            .remaining(0)
            .reset(Duration::from_secs(2))
            .limit(20);
        throttle.observe(&outcome(now, limited, bucket));
        assert_eq!(
            (throttle.stats().rate, throttle.stats().decreases),
            (None, 0)
        );
        // Without the limit it is one, and so is an overload with it.
        throttle.observe(&outcome(now, limited, bucket.overloaded(true)));
        assert_eq!(throttle.stats().decreases, 1);
        let throttle = Throttle::new();
        let window = Signals::NONE.remaining(0).reset(Duration::from_secs(2));
        throttle.observe(&outcome(now, limited, window));
        assert_eq!(throttle.stats().decreases, 1);
    }

    #[test]
    fn calls_held_by_another_guard_start_at_the_rate_not_at_once() {
        let throttle = Throttle::new();
        let t0 = Instant::now();
        throttle.observe(&outcome(
            t0,
            failure(ErrorClass::RateLimited),
            Signals::NONE,
        ));
        // Three calls reserved tokens 2 s apart, then a cooldown held them
        // all until 10 s: asked again together there, one goes, the others
        // wait for the rate (0.5 a second) and take nothing meanwhile.
        for _ in 0..3 {
            assert!(matches!(
                throttle.admit(&next(t0, Duration::ZERO, None)),
                Admit::Wait(_)
            ));
        }
        let at = t0 + Duration::from_secs(10);
        let mut again = next(at, Duration::ZERO, None);
        again.recheck = true;
        assert_eq!(throttle.admit(&again), Admit::Go);
        assert_eq!(throttle.admit(&again), Admit::Wait(Duration::from_secs(2)));
        assert_eq!(throttle.admit(&again), Admit::Wait(Duration::from_secs(2)));
        again.now = at + Duration::from_secs(2);
        assert_eq!(throttle.admit(&again), Admit::Go);
        assert_eq!(throttle.admit(&again), Admit::Wait(Duration::from_secs(2)));
        // A recheck that cannot wait that long stops.
        again.deadline_left = Some(Duration::from_secs(1));
        assert_eq!(throttle.admit(&again), Admit::Stop(StopReason::Deadline));
    }

    #[test]
    fn hostile_buckets_never_panic() {
        let t0 = Instant::now();
        let limited = failure(ErrorClass::RateLimited);
        for (remaining, reset, limit) in [
            (0, Duration::ZERO, u64::MAX),
            (u64::MAX, Duration::MAX, 1),
            (0, Duration::MAX, u64::MAX),
            (0, Duration::from_nanos(1), u64::MAX),
            (u64::MAX - 1, Duration::from_nanos(1), u64::MAX),
            (5, Duration::from_secs(1), 0),
            (0, Duration::from_secs(1), 1),
        ] {
            let throttle = Throttle::new();
            let bucket = Signals::NONE.remaining(remaining).reset(reset).limit(limit);
            throttle.observe(&outcome(t0, limited, bucket));
            throttle.report_at(t0, bucket);
            for step in [0, 1, 1_000, u64::MAX / 4] {
                let at = t0.checked_add(Duration::from_nanos(step)).unwrap_or(t0);
                throttle.observe(&outcome(at, AttemptResult::Success, bucket));
                for wait in [Duration::ZERO, Duration::MAX] {
                    let mut ask = next(at, wait, Some(Duration::MAX));
                    if let Admit::Wait(wait) = throttle.admit(&ask) {
                        assert!(wait <= Duration::from_secs(120) + Duration::from_nanos(1));
                    }
                    ask.recheck = true;
                    let _ = throttle.admit(&ask);
                }
            }
        }
    }

    #[test]
    fn hostile_times_never_panic() {
        let throttle = Throttle::new();
        let t0 = Instant::now();
        let huge = Signals::NONE.remaining(u64::MAX).reset(Duration::MAX);
        throttle.observe(&outcome(t0, failure(ErrorClass::RateLimited), huge));
        for step in [0, 1, 1_000, u64::MAX / 4] {
            let at = t0.checked_add(Duration::from_nanos(step)).unwrap_or(t0);
            throttle.observe(&outcome(at, AttemptResult::Success, huge));
            let _ = throttle.admit(&next(at, Duration::MAX, Some(Duration::MAX)));
        }
        let rate = throttle.stats().rate.unwrap();
        assert!(rate.is_finite() && rate >= Throttle::MIN_RATE);
    }

    /// What the config reader refuses, the builders refuse, at run time as
    /// at compile time (`tests/ui/fail/throttle_*.rs`).
    #[test]
    #[should_panic(expected = "Throttle::min_rate takes a positive number of requests a \
                               second")]
    fn a_zero_min_rate_is_refused() {
        let _ = Throttle::new().min_rate(std::hint::black_box(0.0));
    }

    #[test]
    #[should_panic(expected = "Throttle::min_rate takes a positive number")]
    fn a_nan_or_infinite_min_rate_is_refused() {
        let rate = if std::hint::black_box(true) {
            f64::NAN
        } else {
            f64::INFINITY
        };
        let _ = Throttle::new().min_rate(rate);
    }

    #[test]
    #[should_panic(expected = "Throttle::max_rate takes a positive number of requests a \
                               second")]
    fn a_negative_max_rate_is_refused() {
        let _ = Throttle::new().max_rate(std::hint::black_box(-1.0));
    }

    #[test]
    #[should_panic(expected = "Throttle::max_rate is below `min_rate`")]
    fn a_max_rate_below_the_default_min_rate_is_refused() {
        let _ = Throttle::new().max_rate(std::hint::black_box(0.2));
    }

    #[test]
    #[should_panic(expected = "Throttle::min_rate is above the `max_rate` set before it")]
    fn a_min_rate_above_the_max_rate_is_refused() {
        let _ = Throttle::new()
            .max_rate(10.0)
            .min_rate(std::hint::black_box(20.0));
    }

    #[test]
    fn rates_the_config_reader_takes_are_taken() {
        let throttle = Throttle::new().min_rate(0.1).max_rate(0.2);
        assert_eq!(
            (throttle.get_min_rate(), throttle.get_max_rate()),
            (0.1, 0.2)
        );
        let throttle = Throttle::new().max_rate(f64::INFINITY).min_rate(3.0);
        assert_eq!(
            (throttle.get_min_rate(), throttle.get_max_rate()),
            (3.0, f64::INFINITY)
        );
        assert_eq!(Throttle::new().max_rate(0.5).get_max_rate(), 0.5);
    }
}
