//! [`Throttle`]: an adaptive client-side request rate shared by every call
//! naming it, as a [`Guard`] — the AWS SDKs' adaptive retry mode (CUBIC
//! after the first throttling response) plus pacing ahead of a 429 from the
//! provider's rate-limit headers.
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::clock::{MIN_ATTEMPT_NANOS, TIMER_ROUNDING_NANOS, saturating_nanos, since_epoch};
use crate::stats::GuardRecord;
use crate::{Admit, AttemptResult, ErrorClass, Guard, NextAttempt, Outcome, Signals, StopReason};

// The constants of the AWS SDKs' adaptive retry mode: the AWS SDKs and
// Tools reference guide, "Retry behavior" (adaptive mode: a client-side
// rate limiter, CUBIC), and their implementation in smithy-rs,
// `rust-runtime/aws-smithy-runtime/src/client/retries/client_rate_limiter.rs`
// (`BETA`, `SCALE_CONSTANT`, `SMOOTH`, `MIN_FILL_RATE`, `MIN_CAPACITY`, and
// the half-second buckets of `update_tokens_retrieved_per_second`).

/// CUBIC's multiplicative decrease: a throttle cuts the rate to 70 %.
const BETA: f64 = 0.7;
/// CUBIC's scale constant `C`: how fast the rate grows back.
const SCALE: f64 = 0.4;
/// The weight of the newest half-second bucket in the measured send rate.
const SMOOTH: f64 = 0.8;
/// The least capacity of the token bucket: one request.
const MIN_CAPACITY: f64 = 1.0;
/// The width of a bucket of the measured send rate, in seconds.
const BUCKET_SECONDS: f64 = 0.5;

/// A client-side request rate limiter shared by every call naming it: off
/// until the provider throttles, then an adaptive rate that every attempt
/// is paced to; paced ahead of any throttle by the provider's rate-limit
/// window when its headers say how much is left.
///
/// # The adaptive rate (AWS SDKs' adaptive retry mode)
///
/// - **Off until the first throttle.** Every attempt goes at once until an
///   attempt fails with [`ErrorClass::RateLimited`] or with
///   [`Signals::is_overloaded`]. From then on the rate limiter stays on.
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
/// When an outcome's [`Signals`] carry [`remaining`](Signals::get_remaining)
/// (`r` requests left) and [`reset`](Signals::get_reset) (`d`), the
/// attempts are paced ahead of any throttle, from the first response, on
/// top of the adaptive rate (an attempt waits for both). How depends on
/// whether the [`limit`](Signals::get_limit) (`L`, the most the window
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
/// [`StopReason::Deadline`] and reserves nothing. Before the first attempt
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
    measured: AtomicU64,
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

/// The state behind the lock: seconds since [`since_epoch`]'s epoch for the
/// adaptive rate (as smithy-rs keeps it), nanoseconds for the window.
#[derive(Debug)]
struct State {
    /// Whether a throttle was heard: the token bucket paces from then on.
    enabled: bool,
    /// Tokens a second.
    fill_rate: f64,
    capacity: f64,
    /// Below zero when reserved ahead.
    tokens: f64,
    /// Every token the bucket was credited since it was made (its refill
    /// and the tokens given back): a queued call's ticket is the credit at
    /// which its token is there, so the calls queued move up as soon as the
    /// rate rises (see [`Throttle::queue`]).
    paid: f64,
    /// The rate the queued calls were last woken at (see
    /// [`Throttle::queue`]): a rise of a tenth over it wakes them again.
    told_rate: f64,
    /// When the bucket was last filled; 0 for never.
    last_fill: f64,
    measured: f64,
    /// The start of the current half-second bucket; NaN for none yet.
    bucket: f64,
    requests_in_bucket: u64,
    last_max_rate: f64,
    last_throttle: f64,
    /// The origin of the adaptive rate's seconds, nanoseconds: a second
    /// before the first attempt or response it timed; 0 until then.
    origin: u64,
    /// The theoretical start of the next attempt at the adaptive rate
    /// (GCRA), nanoseconds: what keeps the actual starts to the rate.
    start_tat: u64,
    /// The reported window's reset; 0 for none.
    window_until: u64,
    /// The next free start under the window's pacing.
    window_next: u64,
    /// The window's spacing between two starts.
    window_spacing: u64,
    /// How far ahead of `window_next` a start may go, in a burst: the
    /// mirrored bucket's size less one token, as a time; 0 for a fixed
    /// window.
    window_burst: u64,
    /// Whether the window is a mirror of the provider's token bucket (a
    /// limit was reported), not a fixed window.
    mirrored: bool,
    /// Overloads heard since the last other outcome (see
    /// [`OVERLOADS_TO_CUT`]).
    overloads: u32,
    /// What the reports so far allow of the provider's refill rate, in
    /// tokens a second: `rate_lo..=rate_hi`.
    rate_lo: f64,
    rate_hi: f64,
}

