//! [`Breaker`]: a circuit breaker on a provider's health, shared by every
//! call naming it, as a [`Guard`].
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::clock::{saturating_nanos, since_epoch};
use crate::stats::GuardRecord;
use crate::{Admit, AttemptResult, ErrorClass, Guard, NextAttempt, Outcome, StopReason};

/// The buckets of the sampling window: each holds a tenth of it.
const BUCKETS: u64 = 10;
/// A bucket: `VALID | id << 32 | failures << 16 | total`, where `id` is
/// the bucket's number on the clock (its start over its length), 31 bits.
const VALID: u64 = 1 << 63;
const ID_MASK: u64 = 0x7FFF_FFFF;
const COUNT_MAX: u64 = 0xFFFF;
/// The probes of a half-open phase: `tag << 32 | taken << 16 | succeeded`,
/// where `tag` is the low 32 bits of the phase's opening time.
const TAG_MASK: u64 = 0xFFFF_FFFF;

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
///   refused with [`StopReason::CircuitOpen`]. Outcomes of attempts
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
    /// Every attempt is refused with [`StopReason::CircuitOpen`].
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
    /// Attempts it refused with [`StopReason::CircuitOpen`] (a call's first
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
    /// The default failure ratio: 0.5 (see the type's docs).
    pub const RATIO: f64 = 0.5;
    /// The default sampling window: 30 s.
    pub const WINDOW: Duration = Duration::from_secs(30);
    /// The default minimum of counted outcomes in the window: 10.
    pub const MIN_THROUGHPUT: u32 = 10;
    /// The default break: 15 s.
    pub const OPEN_FOR: Duration = Duration::from_secs(15);
    /// The default probes while half-open: 1.
    pub const PROBES: u32 = 1;

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

    /// The share of counted failures among the window's outcomes at which
    /// it opens, from 0 (any counted failure, once the minimum throughput
    /// is reached) to 1 (every outcome a failure). Default
    /// [`RATIO`](Breaker::RATIO), 0.5.
    ///
    /// ```
    /// use tenacious::Breaker;
    ///
    /// static TOUCHY: Breaker = Breaker::new().ratio(0.25);
    /// assert_eq!(TOUCHY.get_ratio(), 0.25);
    /// ```
    ///
    /// # Panics
    ///
    /// For a ratio outside `0.0..=1.0` or NaN, as a config's `ratio` is
    /// refused: in a `const` or `static`, at compile time.
    ///
    /// ```compile_fail
    /// use tenacious::Breaker;
    ///
    /// static WRONG: Breaker = Breaker::new().ratio(50.0); // a percentage: 0.5 was meant
    /// ```
    #[must_use]
    pub const fn ratio(self, ratio: f64) -> Self {
        assert!(
            ratio >= 0.0 && ratio <= 1.0,
            "Breaker::ratio takes the share of failures that opens the breaker, from 0 to 1, \
             like `ratio(0.5)`"
        );
        Self { ratio, ..self }
    }

    /// How far back the outcomes it weighs go. Default
    /// [`WINDOW`](Breaker::WINDOW), 30 s. Kept in ten buckets, so the
    /// window slides a tenth at a time.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Breaker;
    ///
    /// static PROVIDER: Breaker = Breaker::new().window(Duration::from_secs(60));
    /// assert_eq!(PROVIDER.get_window(), Duration::from_secs(60));
    /// ```
    ///
    /// # Panics
    ///
    /// For a zero window, which weighs no outcome, so the breaker would
    /// never open (a config's zero `window` is refused too): in a `const`
    /// or `static`, at compile time.
    #[must_use]
    pub const fn window(self, window: Duration) -> Self {
        assert!(
            !window.is_zero(),
            "Breaker::window: a zero window weighs no outcome, so the breaker never opens; give \
             how far back to weigh them, like `window(Duration::from_secs(30))`"
        );
        Self {
            window: saturating_nanos(window),
            ..self
        }
    }

    /// The fewest counted outcomes (failures and successes) in the window
    /// before the ratio is weighed at all. Default
    /// [`MIN_THROUGHPUT`](Breaker::MIN_THROUGHPUT), 10; at least 1.
    ///
    /// ```
    /// use tenacious::Breaker;
    ///
    /// static PROVIDER: Breaker = Breaker::new().min_throughput(20);
    /// assert_eq!(PROVIDER.get_min_throughput(), 20);
    /// ```
    ///
    /// # Panics
    ///
    /// For 0, as a config's `min_throughput = 0` is refused (write 1 to
    /// weigh from the first outcome): in a `const` or `static`, at compile
    /// time.
    #[must_use]
    pub const fn min_throughput(self, min: u32) -> Self {
        assert!(
            min >= 1,
            "Breaker::min_throughput takes the fewest outcomes the breaker weighs, at least 1, \
             like `min_throughput(10)`"
        );
        Self {
            min_throughput: min,
            ..self
        }
    }

    /// How long it stays open before it probes (the break). Default
    /// [`OPEN_FOR`](Breaker::OPEN_FOR), 15 s.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Breaker;
    ///
    /// static PROVIDER: Breaker = Breaker::new().open_for(Duration::from_secs(30));
    /// assert_eq!(PROVIDER.get_open_for(), Duration::from_secs(30));
    /// ```
    ///
    /// # Panics
    ///
    /// For a zero break, which would let probes through as soon as it
    /// opens, holding no call back (a config's zero `open_for` is refused
    /// too): in a `const` or `static`, at compile time.
    ///
    /// ```compile_fail
    /// use std::time::Duration;
    /// use tenacious::Breaker;
    ///
    /// static WRONG: Breaker = Breaker::new().open_for(Duration::ZERO);
    /// ```
    #[must_use]
    pub const fn open_for(self, open_for: Duration) -> Self {
        assert!(
            !open_for.is_zero(),
            "Breaker::open_for: a zero break lets probes through as soon as the breaker opens, \
             so it holds no call back; give the break, like `open_for(Duration::from_secs(15))`"
        );
        Self {
            open_for: saturating_nanos(open_for),
            ..self
        }
    }

    /// The attempts it admits while half-open, and the successes among
    /// them that close it. Default [`PROBES`](Breaker::PROBES), 1; from 1
    /// to 65535.
    ///
    /// ```
    /// use tenacious::Breaker;
    ///
    /// static PROVIDER: Breaker = Breaker::new().probes(3);
    /// assert_eq!(PROVIDER.get_probes(), 3);
    /// ```
    ///
    /// # Panics
    ///
    /// For 0 or more than 65535, as a config's `probes` out of that range
    /// is refused: in a `const` or `static`, at compile time.
    #[must_use]
    pub const fn probes(self, probes: u32) -> Self {
        assert!(
            probes >= 1 && probes <= COUNT_MAX as u32,
            "Breaker::probes takes the attempts let through while half-open, from 1 to 65535, \
             like `probes(1)`"
        );
        #[allow(clippy::cast_possible_truncation)] // at most 65535
        let probes = probes as u16;
        Self { probes, ..self }
    }

    /// The ratio set by [`ratio`](Breaker::ratio).
    #[must_use]
    pub const fn get_ratio(&self) -> f64 {
        self.ratio
    }

    /// The window set by [`window`](Breaker::window).
    #[must_use]
    pub const fn get_window(&self) -> Duration {
        Duration::from_nanos(self.window)
    }

    /// The minimum set by [`min_throughput`](Breaker::min_throughput).
    #[must_use]
    pub const fn get_min_throughput(&self) -> u32 {
        self.min_throughput
    }

    /// The break set by [`open_for`](Breaker::open_for).
    #[must_use]
    pub const fn get_open_for(&self) -> Duration {
        Duration::from_nanos(self.open_for)
    }

    /// The probes set by [`probes`](Breaker::probes).
    #[must_use]
    pub const fn get_probes(&self) -> u32 {
        self.probes as u32
    }

    /// Where it stands now, on the system's clock. (A call asks on its own
    /// clock, tokio's for an async call: see [`state_at`](Breaker::state_at).)
    #[must_use]
    pub fn state(&self) -> BreakerState {
        self.state_at(Instant::now())
    }

    /// Where it stands at `now`, an instant of the calls' clock (for an
    /// async call on tokio's clock, `tokio::time::Instant::now().into_std()`).
    /// Bound to a store that is up (feature `redis`), the fleet's breaker,
    /// as last read: what its decisions follow. So is
    /// [`admits_in_at`](Breaker::admits_in_at).
    ///
    /// ```
    /// use std::time::Instant;
    /// use tenacious::{Breaker, BreakerState};
    ///
    /// assert_eq!(Breaker::new().state_at(Instant::now()), BreakerState::Closed);
    /// ```
    #[must_use]
    pub fn state_at(&self, now: Instant) -> BreakerState {
        if let Some(shared) = self.shared.get()
            && shared.is_up()
        {
            return shared.view(now).0;
        }
        match self.opened.load(Ordering::Acquire) {
            0 => BreakerState::Closed,
            opened if since_epoch(now) < opened.saturating_add(self.open_for) => BreakerState::Open,
            _ => BreakerState::HalfOpen,
        }
    }

    /// Whether it refuses an attempt now, on the system's clock: while
    /// [`Open`](BreakerState::Open), and while
    /// [`HalfOpen`](BreakerState::HalfOpen) with every probe slot out —
    /// what its decisions say, so `is_open()` is true exactly when a call
    /// asking now would stop with [`StopReason::CircuitOpen`]. See
    /// [`is_open_at`](Breaker::is_open_at) for a call's own clock.
    #[must_use]
    pub fn is_open(&self) -> bool {
        self.is_open_at(Instant::now())
    }

    /// [`is_open`](Breaker::is_open) at `now`, an instant of the calls'
    /// clock (for an async call on tokio's clock,
    /// `tokio::time::Instant::now().into_std()`).
    ///
    /// ```
    /// use std::time::Instant;
    /// use tenacious::Breaker;
    ///
    /// assert!(!Breaker::new().is_open_at(Instant::now()));
    /// ```
    #[must_use]
    pub fn is_open_at(&self, now: Instant) -> bool {
        !self.admits_in_at(now).is_zero()
    }

    /// How long from now, on the system's clock, until it may admit an
    /// attempt again: what to tell a caller (or a model) it stopped.
    /// See [`admits_in_at`](Breaker::admits_in_at).
    #[must_use]
    pub fn admits_in(&self) -> Duration {
        self.admits_in_at(Instant::now())
    }

    /// How long from `now` (an instant of the calls' clock) until it may
    /// admit an attempt again: zero while closed or while a probe slot is
    /// free; the rest of the break while open; while half-open with every
    /// probe out, until those slots are freed, a whole
    /// [`open_for`](Breaker::open_for) after the break ended — the latest
    /// it admits again (sooner, at once, if the probes succeed and close
    /// it; a probe that fails opens it for another `open_for`). What a call
    /// it refuses is told ([`Guard::retry_in`]).
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use tenacious::Breaker;
    ///
    /// assert_eq!(Breaker::new().admits_in_at(Instant::now()), Duration::ZERO);
    /// ```
    #[must_use]
    pub fn admits_in_at(&self, now: Instant) -> Duration {
        if let Some(shared) = self.shared.get()
            && shared.is_up()
        {
            return shared.view(now).1;
        }
        let opened = self.opened.load(Ordering::Acquire);
        if opened == 0 {
            return Duration::ZERO;
        }
        let now = since_epoch(now);
        let half_open_at = opened.saturating_add(self.open_for);
        if now < half_open_at {
            return Duration::from_nanos(half_open_at - now);
        }
        let (tag, taken, _) = unpack_probes(self.probes_out.load(Ordering::Acquire));
        if tag != opened & TAG_MASK || taken < u64::from(self.probes) {
            Duration::ZERO
        } else {
            // `admit_open` frees the slots then.
            let freed_at = half_open_at.saturating_add(self.open_for);
            Duration::from_nanos(freed_at.saturating_sub(now))
        }
    }

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

    fn refuse(&self) -> Admit {
        self.record.stopped();
        Admit::Stop(StopReason::CircuitOpen)
    }

    /// `admit` once it is not closed: `opened` is when it opened.
    fn admit_open(&self, opened: u64, now: u64) -> Admit {
        self.admit_open_slot(opened, now).0
    }

    /// Asked before an attempt of a call that may hold one of its probe
    /// slots already: `held`, the half-open phase of the slot this call
    /// took for the attempt, if it took one, before a wait another guard
    /// asked for. The same answer as [`Guard::admit`], and, for a Go that
    /// holds a probe slot in process, its phase: a call that holds the slot
    /// of the phase the breaker is in is that phase's probe, and goes
    /// without taking another. (A breaker bound to a store gives its slot
    /// back over a wait instead: `None`.)
    pub(crate) fn admit_holding(
        &self,
        next: &NextAttempt,
        held: Option<u32>,
    ) -> (Admit, Option<u32>) {
        if self.shared.get().is_some() {
            return (self.admit(next), None);
        }
        let opened = self.opened.load(Ordering::Acquire);
        if opened == 0 {
            return (Admit::Go, None);
        }
        let now = since_epoch(next.now);
        #[allow(clippy::cast_possible_truncation)] // the tag is 32 bits
        let tag = (opened & TAG_MASK) as u32;
        if held == Some(tag) && now >= opened.saturating_add(self.open_for) {
            return (Admit::Go, held);
        }
        self.admit_open_slot(opened, now)
    }

    /// [`admit_open`](Breaker::admit_open), with the phase of the probe
    /// slot a Go took (`None` for a Go because it closed meanwhile).
    fn admit_open_slot(&self, mut opened: u64, now: u64) -> (Admit, Option<u32>) {
        loop {
            let half_open_at = opened.saturating_add(self.open_for);
            if now < half_open_at {
                return (self.refuse(), None);
            }
            let tag = opened & TAG_MASK;
            let probes = u64::from(self.probes);
            let took = self
                .probes_out
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |out| {
                    let (out_tag, taken, succeeded) = unpack_probes(out);
                    let (taken, succeeded) = if out_tag == tag {
                        (taken, succeeded)
                    } else {
                        (0, 0)
                    };
                    (taken < probes).then(|| pack_probes(tag, taken + 1, succeeded))
                });
            if took.is_ok() {
                self.probes_admitted.fetch_add(1, Ordering::Relaxed);
                #[allow(clippy::cast_possible_truncation)] // the tag is 32 bits
                return (Admit::Go, Some(tag as u32));
            }
            // Every slot is out. Probes out for a whole `open_for` without a
            // word (their calls were dropped) free them: a new half-open
            // phase, starting now.
            if self.open_for == 0 || now < half_open_at.saturating_add(self.open_for) {
                return (self.refuse(), None);
            }
            let fresh = now - self.open_for;
            match self
                .opened
                .compare_exchange(opened, fresh, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    self.probes_out
                        .store(pack_probes(fresh & TAG_MASK, 0, 0), Ordering::Release);
                    opened = fresh;
                }
                Err(0) => return (Admit::Go, None),
                Err(other) => opened = other,
            }
        }
    }

    /// Opens it at `now` if it still stands as `from` (0: closed, else when
    /// it last opened); whoever wins counts the opening and starts the
    /// new phase's probes afresh.
    fn open(&self, from: u64, now: u64) {
        // Never 0 (closed), never the time it stands at (a new phase).
        let at = now.max(1).max(from.saturating_add(1));
        if self
            .opened
            .compare_exchange(from, at, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.probes_out
                .store(pack_probes(at & TAG_MASK, 0, 0), Ordering::Release);
            self.openings.fetch_add(1, Ordering::Relaxed);
            self.record.changed("open");
        }
    }

    /// `now` on the window's own clock: nanoseconds since the first
    /// outcome it sampled, so the buckets fall the same way in every run
    /// that starts its calls the same way, wherever the process's guard
    /// epoch lies (as the throttle times its rate from its own first
    /// answer).
    fn window_time(&self, now: u64) -> u64 {
        let origin = match self
            .origin
            .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => now,
            Err(origin) => origin,
        };
        now.saturating_sub(origin)
    }

    /// Adds an outcome to the window at `now`.
    fn sample(&self, now: u64, failed: bool) {
        let now = self.window_time(now);
        let length = (self.window / BUCKETS).max(1);
        let number = now / length;
        let id = number & ID_MASK;
        #[allow(clippy::cast_possible_truncation)] // below BUCKETS
        let slot = &self.buckets[(number % BUCKETS) as usize];
        let _ = slot.fetch_update(Ordering::AcqRel, Ordering::Acquire, |bucket| {
            let (failures, total) = match unpack_bucket(bucket) {
                Some((bucket_id, failures, total)) if bucket_id == id => (failures, total),
                _ => (0, 0),
            };
            Some(pack_bucket(
                id,
                (failures + u64::from(failed)).min(COUNT_MAX),
                (total + 1).min(COUNT_MAX),
            ))
        });
    }

    /// The window's counted failures and total at `now`.
    fn sampled(&self, now: u64) -> (u64, u64) {
        let now = self.window_time(now);
        let id = (now / (self.window / BUCKETS).max(1)) & ID_MASK;
        self.buckets
            .iter()
            .filter_map(|bucket| unpack_bucket(bucket.load(Ordering::Acquire)))
            .filter(|(bucket_id, ..)| id.wrapping_sub(*bucket_id) & ID_MASK < BUCKETS)
            .fold((0, 0), |(f, t), (_, failures, total)| {
                (f + failures, t + total)
            })
    }
}

