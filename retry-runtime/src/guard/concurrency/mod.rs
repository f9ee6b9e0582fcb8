//! [`Concurrency`]: at most N attempts in flight at once, shared by every
//! call naming it. The engine holds a call's permit (`Engine::permit`) from
//! just before its attempt until the attempt ends, whichever way it ends;
//! the pacer (`call/pace/permit.rs`) takes it, after the other guards.
mod queue;

use std::mem::ManuallyDrop;
use std::time::Duration;

use crate::clock::{MIN_ATTEMPT, saturating_nanos};
use crate::guard::LONGEST_HOLD;
use crate::stats::{GuardRecord, GuardStats, guard_name};
use crate::task::Lane;
use crate::{AdaptiveLimit, Admit, NextAttempt, PendingAdmit, Sample, SampleOutcome, StopReason};
use queue::Permits;

/// A shared concurrency limit: at most [`limit`](Concurrency::limit)
/// attempts in flight at once among every call naming it — what a
/// provider's "N requests at a time" cap asks of its callers.
///
/// - **What holds a permit.** An attempt, from just before it starts
///   (after the call's backoff and every other guard: a call never holds
///   a permit while it waits for a cooldown, a throttle's token or its
///   backoff) until it ends. A retried stream's attempt holds it until the
///   stream ends or fails. The permit goes back on every path: success,
///   error, the attempt's `timeout`, the call's future dropped (a caller's
///   own timeout, a `select!`), a panic in the attempt.
/// - **Waiting.** A call that finds every permit out waits for one, first
///   come first served within its lane: a permit that comes back is
///   handed to the longest waiter, never taken by a newcomer. Inside a
///   [`Task`](crate::Task) the lanes are by task: the calls of tasks in
///   progress (one of their calls was admitted) go before the first calls
///   of new tasks, interactive before [`Batch`](crate::Priority::Batch)
///   (but for one grant in [`BATCH_FLOOR`](Concurrency::BATCH_FLOOR)), and
///   a task's next call made in the same poll reuses the permit its last
///   call gave back. (Bound to a store, the lanes hold within a process.) The wait is outside the attempt's
///   `timeout` and inside the call's `deadline`, and lasts at most
///   [`max_wait`](Concurrency::max_wait) (default: the policy's
///   `max_retry_after`, 120 s unless set). A wait that cannot fit (no room
///   before the deadline, or a `max_wait` of zero) is refused at once, and
///   one that runs out is refused then: the call stops with
///   [`StopReason::Concurrency`] and its last error, or, before its first
///   attempt, with its error made from a [`Refused`](crate::Refused) if its
///   type can say so ([`Classify::refused`](crate::Classify::refused)).
///   Otherwise (a type that cannot) it makes its attempt without a permit.
/// - **After a wait**, the guards before it are asked again (a breaker may
///   have opened meanwhile); one that asks to wait then has the call give
///   its permit back and queue again after that wait.
/// - **Its limit can change** ([`set_limit`](Concurrency::set_limit)): a
///   higher one hands permits to waiters at once, a lower one takes effect
///   as permits come back. An [`AdaptiveLimit`](crate::AdaptiveLimit) can
///   drive it.
///
/// Per process, unless bound to a store (feature `redis`:
/// `tenacious::redis::Store::bind`): then the limit is the fleet's, each
/// permit a lease that a killed process gives back within the lease's
/// time, and while the store does not answer each process keeps to its
/// share, `⌈limit / processes⌉`. A waiting call allocates its place in
/// the queue (one small allocation, only when it must wait); an attempt
/// that finds a permit free allocates nothing, and a call whose policy
/// does not name a concurrency limit runs none of this. Name it with
/// `#[retry(concurrency = NAME)]` or
/// [`Policy::concurrency`](crate::Policy::concurrency).
///
/// # Defaults, against resilience4j and Polly
///
/// | | tenacious | resilience4j bulkhead | Polly v8 concurrency limiter |
/// |---|---|---|---|
/// | limit | none: you name it (`new(limit)`) | 25 | none: you name it |
/// | wait for a permit | up to the policy's `max_retry_after` (120 s), inside the deadline | 0 (refused at once) | a queue of 0 (refused at once) |
/// | order of waiters | first come first served | not fair by default | first come first served |
/// | held by | one attempt (a retry takes a new one after its backoff) | the whole decorated call | the whole execution |
///
/// Agents' calls are long, and a refusal only moves the wait to the
/// caller, who has less to go on: waiting in order, bounded by the time
/// the policy would wait for a server's `Retry-After`, finishes more work
/// than failing at once. Set `max_wait(Duration::ZERO)` for
/// resilience4j's behaviour.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Concurrency, Policy};
///
/// static GPU: Concurrency = Concurrency::new(4).max_wait(Duration::from_secs(30));
/// const POLICY: Policy = Policy::new().concurrency(&GPU);
///
/// assert_eq!((GPU.limit(), GPU.in_flight(), GPU.waiting()), (4, 0, 0));
/// assert_eq!(GPU.get_max_wait(), Some(Duration::from_secs(30)));
/// ```
#[derive(Debug)]
pub struct Concurrency {
    // `ManuallyDrop`, so the `const` builders may rebuild it (a `const fn`
    // cannot run a destructor); a guard is a `static`, never dropped.
    permits: ManuallyDrop<Permits>,
    /// Nanoseconds; `u64::MAX`: the policy's `max_retry_after`.
    max_wait: u64,
    pub(crate) record: GuardRecord,
    /// The limit it follows, learnt from how its attempts end.
    adaptive: Option<&'static AdaptiveLimit>,
    /// Bound to a store (feature `redis`): the fleet's permits, as leases.
    pub(crate) shared: crate::store::StoreSlot<dyn crate::store::ConcurrencyStore>,
}