impl State {
    const fn new() -> Self {
        Self {
            enabled: false,
            fill_rate: 0.0,
            capacity: MIN_CAPACITY,
            tokens: 0.0,
            paid: 0.0,
            told_rate: 0.0,
            last_fill: 0.0,
            measured: 0.0,
            bucket: f64::NAN,
            requests_in_bucket: 0,
            last_max_rate: 0.0,
            last_throttle: 0.0,
            start_tat: 0,
            origin: 0,
            window_until: 0,
            window_next: 0,
            window_spacing: 0,
            window_burst: 0,
            mirrored: false,
            overloads: 0,
            rate_lo: 0.0,
            rate_hi: 0.0,
        }
    }

    /// Fills the bucket up to `now`.
    fn fill(&mut self, now: f64) {
        if self.last_fill > 0.0 && now > self.last_fill {
            self.credit((now - self.last_fill) * self.fill_rate);
        }
        if now > self.last_fill {
            self.last_fill = now;
        }
    }

    /// Adds `tokens` to the bucket, up to its capacity.
    fn credit(&mut self, tokens: f64) {
        let before = self.tokens;
        self.tokens = (self.tokens + tokens).min(self.capacity);
        if self.tokens > before {
            self.paid += self.tokens - before;
        }
    }

    /// Counts a response at `now` in the measured send rate.
    fn measure(&mut self, now: f64) {
        let bucket = (now / BUCKET_SECONDS).floor() * BUCKET_SECONDS;
        if self.bucket.is_nan() {
            // The first response: its bucket is the first.
            self.bucket = bucket;
        }
        self.requests_in_bucket = self.requests_in_bucket.saturating_add(1);
        if bucket > self.bucket {
            let rate = self.requests_in_bucket as f64 / (bucket - self.bucket);
            self.measured = rate * SMOOTH + self.measured * (1.0 - SMOOTH);
            self.requests_in_bucket = 0;
            self.bucket = bucket;
        }
    }

    /// `now` (nanoseconds since the guards' epoch) as the adaptive rate's
    /// seconds: from a second before the first time it is asked, so its
    /// half-second buckets fall the same way in every run of the same
    /// calls, whenever the process's epoch was taken (smithy-rs counts
    /// from the process's start; this one throttle's calls are what
    /// matter, and with a shared epoch two fleets simulated on two threads
    /// measured differently).
    fn at(&mut self, now: u64) -> f64 {
        if self.origin == 0 {
            self.origin = now.saturating_sub(1_000_000_000).max(1);
        }
        seconds(now.saturating_sub(self.origin))
    }

    /// The adaptive rate's spacing of starts, nanoseconds.
    fn start_spacing(&self) -> u64 {
        nanos_ceil(1.0 / self.fill_rate).max(1)
    }

    /// The earliest start the adaptive rate allows now: a bucket's worth
    /// of starts may go at once.
    fn earliest_start(&self) -> u64 {
        let burst = (self.capacity - 1.0).max(0.0);
        self.start_tat
            .saturating_sub(nanos_ceil(burst / self.fill_rate))
    }

    /// An attempt starting at `now`.
    fn start(&mut self, now: u64) {
        self.start_tat = self.start_tat.max(now).saturating_add(self.start_spacing());
    }

    /// `K`: the seconds after a throttle at which CUBIC is back at
    /// `last_max_rate`.
    fn time_window(&self) -> f64 {
        (self.last_max_rate * (1.0 - BETA) / SCALE).cbrt()
    }

    /// `W(t)`.
    fn cubic_success(&self, now: f64) -> f64 {
        let dt = now - self.last_throttle - self.time_window();
        SCALE * dt.powi(3) + self.last_max_rate
    }

    /// A response at `now`: a throttle or a success. Returns the new rate.
    /// smithy-rs's `update_rate_limiter`, with the rate held to
    /// `min_rate..=max_rate`.
    fn update(&mut self, now: f64, throttled: bool, min_rate: f64, max_rate: f64) -> f64 {
        self.measure(now);
        let calculated = if throttled {
            let rate_to_use = if self.enabled {
                self.measured.min(self.fill_rate)
            } else {
                self.measured
            };
            self.last_max_rate = rate_to_use;
            self.last_throttle = now;
            self.enabled = true;
            rate_to_use * BETA
        } else {
            self.cubic_success(now)
        };
        let mut new_rate = calculated.min(2.0 * self.measured).min(max_rate);
        if !throttled && self.mirrored {
            // The provider's headers say what it allows: a success never
            // holds the rate below it (the growth cap of twice the
            // measured rate would, the pacing itself holding that down).
            new_rate = new_rate.max(f64::midpoint(self.rate_lo, self.rate_hi).min(max_rate));
        }
        self.fill(now);
        self.fill_rate = new_rate.max(min_rate);
        self.capacity = new_rate.max(MIN_CAPACITY);
        self.tokens = self.tokens.min(self.capacity);
        self.fill_rate
    }