impl Default for Breaker {
    /// [`Breaker::new`].
    fn default() -> Self {
        Self::new()
    }
}

impl Guard for Breaker {
    /// Go while closed; while open, [`StopReason::CircuitOpen`]; while
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

/// What an outcome says, to the breaker.
#[derive(Clone, Copy)]
enum Seen {
    Success,
    /// A counted failure: transient, or overloaded.
    Unhealthy,
    NotMade,
}

const fn pack_bucket(id: u64, failures: u64, total: u64) -> u64 {
    VALID | (id & ID_MASK) << 32 | failures << 16 | total
}

/// `(id, failures, total)`, or `None` for a bucket never written (or
/// cleared when the breaker closed).
const fn unpack_bucket(bucket: u64) -> Option<(u64, u64, u64)> {
    if bucket & VALID == 0 {
        None
    } else {
        Some((
            (bucket >> 32) & ID_MASK,
            (bucket >> 16) & COUNT_MAX,
            bucket & COUNT_MAX,
        ))
    }
}

const fn pack_probes(tag: u64, taken: u64, succeeded: u64) -> u64 {
    (tag & TAG_MASK) << 32 | (taken & COUNT_MAX) << 16 | (succeeded & COUNT_MAX)
}

/// `(tag, taken, succeeded)`.
const fn unpack_probes(out: u64) -> (u64, u64, u64) {
    (out >> 32, (out >> 16) & COUNT_MAX, out & COUNT_MAX)
}

crate::store::store_hooks!(Breaker, BreakerStore);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Signals;

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
    fn the_defaults_are_the_documented_ones() {
        let breaker = Breaker::new();
        assert_eq!(
            (
                breaker.get_ratio(),
                breaker.get_window(),
                breaker.get_min_throughput(),
                breaker.get_open_for(),
                breaker.get_probes()
            ),
            (0.5, Duration::from_secs(30), 10, Duration::from_secs(15), 1)
        );
        assert_eq!(Breaker::new().ratio(0.0).get_ratio(), 0.0);
        assert_eq!(Breaker::new().ratio(1.0).get_ratio(), 1.0);
        assert_eq!(Breaker::new().min_throughput(1).get_min_throughput(), 1);
        assert_eq!(Breaker::new().probes(65_535).get_probes(), 65_535);
        assert_eq!(
            Breaker::new().window(Duration::from_nanos(1)).get_window(),
            Duration::from_nanos(1)
        );
    }