impl Concurrency {
    /// While interactive and batch calls both wait, one permit in this
    /// many goes to a batch call (see [`Priority`](crate::Priority)): 10,
    /// so batch work keeps at least a tenth of what is freed.
    pub const BATCH_FLOOR: u32 = 10;

    /// At most `limit` attempts in flight. A limit of zero is a compile
    /// error in a `static` (it would admit nothing).
    ///
    /// ```compile_fail
    /// static NONE: tenacious::Concurrency = tenacious::Concurrency::new(0);
    /// ```
    #[must_use]
    pub const fn new(limit: u32) -> Self {
        assert!(
            limit > 0,
            "a `Concurrency` limit must be at least 1: a limit of 0 admits nothing"
        );
        Self {
            permits: ManuallyDrop::new(Permits::new(limit)),
            max_wait: u64::MAX,
            record: GuardRecord::new("concurrency", "concurrency"),
            adaptive: None,
            shared: crate::store::StoreSlot::new(),
        }
    }

    /// A limit that follows `limit`, an [`AdaptiveLimit`] told how each
    /// attempt holding a permit ended, for a provider whose cap is not
    /// known: it starts at the adaptive limit's start, and after each
    /// attempt is what the adaptive limit says. An attempt answered with a
    /// rate limit or an overload (a `RateLimited` error, or
    /// [`Signals::is_overloaded`](crate::Signals::is_overloaded)) is an
    /// [`Overloaded`](crate::SampleOutcome::Overloaded) sample, one that
    /// ran out of its `timeout` a
    /// [`Dropped`](crate::SampleOutcome::Dropped) one, a success an
    /// [`Ok`](crate::SampleOutcome::Ok) one; another failure (a 500, a
    /// reset) says nothing of the cap and is no sample, nor is a call
    /// dropped mid-attempt. The attempts in flight of a sample are this
    /// limit's when the attempt ended. The engine does not time attempts
    /// (it would grow every retried future), so its samples carry no
    /// latency and the adaptive limit's latency guard stays idle: it
    /// follows the refusals, its AIMD with a ceiling (feed it samples by
    /// hand, with [`AdaptiveLimit::sample`], for the latency guard).
    /// Per process: bound to a store, the fleet's limit is its settings'.
    ///
    /// ```
    /// use tenacious::{AdaptiveLimit, Concurrency, Policy};
    ///
    /// static LEARNT: AdaptiveLimit = AdaptiveLimit::new(20);
    /// static PROVIDER: Concurrency = Concurrency::adaptive(&LEARNT);
    /// const POLICY: Policy = Policy::new().concurrency(&PROVIDER);
    ///
    /// assert_eq!(PROVIDER.limit(), 20);
    /// ```
    #[must_use]
    pub const fn adaptive(limit: &'static AdaptiveLimit) -> Self {
        let mut concurrency = Self::new(limit.get_initial());
        concurrency.adaptive = Some(limit);
        concurrency
    }