    /// The reported window: `remaining` requests until `reset` from `now`
    /// (nanoseconds), out of `limit` if said. It replaces the window
    /// before it: what an older report held back is held no longer than
    /// this one says. A reset longer than [`MAX_RESET`] says nothing (a
    /// saturated or garbled header): the fixed window before it ends, a
    /// mirror keeps the rate it knows.
    fn report(&mut self, now: u64, remaining: u64, reset: Duration, limit: Option<u64>) {
        if reset > MAX_RESET {
            if !self.mirrored {
                self.window_until = 0;
                self.window_next = self.window_next.min(now);
            }
            return;
        }
        let reset = saturating_nanos(reset);
        let until = now.saturating_add(reset);
        if let Some(limit) = limit.filter(|&limit| limit > 0)
            && self.mirror(now, remaining, reset, limit)
        {
            return;
        }
        self.mirrored = false;
        self.window_burst = 0;
        self.window_until = until;
        match reset.checked_div(remaining) {
            // The next start: no later than one of the new spacings on,
            // whatever an older window held back.
            Some(spacing) => {
                self.window_spacing = spacing;
                self.window_next = self.window_next.min(now.saturating_add(spacing));
            }
            // None left: nothing starts before the reset, and nothing
            // waits past it.
            None => self.window_next = until,
        }
    }

    /// The report of a window of `limit` as the provider's token bucket:
    /// full again after `reset` nanoseconds, so refilling at
    /// `(limit − remaining) / reset`, with `remaining` tokens in it now.
    /// Whether it could: a full bucket says no rate, unless one is known.
    fn mirror(&mut self, now: u64, remaining: u64, reset: u64, limit: u64) -> bool {
        if remaining < limit && reset > 0 {
            // `remaining` is a whole count: the bucket holds between it
            // and one more, so the refill rate lies between these two.
            let missing = (limit - remaining) as f64;
            let reset = seconds(reset);
            let (lo, hi) = ((missing - 1.0) / reset, missing / reset);
            if self.mirrored && lo <= self.rate_hi && hi >= self.rate_lo {
                // The same rate, known better.
                self.rate_lo = self.rate_lo.max(lo);
                self.rate_hi = self.rate_hi.min(hi);
            } else {
                // The first report, or the provider's rate changed: what
                // the old rate held back is held no longer than one start
                // at the new one.
                self.rate_lo = lo;
                self.rate_hi = hi;
                let spacing = nanos_ceil(2.0 / (lo + hi)).max(1);
                self.window_next = self.window_next.min(now.saturating_add(spacing));
            }
        } else if !self.mirrored {
            return false;
        }
        self.mirrored = true;
        let rate = f64::midpoint(self.rate_lo, self.rate_hi);
        let spacing = nanos_ceil(1.0 / rate).max(1);
        self.window_spacing = spacing;
        self.window_burst = spacing.saturating_mul(limit - 1);
        // The earliest start with `remaining` tokens in the bucket now:
        // `remaining − 1` spacings ago, or one spacing ahead for none. A
        // report only ever holds the calls back: its count was taken when
        // its request reached the provider, before the starts given since.
        let next = match remaining.checked_sub(1) {
            Some(more) => now.saturating_sub(spacing.saturating_mul(more)),
            None => now.saturating_add(spacing),
        };
        self.window_next = self.window_next.max(next);
        true
    }

    /// The start the window allows an attempt ready at `ready`, if it
    /// paces it at all.
    fn window_slot(&self, ready: u64) -> Option<u64> {
        if !self.mirrored && self.window_next <= ready && self.window_until <= ready {
            None
        } else {
            Some(self.window_next.max(ready))
        }
    }
}

/// The longest reset a report is believed for: a day. A longer one (a
/// saturated or garbled `x-ratelimit-reset-requests`) says nothing of the
/// window, rather than holding every call of the process until it
/// restarts.
pub const MAX_RESET: Duration = Duration::from_secs(86_400);

/// Whether a wait of `wait` nanoseconds leaves no room in `left` for an
/// attempt: the wait, a tick of the timer's rounding and one attempt's
/// least time must fit (the engine's check, `Engine::leaves_no_room`).
fn no_room(wait: u64, left: Duration) -> bool {
    wait.saturating_add(TIMER_ROUNDING_NANOS)
        .saturating_add(MIN_ATTEMPT_NANOS)
        > saturating_nanos(left)
}