    /// What the config reader refuses, the builders refuse, at run time as
    /// at compile time (`tests/ui/fail/breaker_*.rs`).
    #[test]
    #[should_panic(
        expected = "Breaker::open_for: a zero break lets probes through as soon as \
                               the breaker opens"
    )]
    fn a_zero_break_is_refused() {
        let zero = std::hint::black_box(Duration::ZERO);
        let _ = Breaker::new().open_for(zero);
    }

    #[test]
    #[should_panic(expected = "Breaker::window: a zero window weighs no outcome")]
    fn a_zero_window_is_refused() {
        let _ = Breaker::new().window(std::hint::black_box(Duration::ZERO));
    }

    #[test]
    #[should_panic(
        expected = "Breaker::ratio takes the share of failures that opens the \
                               breaker, from 0 to 1"
    )]
    fn a_ratio_above_1_is_refused() {
        let _ = Breaker::new().ratio(std::hint::black_box(50.0));
    }

    #[test]
    #[should_panic(expected = "Breaker::ratio takes the share")]
    fn a_nan_ratio_is_refused() {
        let _ = Breaker::new().ratio(std::hint::black_box(f64::NAN));
    }

    #[test]
    #[should_panic(
        expected = "Breaker::min_throughput takes the fewest outcomes the breaker \
                               weighs, at least 1"
    )]
    fn a_zero_min_throughput_is_refused() {
        let _ = Breaker::new().min_throughput(std::hint::black_box(0));
    }

    #[test]
    #[should_panic(
        expected = "Breaker::probes takes the attempts let through while half-open, \
                               from 1 to 65535"
    )]
    fn zero_probes_are_refused() {
        let _ = Breaker::new().probes(std::hint::black_box(0));
    }

    #[test]
    #[should_panic(expected = "Breaker::probes takes the attempts")]
    fn more_probes_than_65535_are_refused() {
        let _ = Breaker::new().probes(std::hint::black_box(65_536));
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