    /// The adaptive limit it follows, if any.
    #[must_use]
    pub const fn get_adaptive(&self) -> Option<&'static AdaptiveLimit> {
        self.adaptive
    }

    /// Tells the adaptive limit, if it follows one, how an attempt that
    /// held a permit ended, and takes up the limit it gives.
    pub(crate) fn sampled(&self, outcome: SampleOutcome) {
        let Some(adaptive) = self.adaptive else {
            return;
        };
        let (limit, in_flight, _) = self.permits.counts();
        adaptive.sample(Sample::new(Duration::ZERO, in_flight, outcome));
        let learnt = adaptive.limit();
        if learnt != limit {
            self.set_limit(learnt);
        }
    }

    /// The longest a call waits for a permit; `Duration::ZERO` refuses at
    /// once when none is free. Default: the policy's `max_retry_after`.
    /// Always within the call's deadline.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Concurrency;
    ///
    /// static NOW_OR_NEVER: Concurrency = Concurrency::new(8).max_wait(Duration::ZERO);
    /// assert_eq!(NOW_OR_NEVER.get_max_wait(), Some(Duration::ZERO));
    /// assert_eq!(Concurrency::new(8).get_max_wait(), None);
    /// ```
    #[must_use]
    pub const fn max_wait(self, max_wait: Duration) -> Self {
        let nanos = saturating_nanos(max_wait);
        Self {
            // `u64::MAX` is taken: a day short of 585 years waits as long.
            max_wait: if nanos == u64::MAX {
                u64::MAX - 1
            } else {
                nanos
            },
            ..self
        }
    }

    /// The wait set by [`max_wait`](Concurrency::max_wait), `None` when it
    /// is the policy's `max_retry_after`.
    #[must_use]
    pub const fn get_max_wait(&self) -> Option<Duration> {
        if self.max_wait == u64::MAX {
            None
        } else {
            Some(Duration::from_nanos(self.max_wait))
        }
    }

    guard_name!(Concurrency, GPU, "gpu", "concurrency", (8));

    /// How many attempts may be in flight now.
    #[must_use]
    pub fn limit(&self) -> u32 {
        self.permits.counts().0
    }

    /// How many attempts are in flight now (holding a permit): in this
    /// process, bound to a store too.
    #[must_use]
    pub fn in_flight(&self) -> u32 {
        match self.shared.get() {
            Some(shared) => shared.in_flight(),
            None => self.permits.counts().1,
        }
    }

    /// How many calls wait for a permit now.
    #[must_use]
    pub fn waiting(&self) -> u32 {
        self.permits.counts().2
    }

    /// Sets the limit (0 is taken as 1): raised, the waiters at the front
    /// get permits at once; lowered, attempts in flight go on and new ones
    /// wait until fewer than the new limit are out. Counted as a change
    /// of state in its statistics.
    ///
    /// ```
    /// use tenacious::Concurrency;
    ///
    /// static PROVIDER: Concurrency = Concurrency::new(8);
    /// PROVIDER.set_limit(2);
    /// assert_eq!(PROVIDER.limit(), 2);
    /// ```
    pub fn set_limit(&self, limit: u32) {
        self.permits.set_limit(limit);
        self.record.changed("limit");
        self.gauge();
    }

    /// Its statistics: the waits for a permit and the time waited, the
    /// calls refused (`stopped`), the changes of its limit, and the
    /// permits in flight and the limit (published to its record, and with
    /// feature `metrics` to the gauges, each time a permit is taken or
    /// given back or the limit set).
    ///
    /// ```
    /// use tenacious::Concurrency;
    ///
    /// static PROVIDER: Concurrency = Concurrency::new(8);
    /// let stats = PROVIDER.stats();
    /// assert_eq!((stats.kind, stats.in_flight, stats.limit), ("concurrency", Some(0), Some(8)));
    /// ```
    #[must_use]
    pub fn stats(&self) -> GuardStats {
        self.gauge();
        self.record.snapshot()
    }

    /// Publishes the permits in flight and the limit to its record.
    fn gauge(&self) {
        let (limit, in_flight, _) = self.permits.counts();
        self.record.gauge(in_flight, limit);
    }

    /// Takes a permit if one is free and no call waits for one. Bound to
    /// a store, never: the fleet's permit is asked for by
    /// [`wait_async`](Concurrency::wait_async).
    #[inline]
    pub(crate) fn try_acquire(&'static self) -> bool {
        self.record.register();
        if self.shared.get().is_some() {
            return false;
        }
        match self.permits.try_acquire() {
            Some((in_flight, limit)) => {
                self.record.gauge(in_flight, limit);
                true
            }
            None => false,
        }
    }

    /// Gives a permit back (to the longest waiter, if the limit allows).
    pub(crate) fn release(&'static self) {
        if let Some(shared) = self.shared.get() {
            shared.give_back();
            return;
        }
        let (in_flight, limit) = self.permits.release();
        self.record.gauge(in_flight, limit);
    }

    /// How long the attempt `next` may wait for a permit: `max_wait` (or
    /// the policy's `max_retry_after`), within the deadline less an
    /// attempt's minimum. Zero: refused at once.
    pub(crate) fn wait_bound(&self, next: &NextAttempt) -> Duration {
        let mut bound = self
            .get_max_wait()
            .unwrap_or(next.max_retry_after)
            .min(LONGEST_HOLD);
        if let Some(left) = next.deadline_left {
            bound = bound.min(left.saturating_sub(MIN_ATTEMPT));
        }
        bound
    }

    /// A refusal: counted, and the reason the call stops for.
    #[doc(hidden)]
    #[must_use]
    pub fn refused(&self) -> Admit {
        self.record.stopped();
        Admit::Stop(StopReason::Concurrency)
    }

    /// Waits for a permit on tokio's clock, at most `bound` (a zero bound:
    /// refused at once, but for a store's one try): `Go` when the call
    /// holds one (its own from then), else the refusal.
    pub(crate) fn wait_async(&'static self, bound: Duration, lane: Lane) -> PendingAdmit<'static> {
        if let Some(shared) = self.shared.get() {
            return shared.take(bound);
        }
        if bound.is_zero() {
            return Box::pin(std::future::ready(self.refused()));
        }
        let mut waiting = match self.permits.acquire(lane) {
            Ok(()) => return Box::pin(std::future::ready(Admit::Go)),
            Err(waiting) => waiting,
        };
        Box::pin(async move {
            let start = tokio::time::Instant::now();
            let wait = std::future::poll_fn(|cx| waiting.poll_granted(cx));
            if tokio::time::timeout(bound, wait).await.is_ok() {
                self.record.waited(start.elapsed());
                Admit::Go
            } else {
                // Leaves the queue, or hands on a permit granted just now.
                drop(waiting);
                self.refused()
            }
        })
    }

    /// [`wait_async`](Concurrency::wait_async) for a blocking call: parks
    /// the thread, on the system clock.
    pub(crate) fn wait_blocking(&'static self, bound: Duration, lane: Lane) -> Admit {
        if let Some(shared) = self.shared.get() {
            return crate::guard::block_on(shared.take(bound));
        }
        if bound.is_zero() {
            return self.refused();
        }
        let waiting = match self.permits.acquire(lane) {
            Ok(()) => return Admit::Go,
            Err(waiting) => waiting,
        };
        let start = std::time::Instant::now();
        if waiting.wait_until(start.checked_add(bound)) {
            self.record.waited(start.elapsed());
            Admit::Go
        } else {
            self.refused()
        }
    }
}

crate::store::store_hooks!(Concurrency, ConcurrencyStore);