/// Seconds since the guards' epoch, as the adaptive rate keeps them.
fn seconds(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

/// Nanoseconds for `seconds`, rounded up (a wait never ends early),
/// saturating; 0 for anything not positive.
fn nanos_ceil(seconds: f64) -> u64 {
    // `as` saturates, and takes NaN to 0.
    (seconds * 1e9).ceil() as u64
}

impl Throttle {
    /// The default [`min_rate`](Throttle::min_rate): 0.5 requests a second
    /// (`MIN_FILL_RATE` of the AWS SDKs' adaptive mode).
    pub const MIN_RATE: f64 = 0.5;

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

    /// Until the provider has answered a call naming it, lets one attempt
    /// go first and holds every other for that answer, at most `wait`: a
    /// fleet that starts at once sends one request, learns the window from
    /// its headers (or its 429), and paces the rest by it, instead of
    /// sending them all into a quota it does not know yet. The calls held
    /// ask again every 20 ms; after `wait` without an answer they go.
    /// Default: zero, none held (the AWS SDKs' behaviour: off until the
    /// first throttle). Over real HTTP on loopback (`tests/fleet_http.rs`,
    /// 32 tasks against 4 requests a second, a burst of 4), the first
    /// wave's 28 of 32 requests answered 429 were every 429 the guarded
    /// fleet got; with `probe_first` there are none in it. Bound to a
    /// store (feature `redis`), the probe is the fleet's: the first call
    /// of any process to ask goes, and every process holds its calls
    /// (asking the fleet again every 20 ms) until that answer turns the
    /// fleet's throttle on, or its own `wait` from the probe's start runs
    /// out; while Redis is down, each process probes for itself.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Throttle;
    ///
    /// static OPENAI: Throttle = Throttle::new().probe_first(Duration::from_secs(2));
    /// assert_eq!(OPENAI.get_probe_first(), Duration::from_secs(2));
    /// assert_eq!(Throttle::new().get_probe_first(), Duration::ZERO);
    /// ```
    #[must_use]
    pub const fn probe_first(self, wait: Duration) -> Self {
        Self {
            probe_first: saturating_nanos(wait),
            ..self
        }
    }

    /// The wait set by [`probe_first`](Throttle::probe_first).
    #[must_use]
    pub const fn get_probe_first(&self) -> Duration {
        Duration::from_nanos(self.probe_first)
    }

    /// Before the provider first answered, with
    /// [`probe_first`](Throttle::probe_first): `Go` for the first attempt,
    /// a short wait for the others until the answer comes or the wait runs
    /// out; `None` once it did.
    fn gate(&self, next: &NextAttempt) -> Option<Admit> {
        let mut probe = self.probe.load(Ordering::Acquire);
        if probe == HEARD {
            return None;
        }
        let now = since_epoch(next.now);
        if probe == 0 {
            match self
                .probe
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
            {
                // The probe: it goes, and the answer it gets opens the gate.
                Ok(_) => return Some(Admit::Go),
                Err(started) => probe = started,
            }
            if probe == HEARD {
                return None;
            }
        }
        let until = probe.saturating_add(self.probe_first);
        if now >= until {
            // No answer in time: the gate opens without one.
            self.probe.store(HEARD, Ordering::Release);
            return None;
        }
        let wait = PROBE_POLL.min(until - now);
        if next.deadline_left.is_some_and(|left| no_room(wait, left)) {
            // No time to wait for the answer: it goes without.
            return None;
        }
        self.gated.fetch_add(1, Ordering::AcqRel);
        let wait = Duration::from_nanos(wait);
        self.record.waited(wait);
        Some(Admit::Wait(wait))
    }

    crate::stats::guard_name!(Throttle, OPENAI, "openai", "throttle");

    /// The least adaptive rate, in requests a second: however often the
    /// provider throttles, the bucket fills at least this fast. Default
    /// [`MIN_RATE`](Throttle::MIN_RATE), 0.5; a positive finite number.
    /// (It does not bound the pacing from headers, which follows the
    /// provider's window.)
    ///
    /// ```
    /// use tenacious::Throttle;
    ///
    /// static SLOW: Throttle = Throttle::new().min_rate(0.1);
    /// assert_eq!(SLOW.get_min_rate(), 0.1);
    /// ```
    ///
    /// # Panics
    ///
    /// For a rate that is not a positive finite number, or one above the
    /// [`max_rate`](Throttle::max_rate) set before, as a config's
    /// `min_rate` is refused: in a `const` or `static`, at compile time.
    ///
    /// ```compile_fail
    /// use tenacious::Throttle;
    ///
    /// static WRONG: Throttle = Throttle::new().min_rate(0.0);
    /// ```
    #[must_use]
    pub const fn min_rate(self, rate: f64) -> Self {
        assert!(
            rate > 0.0 && rate.is_finite(),
            "Throttle::min_rate takes a positive number of requests a second, like \
             `min_rate(0.5)`"
        );
        assert!(
            rate <= self.max_rate,
            "Throttle::min_rate is above the `max_rate` set before it: the rate never goes \
             under `min_rate`, so it would never grow at all; lower `min_rate` or raise \
             `max_rate`"
        );
        Self {
            min_rate: rate,
            ..self
        }
    }

    /// The rate set by [`min_rate`](Throttle::min_rate).
    #[must_use]
    pub const fn get_min_rate(&self) -> f64 {
        self.min_rate
    }

    /// The most adaptive rate, in requests a second, however long the
    /// calls succeed: a ceiling on CUBIC's growth once the throttle is on
    /// (it does not turn the throttle on). Default unbounded
    /// (`f64::INFINITY`); a positive number, at least
    /// [`min_rate`](Throttle::min_rate).
    ///
    /// ```
    /// use tenacious::Throttle;
    ///
    /// static CAPPED: Throttle = Throttle::new().max_rate(50.0);
    /// assert_eq!(CAPPED.get_max_rate(), 50.0);
    /// assert_eq!(Throttle::new().get_max_rate(), f64::INFINITY);
    /// // Below the default least rate (0.5): set the least one first.
    /// static SLOW: Throttle = Throttle::new().min_rate(0.1).max_rate(0.2);
    /// assert_eq!(SLOW.get_max_rate(), 0.2);
    /// ```
    ///
    /// # Panics
    ///
    /// For a rate that is not a positive number, or one below the
    /// `min_rate` (the default's 0.5, or the one set before), as a
    /// config's `max_rate` is refused: in a `const` or `static`, at
    /// compile time.
    ///
    /// ```compile_fail
    /// use tenacious::Throttle;
    ///
    /// static WRONG: Throttle = Throttle::new().max_rate(0.2); // below 0.5
    /// ```
    #[must_use]
    pub const fn max_rate(self, rate: f64) -> Self {
        assert!(
            rate > 0.0,
            "Throttle::max_rate takes a positive number of requests a second, like \
             `max_rate(50.0)`"
        );
        assert!(
            rate >= self.min_rate,
            "Throttle::max_rate is below `min_rate` (the default 0.5, or the one set before \
             it): the rate never goes under `min_rate`, so it would never grow at all; raise \
             `max_rate`, or set a lower `min_rate` first"
        );
        Self {
            max_rate: rate,
            ..self
        }
    }

    /// The rate set by [`max_rate`](Throttle::max_rate).
    #[must_use]
    pub const fn get_max_rate(&self) -> f64 {
        self.max_rate
    }

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

    /// Hands over what a response said about the provider's rate-limit
    /// window, now: for a success, whose headers never reach the guard (the
    /// retried fn returns the user's value). Call it from inside the
    /// retried fn, before returning. Only `remaining`, `reset` (both must
    /// be given) and `limit` are read; a throttle reaches the guard as the
    /// attempt's error. Bound to a store (feature `redis`), the fleet's
    /// throttle paces by it too.
    ///
    /// "Now" is tokio's clock, which an async call keeps its times on (a
    /// paused test clock included); outside a paused runtime it is the
    /// system's, as a blocking call's. Use
    /// [`report_at`](Throttle::report_at) to give the instant.
    ///
    /// ```
    /// use http::HeaderMap;
    /// use tenacious::{HttpError, Policy, Throttle, rate_limits};
    ///
    /// static OPENAI: Throttle = Throttle::new();
    /// const POLICY: Policy = Policy::new().guard(&OPENAI);
    ///
    /// /// What a client returns: the status and headers (and a body).
    /// fn send() -> (http::StatusCode, HeaderMap) {
    ///     let mut headers = HeaderMap::new();
    ///     headers.insert("x-ratelimit-remaining-requests", "59".parse().unwrap());
    ///     headers.insert("x-ratelimit-reset-requests", "1s".parse().unwrap());
    ///     (http::StatusCode::OK, headers)
    /// }
    ///
    /// let answer = POLICY.retry_blocking(|| {
    ///     let (status, headers) = send();
    ///     if !status.is_success() {
    ///         // A failure's headers reach the throttle through the error.
    ///         return Err(HttpError::from_parts(status, &headers));
    ///     }
    ///     OPENAI.report(rate_limits::from_headers(&headers));
    ///     Ok("done")
    /// });
    /// assert_eq!(answer.unwrap(), "done");
    /// ```
    pub fn report(&self, signals: Signals) {
        self.report_at(crate::clock::now_on(false), signals);
    }

    /// [`report`](Throttle::report) at `now`, on the calls' clock.
    pub fn report_at(&self, now: Instant, signals: Signals) {
        let (Some(remaining), Some(reset)) = (signals.get_remaining(), signals.get_reset()) else {
            return;
        };
        if let Some(shared) = self.shared.get()
            && shared.is_up()
        {
            // Bound to a store: the fleet's throttle paces by it.
            shared.report(signals);
        }
        self.lock()
            .report(since_epoch(now), remaining, reset, signals.get_limit());
        self.engaged.store(true, Ordering::Release);
    }

    /// An attempt about to start after a wait: it goes if the starts
    /// keep to the rate, else it waits until they would (taking nothing:
    /// it is asked again then). Its token was taken when the wait was
    /// planned; this only keeps calls another guard held back (a
    /// cooldown's queue, released every 10 ms) from starting in a burst.
    fn recheck(&self, next: &NextAttempt) -> Admit {
        let now = since_epoch(next.now);
        let mut state = self.lock();
        if !state.enabled {
            return Admit::Go;
        }
        let earliest = state.earliest_start();
        if earliest <= now {
            state.start(now);
            return Admit::Go;
        }
        drop(state);
        let wait = earliest - now;
        if next.deadline_left.is_some_and(|left| no_room(wait, left)) {
            self.record.stopped();
            return Admit::Stop(StopReason::Deadline);
        }
        Admit::Wait(Duration::from_nanos(wait))
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
    /// the call plans anyway, reserved; [`StopReason::Deadline`] when that
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

    /// The answer to an async call [`admit_here`](Throttle::admit_here)
    /// asked to wait for a token, just before its attempt: it takes one
    /// now, on credit, with a ticket (the bucket's credit at which the
    /// token is there), and goes when the bucket's credit reaches it, or
    /// at the latest when the token would be there at the rate it asked
    /// at (as a reservation would), and no sooner than the starts keep to
    /// the rate. It looks again at most every quarter of the wait left
    /// (half a second at least), and at once when the rate rises by a
    /// tenth: while the provider's headers pace the throttle, a rate they
    /// raise brings the queued calls forward. A call dropped while queued
    /// gives its token back; [`StopReason::Deadline`] when what is left of
    /// the wait no longer fits the deadline.
    async fn queue(&self, next: NextAttempt) -> Admit {
        /// Gives the token back if the call leaves the queue without it.
        struct Queued<'t>(&'t Throttle, bool);
        impl Drop for Queued<'_> {
            fn drop(&mut self) {
                if self.1 {
                    let mut state = self.0.lock();
                    if state.enabled {
                        state.credit(1.0);
                    }
                }
            }
        }
        const RETIME_NANOS: u64 = 500_000_000;
        let deadline = next
            .deadline_left
            .map(|left| since_epoch(next.now).saturating_add(saturating_nanos(left)));
        let ticket = {
            let now = since_epoch(next.now);
            let mut state = self.lock();
            if !state.enabled {
                return Admit::Go;
            }
            let at = state.at(now);
            state.fill(at);
            let ticket = state.paid + (1.0 - state.tokens).max(0.0);
            state.tokens -= 1.0;
            ticket
        };
        let mut queued = Queued(self, true);
        let mut first = true;
        // When the token would be there at the rate of now: the call goes
        // then at the latest, as a reservation would. A rate that falls
        // meanwhile does not put it back (queued calls held back by every
        // cut of an outage would hold the recovery back: the rate grows
        // from what is sent).
        let mut latest = u64::MAX;
        loop {
            // Listening before the state is read: a rise told meanwhile is
            // not missed.
            let mut rose = std::pin::pin!(self.rose.notified());
            rose.as_mut().enable();
            let now_at = crate::clock::now_on(false);
            let now = since_epoch(now_at);
            let wait = {
                let mut state = self.lock();
                if !state.enabled {
                    queued.1 = false;
                    return Admit::Go;
                }
                let at = state.at(now);
                state.fill(at);
                let missing = ticket - state.paid;
                let wait = if missing > 0.0 {
                    nanos_ceil(missing / state.fill_rate).max(1)
                } else {
                    0
                };
                if first {
                    latest = now.saturating_add(wait);
                }
                // Brought forward only while the provider's headers say
                // what it allows: a rate the throttle guesses from its 429s
                // alone moves no call up into a quota it has not measured
                // (queued calls brought forward so held a recovery back:
                // `cargo run --release --example fleet -- --outage 3-5`,
                // throttle alone, 42 % of the quota the minute after, not 90).
                let wait = if state.mirrored {
                    wait.min(latest.saturating_sub(now))
                } else {
                    latest.saturating_sub(now)
                };
                // And no sooner than the starts keep to the rate.
                let wait = wait.max(state.earliest_start().saturating_sub(now));
                if wait == 0 {
                    state.start(now);
                    queued.1 = false;
                    return Admit::Go;
                }
                wait
            };
            if deadline.is_some_and(|deadline| {
                no_room(wait, Duration::from_nanos(deadline.saturating_sub(now)))
            }) {
                drop(queued);
                self.record.stopped();
                return Admit::Stop(StopReason::Deadline);
            }
            if first {
                first = false;
                self.record.waited(Duration::from_nanos(wait));
            }
            let look = wait.min((wait / 4).max(RETIME_NANOS));
            let mut timer = std::pin::pin!(tokio::time::sleep(Duration::from_nanos(look)));
            std::future::poll_fn(|cx| {
                if rose.as_mut().poll(cx).is_ready() || timer.as_mut().poll(cx).is_ready() {
                    std::task::Poll::Ready(())
                } else {
                    std::task::Poll::Pending
                }
            })
            .await;
        }
    }

    /// Bound to a store, this process's probe held for another process's
    /// (`left` until its wait ends): the gate reopens, so the next call
    /// asking becomes this process's probe and asks the fleet again, in
    /// [`PROBE_POLL`] at most; with no time for that before the
    /// deadline, the call goes without.
    #[doc(hidden)]
    pub fn held_for_the_fleet(&self, next: &NextAttempt, left: Duration) -> Admit {
        let _ = self
            .probe
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |probe| {
                (probe != HEARD).then_some(0)
            });
        let wait = PROBE_POLL.min(saturating_nanos(left).max(1));
        if next.deadline_left.is_some_and(|left| no_room(wait, left)) {
            return Admit::Go;
        }
        self.gated.fetch_add(1, Ordering::AcqRel);
        let wait = Duration::from_nanos(wait);
        self.record.waited(wait);
        Admit::Wait(wait)
    }

    /// Bound to a store, the fleet's throttle paces or its probe's wait
    /// ran out: this process's calls are held no longer.
    #[doc(hidden)]
    pub fn heard_first(&self) {
        self.probe.store(HEARD, Ordering::Release);
    }

    /// [`Guard::admit`] on this process's state alone.
    #[doc(hidden)]
    pub fn admit_here(&self, next: &NextAttempt) -> Admit {
        // A call asked again after waiting for the first answer holds no
        // token: it is admitted afresh. (One that was dropped while
        // waiting leaves its count behind: the next call asked again
        // after a wait takes a token it needs not, once.)
        let gated = next.recheck
            && self.probe_first != 0
            && self
                .gated
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                .is_ok();
        if self.probe_first != 0
            && let Some(answer) = self.gate(next)
        {
            return answer;
        }
        if !self.engaged.load(Ordering::Acquire) {
            return Admit::Go;
        }
        if next.recheck && !gated {
            return self.recheck(next);
        }
        let now = since_epoch(next.now);
        let planned = saturating_nanos(next.wait);
        let ready = now.saturating_add(planned);
        let mut state = self.lock();
        // The window's start for it, held to `max_retry_after`.
        let slot = state.window_slot(ready);
        let held = slot.map_or(ready, |slot| {
            slot.min(ready.saturating_add(saturating_nanos(next.max_retry_after)))
        });
        let mut extra = held - ready;
        // Its token, if the bucket paces: what the bucket holds now, less
        // one. Under a window's hold, what the bucket could not hold by the
        // end of it is lost too: no call starts before then to use it, so
        // the calls held are released at the rate, not in a burst. (A
        // call's own planned wait is its own: the tokens before it are
        // left to the others.)
        let mut tokens = 0.0;
        if state.enabled {
            let at = state.at(now);
            state.fill(at);
            let hold = if extra > 0 { seconds(held - now) } else { 0.0 };
            tokens = state.tokens.min(state.capacity - hold * state.fill_rate) - 1.0;
            if tokens < 0.0 {
                let until_token = nanos_ceil(-tokens / state.fill_rate);
                extra = extra.max(until_token.saturating_sub(planned));
            }
            if planned == 0 {
                // Starting now: no sooner than the starts keep to the rate.
                extra = extra.max(state.earliest_start().saturating_sub(now));
            }
        }
        if extra > 0
            && let Some(left) = next.deadline_left
        {
            // The engine's own check (`Engine::leaves_no_room`), on the
            // whole wait.
            if no_room(planned.saturating_add(extra), left) {
                drop(state);
                self.record.stopped();
                return Admit::Stop(StopReason::Deadline);
            }
        }
        if tokens < 0.0 && slot.is_none() && next.queues && !next.recheck && !self.is_bound() {
            // An async call waits for its token in the queue, which
            // re-times it as the rate changes, rather than keeping a slot
            // reserved at the rate of now (`admit_async`); at a retry's
            // decision it takes nothing, and is asked again after its
            // backoff.
            return Admit::Later;
        }
        if state.enabled {
            state.tokens = tokens;
        }
        if let Some(slot) = slot {
            // The next start: one spacing on, after any burst the window
            // still allows.
            let from = state
                .window_next
                .max(slot.saturating_sub(state.window_burst));
            state.window_next = from.saturating_add(state.window_spacing);
        }
        if state.enabled && planned == 0 && extra == 0 {
            // It starts now, and will not be asked again.
            state.start(now);
        }
        drop(state);
        if extra == 0 {
            return Admit::Go;
        }
        let wait = Duration::from_nanos(extra);
        self.record.waited(wait);
        Admit::Wait(wait)
    }

    /// [`Guard::observe`] on this process's state alone.
    fn observe_here(&self, outcome: &Outcome) {
        if self.probe_first != 0 && outcome.result != AttemptResult::NotMade {
            // The provider answered: the calls held for it go.
            self.probe.store(HEARD, Ordering::Release);
        }
        if outcome.result == AttemptResult::NotMade {
            let mut state = self.lock();
            if state.enabled {
                state.credit(1.0);
            }
            return;
        }
        let mut throttled = throttled(outcome);
        let now = since_epoch(outcome.now);
        let mut state = self.lock();
        let overload = overload_only(outcome);
        state.overloads = if overload {
            state.overloads.saturating_add(1)
        } else {
            0
        };
        if throttled == Some(true) && state.mirrored && overload {
            // An overload says nothing of this fleet's rate (a busy
            // provider answers a share of everyone's calls 529 or
            // overloaded_error), and did not take from the provider's
            // bucket: its start under the window goes back. While the
            // provider's headers say what it allows, an overload cuts the
            // adaptive rate only in a run of them (an outage, met with a
            // trickle); the next success puts the rate back to what the
            // headers allow (`State::update`).
            if state.overloads < OVERLOADS_TO_CUT {
                throttled = None;
            }
            let floor = now;
            state.window_next = state
                .window_next
                .saturating_sub(state.window_spacing)
                .max(floor);
        }
        match throttled {
            Some(throttled) => {
                let (was_on, before) = (state.enabled, state.fill_rate);
                let at = state.at(now);
                let after = state.update(at, throttled, self.min_rate, self.max_rate);
                if throttled {
                    self.decreases.fetch_add(1, Ordering::Relaxed);
                    self.record.changed(if was_on { "rate cut" } else { "on" });
                } else if was_on && after > before {
                    self.increases.fetch_add(1, Ordering::Relaxed);
                }
            }
            None => {
                let at = state.at(now);
                state.measure(at);
            }
        }
        if let (Some(remaining), Some(reset)) =
            (outcome.signals.get_remaining(), outcome.signals.get_reset())
        {
            state.report(now, remaining, reset, outcome.signals.get_limit());
        }
        let engaged = state.enabled || state.window_until != 0 || state.mirrored;
        self.publish(&state);
        // The calls queued for a token look again when the rate rose by a
        // tenth since they last did (a few wakes for each doubling).
        let rose = state.enabled && state.fill_rate > state.told_rate * 1.1;
        if rose || state.fill_rate < state.told_rate {
            state.told_rate = state.fill_rate;
        }
        drop(state);
        if engaged {
            self.engaged.store(true, Ordering::Release);
        }
        if rose {
            self.rose.notify_waiters();
        }
    }
}

/// What an outcome tells a throttle: `Some(true)` a throttle (a
/// `RateLimited` or overloaded failure), `Some(false)` a success, `None`
/// neither (another failure, an attempt not made, or a 429 that says where
/// the provider's bucket stands: that corrects the mirror of it, and does
/// not cut the adaptive rate).
/// Overloads in a row, with no other outcome between, that cut the rate
/// of a throttle the provider's headers pace: three (at a tenth of
/// answers overloaded at random, one outcome in a thousand ends such a
/// run; in an outage every one does). A throttle bound to a store has the
/// fleet's script keep the same rule, counting the overloads every
/// process heard, a report between ending the run.
const OVERLOADS_TO_CUT: u32 = 3;

/// Whether `outcome` is an overload and not a rate limit: a failure that
/// says the provider as a whole is refusing work, of a class other than
/// `RateLimited`.
pub fn overload_only(outcome: &Outcome) -> bool {
    matches!(
        outcome.result,
        AttemptResult::Failure { class, .. } if class != ErrorClass::RateLimited
    ) && outcome.signals.is_overloaded()
}

/// What `outcome` says of the rate: `Some(true)` a throttle (a rate limit
/// that does not say where the provider's bucket stands, or an overload),
/// `Some(false)` a success, `None` nothing (another failure, a 429 whose
/// headers say where the bucket stands, an attempt not made).
pub fn throttled(outcome: &Outcome) -> Option<bool> {
    let signals = outcome.signals;
    let bucket_said = signals.get_limit().is_some()
        && signals.get_remaining().is_some()
        && signals.get_reset().is_some();
    match outcome.result {
        AttemptResult::Success => Some(false),
        AttemptResult::Failure {
            class: ErrorClass::RateLimited,
            ..
        } if bucket_said && !signals.is_overloaded() => None,
        AttemptResult::Failure {
            class: ErrorClass::RateLimited,
            ..
        } => Some(true),
        AttemptResult::Failure { .. } if signals.is_overloaded() => Some(true),
        AttemptResult::Failure { .. } | AttemptResult::NotMade => None,
    }
}

crate::store::store_hooks!(Throttle, ThrottleStore);

#[cfg(test)]
mod tests {
    use super::*;

    const UNBOUNDED: f64 = f64::INFINITY;

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

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    /// smithy-rs's `test_calculated_rate_with_successes` (ported from the
    /// Go v2 SDK): `W(t)` after a throttle at 5 s from 10 a second.
    #[test]
    fn cubic_success_follows_the_formula() {
        let mut state = State::new();
        state.last_throttle = 5.0;
        state.last_max_rate = 10.0;
        for (t, expected) in [
            (5.0, 7.0),
            (6.0, 9.64893600966),
            (7.0, 10.000030849917364),
            (8.0, 10.453284520772092),
            (9.0, 13.408697022224185),
            (10.0, 21.26626835427364),
            (11.0, 36.425998516920465),
        ] {
            assert!(close(state.cubic_success(t), expected), "at {t}");
        }
    }

    /// smithy-rs's `test_client_sending_rates`: the measured rate and the
    /// fill rate after responses every 200 ms, two of them throttles — the
    /// measured buckets, the 2× cap and the 0.5 floor together.
    #[test]
    fn the_rates_follow_the_aws_reference_table() {
        let mut state = State::new();
        let table = [
            (false, 0.2, 0.0, 0.5),
            (false, 0.4, 0.0, 0.5),
            (false, 0.6, 4.800000000000001, 0.5),
            (false, 0.8, 4.800000000000001, 0.5),
            (false, 1.0, 4.16, 0.5),
            (false, 1.2, 4.16, 0.6912),
            (false, 1.4, 4.16, 1.0975999999999997),
            (false, 1.6, 5.632000000000001, 1.6384000000000005),
            (false, 1.8, 5.632000000000001, 2.3328),
            (true, 2.0, 4.3264, 3.0284799999999996),
            (false, 2.2, 4.3264, 3.48663917347026),
            (false, 2.4, 4.3264, 3.821874416040255),
            (false, 2.6, 5.66528, 4.053385727709987),
            (false, 2.8, 5.66528, 4.200373108479454),
            (false, 3.0, 4.333056, 4.282036558348658),
            (true, 3.2, 4.333056, 2.99742559084406),
            (false, 3.4, 4.333056, 3.4522263943863463),
        ];
        for (throttled, t, measured, fill) in table {
            state.update(t, throttled, Throttle::MIN_RATE, UNBOUNDED);
            assert!(
                close(state.measured, measured),
                "measured at {t}: {}",
                state.measured
            );
            assert!(close(state.fill_rate, fill), "fill at {t}");
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
