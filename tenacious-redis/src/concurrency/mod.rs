//! A [`Concurrency`] shared through Redis: the fleet's permits are leases
//! in one sorted set, each taken by one script on the server's clock and
//! renewed while its attempt runs, so a process killed holding leases
//! gives them back within [`CONCURRENCY_LEASE`]. While Redis does not
//! answer, each process keeps to its share of the limit.
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

mod wait;

use crate::scripts::CONCURRENCY_SCRIPT;
use crate::{Agreed, BindError, BoxedSync, Link, Member, Settings, Shareable, Unit, micros};
use tenacious_runtime::{Concurrency, PendingAdmit};

/// How long a lease lives without renewal: a process killed while it
/// holds leases gives them back to the fleet this long after its last
/// renewal. Renewed every quarter of it while held, by the store's
/// refresh loop: with a [`refresh`](crate::StoreConfig::refresh) longer
/// than half a second the lease is four refresh periods instead.
///
/// ```
/// assert_eq!(tenacious::redis::CONCURRENCY_LEASE, std::time::Duration::from_secs(2));
/// ```
pub const CONCURRENCY_LEASE: Duration = Duration::from_secs(2);

/// The first wait of a call that found every lease out, before it asks
/// the fleet again; doubled each time, up to [`LONGEST_POLL`]. A lease
/// let go in the caller's own process wakes it at once.
const FIRST_POLL: Duration = Duration::from_millis(1);
const LONGEST_POLL: Duration = Duration::from_millis(4);
/// The longest a waiting call that is not the poller waits before it
/// looks again, should no wake-up come.
const LONGEST_WAKE: Duration = Duration::from_millis(50);

const REGISTER: i64 = 0;
const TAKE: i64 = 1;
const RELEASE: i64 = 2;
const RENEW: i64 = 3;
const RESET: i64 = 4;
const RECLAIM: i64 = 5;

pub(crate) struct SharedConcurrency {
    pub(crate) link: Arc<Link>,
    key: Arc<str>,
    concurrency: &'static Concurrency,
    /// The limit, the fleet's.
    agreed: Arc<Agreed>,
    /// This process's id in the fleet, 0 until it has one.
    id: AtomicI64,
    /// The number of its next lease.
    next: AtomicU32,
    held: Mutex<Held>,
    /// Calls of this process waiting for a permit.
    waiters: AtomicU32,
    /// Whether a waiting call of the process asks the fleet (see
    /// [`SharedConcurrency::take`]).
    polling: AtomicBool,
    /// Processes alive, as last read (at least 1).
    processes: AtomicU32,
    /// Other processes refused a lease lately, as last read.
    others_waiting: AtomicU32,
    /// A permit of this process came free: a lease kept for a waiter, or
    /// a permit of its share.
    freed: tokio::sync::Notify,
    /// When the leases were last renewed.
    renewed: Mutex<Option<Instant>>,
}

/// What the process holds.
#[derive(Default)]
struct Held {
    /// Leases its attempts hold.
    leases: Vec<i64>,
    /// Leases let go by an attempt and kept for a waiter of the process.
    spare: Vec<i64>,
    /// Permits of its share taken while Redis did not answer.
    local: u32,
}

impl Held {
    /// Whether the process may take a permit of its own while Redis does
    /// not answer: only if it holds no lease (it keeps handing those to
    /// its own calls), and up to its share. A process that held leases
    /// when Redis stopped answering keeps to them; the fleet stays within
    /// the limit but for processes that held none taking their share.
    fn may_take_local(&self, share: usize) -> bool {
        self.leases.is_empty() && self.spare.is_empty() && (self.local as usize) < share
    }
}

impl SharedConcurrency {
    fn held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The lease: [`CONCURRENCY_LEASE`], or four refresh periods if
    /// longer, so that a lease is renewed (every refresh at most) well
    /// before it expires.
    fn lease_time(&self) -> Duration {
        CONCURRENCY_LEASE.max(self.link.refresh.saturating_mul(4))
    }

    fn limit(&self) -> i64 {
        self.agreed.get(0).max(1)
    }

    /// This process's share of the limit: `⌈limit / processes⌉`, what it
    /// may hold while Redis does not answer, and above which it lets a
    /// lease go to the fleet rather than keep it for its own waiters.
    fn share(&self) -> usize {
        let processes = i64::from(self.processes.load(Ordering::Relaxed).max(1));
        usize::try_from((self.limit() + processes - 1) / processes).unwrap_or(usize::MAX)
    }

    fn args(&self, op: i64, members: &[i64]) -> Vec<i64> {
        let mut args = vec![
            op,
            self.id.load(Ordering::Acquire),
            micros(self.lease_time()),
            self.limit(),
        ];
        args.extend_from_slice(members);
        args
    }

    /// Reads the counts a script answered: the processes alive, and the
    /// others waiting.
    fn counted(&self, processes: i64, others: i64) {
        self.processes.store(
            u32::try_from(processes.max(1)).unwrap_or(u32::MAX),
            Ordering::Relaxed,
        );
        self.others_waiting.store(
            u32::try_from(others.max(0)).unwrap_or(u32::MAX),
            Ordering::Relaxed,
        );
    }

    fn publish(&self, held: &Held) {
        let in_flight = u32::try_from(held.leases.len())
            .unwrap_or(u32::MAX)
            .saturating_add(held.local);
        let limit = u32::try_from(self.limit()).unwrap_or(u32::MAX);
        self.concurrency.guard_record().gauge(in_flight, limit);
    }

    /// A permit the process has at hand: a spare lease, or, Redis down, a
    /// permit of its share.
    fn at_hand(&self) -> bool {
        let mut held = self.held();
        if let Some(lease) = held.spare.pop() {
            held.leases.push(lease);
            self.publish(&held);
            return true;
        }
        if !self.link.is_up() && held.may_take_local(self.share()) {
            held.local += 1;
            self.link.local_decision();
            self.publish(&held);
            return true;
        }
        false
    }

    /// [`registered`](Self::registered) from the refresh loop, on the
    /// store's runtime.
    async fn registered_now(&'static self) -> bool {
        if self.id.load(Ordering::Acquire) != 0 {
            return true;
        }
        let answer = self
            .link
            .run::<Vec<i64>>(&CONCURRENCY_SCRIPT, &self.key, &self.args(REGISTER, &[]))
            .await;
        self.took_id(answer.as_deref())
    }

    /// Keeps the id a register answered.
    fn took_id(&self, answer: Option<&[i64]>) -> bool {
        match answer {
            // An id past 2³¹ (a key someone set) would not fit beside a
            // lease's number: the process decides in process.
            Some([id, _, processes, others, ..]) if (1..=i64::from(i32::MAX)).contains(id) => {
                let _ = self
                    .id
                    .compare_exchange(0, *id, Ordering::AcqRel, Ordering::Acquire);
                self.counted(*processes, *others);
                true
            }
            _ => false,
        }
    }

    /// The process's id, asked of the fleet if it has none yet.
    async fn registered(&'static self) -> bool {
        if self.id.load(Ordering::Acquire) != 0 {
            return true;
        }
        let answer = self
            .link
            .decide::<Vec<i64>>(&CONCURRENCY_SCRIPT, &self.key, self.args(REGISTER, &[]))
            .await;
        self.took_id(answer.as_deref())
    }

    /// A lease from the fleet: `Some(true)` taken, `Some(false)` every one
    /// out, `None` no answer (the decision is the process's).
    async fn lease(&'static self) -> Option<bool> {
        if !self.registered().await {
            return None;
        }
        let number = i64::from(self.next.fetch_add(1, Ordering::Relaxed));
        let member = (self.id.load(Ordering::Acquire) << 32) | number;
        let answer = self
            .link
            .decide::<Vec<i64>>(&CONCURRENCY_SCRIPT, &self.key, self.args(TAKE, &[member]))
            .await?;
        let [taken, _, processes, others, ..] = answer[..] else {
            return None;
        };
        self.counted(processes, others);
        if taken != 1 {
            return Some(false);
        }
        let mut held = self.held();
        held.leases.push(member);
        self.publish(&held);
        Some(true)
    }

    /// A permit of the process's share, taken in process.
    fn take_share(&self) -> bool {
        let mut held = self.held();
        if held.may_take_local(self.share()) {
            held.local += 1;
            self.link.local_decision();
            self.publish(&held);
            return true;
        }
        false
    }

    /// An attempt ended: its permit back. A lease goes to a waiter of the
    /// process while it holds no more than its share or no other process
    /// waits (as last read), else to the fleet.
    fn give_back(&'static self) {
        let mut held = self.held();
        if held.local > 0 && (held.leases.is_empty() || !self.link.is_up()) {
            held.local -= 1;
            self.publish(&held);
            drop(held);
            self.freed.notify_one();
            return;
        }
        let Some(lease) = held.leases.pop() else {
            // Lost while Redis was down: nothing to give back.
            return;
        };
        // Kept for a waiter of the process while it holds no more than its
        // share, or no other process waits.
        if self.waiters.load(Ordering::Acquire) > 0
            && (held.leases.len() < self.share()
                || self.others_waiting.load(Ordering::Relaxed) == 0)
        {
            held.spare.push(lease);
            self.publish(&held);
            drop(held);
            self.freed.notify_one();
            return;
        }
        self.publish(&held);
        drop(held);
        self.link.push::<Vec<i64>, _>(
            &CONCURRENCY_SCRIPT,
            &self.key,
            self.args(RELEASE, &[lease]),
            |_| {},
        );
    }

    fn in_flight(&self) -> u32 {
        let held = self.held();
        u32::try_from(held.leases.len())
            .unwrap_or(u32::MAX)
            .saturating_add(held.local)
    }

    /// Lets every lease of the fleet go, by hand.
    fn reset(&'static self) {
        {
            let mut held = self.held();
            held.leases.clear();
            held.spare.clear();
            self.publish(&held);
        }
        self.link.push::<Vec<i64>, _>(
            &CONCURRENCY_SCRIPT,
            &self.key,
            self.args(RESET, &[]),
            |_| {},
        );
    }

    /// Renews the leases the process holds (a quarter of a lease after the
    /// last renewal), and lets go the spare ones no waiter took.
    async fn renew(&'static self, now: Instant) {
        let due = {
            let mut renewed = self.renewed.lock().unwrap_or_else(PoisonError::into_inner);
            let due = renewed.is_none_or(|at| now.duration_since(at) >= self.lease_time() / 4);
            if due {
                *renewed = Some(now);
            }
            due
        };
        if !due || !self.registered_now().await {
            return;
        }
        let (members, spare) = {
            let mut held = self.held();
            let spare = if self.waiters.load(Ordering::Acquire) == 0 {
                std::mem::take(&mut held.spare)
            } else {
                Vec::new()
            };
            let mut members = held.leases.clone();
            members.extend_from_slice(&held.spare);
            (members, spare)
        };
        if !spare.is_empty() {
            let _ = self
                .link
                .run::<Vec<i64>>(&CONCURRENCY_SCRIPT, &self.key, &self.args(RELEASE, &spare))
                .await;
        }
        let Some(answer) = self
            .link
            .run::<Vec<i64>>(&CONCURRENCY_SCRIPT, &self.key, &self.args(RENEW, &members))
            .await
        else {
            // Not renewed: tried again at the next refresh.
            *self.renewed.lock().unwrap_or_else(PoisonError::into_inner) = None;
            return;
        };
        if let [_, _, processes, others, lost @ ..] = &answer[..] {
            self.counted(*processes, *others);
            if !lost.is_empty() {
                // Expired while Redis did not answer: their attempts run
                // on, no longer counted by the fleet.
                let mut held = self.held();
                held.leases.retain(|lease| !lost.contains(lease));
                held.spare.retain(|lease| !lost.contains(lease));
                self.publish(&held);
            }
        }
    }
}

impl Member for SharedConcurrency {
    fn sync(&'static self) -> BoxedSync {
        Box::pin(async move { self.renew(Instant::now()).await })
    }

    /// Back up: the leases the process's attempts still hold are counted
    /// again (they may have expired while Redis did not answer), so the
    /// fleet takes no more than the limit while they run.
    fn rebuild(&'static self) -> BoxedSync {
        Box::pin(async move {
            if !self.registered_now().await {
                return;
            }
            let members = {
                let held = self.held();
                let mut members = held.leases.clone();
                members.extend_from_slice(&held.spare);
                members
            };
            if let Some([_, _, processes, others, ..]) = self
                .link
                .run::<Vec<i64>>(
                    &CONCURRENCY_SCRIPT,
                    &self.key,
                    &self.args(RECLAIM, &members),
                )
                .await
                .as_deref()
            {
                self.counted(*processes, *others);
                *self.renewed.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
            }
        })
    }
}

impl Shareable for Concurrency {
    fn bind_to(
        &'static self,
        link: &Arc<Link>,
        key: String,
        agreed: Arc<Agreed>,
    ) -> Result<(), BindError> {
        let shared = crate::bind(
            self.store_slot(),
            || SharedConcurrency {
                link: Arc::clone(link),
                key: key.into(),
                concurrency: self,
                agreed,
                id: AtomicI64::new(0),
                next: AtomicU32::new(0),
                held: Mutex::new(Held::default()),
                waiters: AtomicU32::new(0),
                polling: AtomicBool::new(false),
                processes: AtomicU32::new(1),
                others_waiting: AtomicU32::new(0),
                freed: tokio::sync::Notify::new(),
                renewed: Mutex::new(None),
            },
            |shared| shared,
        )?;
        link.join(shared);
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "concurrency"
    }

    fn settings(&self) -> Settings {
        Settings::new(&[("limit", Unit::Count)], vec![i64::from(self.limit())])
    }
}

crate::forward_store!(SharedConcurrency);

impl tenacious_runtime::store::ConcurrencyStore for SharedConcurrency {
    fn take(&'static self, bound: Duration) -> PendingAdmit<'static> {
        Self::take(self, bound)
    }

    fn give_back(&'static self) {
        Self::give_back(self);
    }

    fn in_flight(&self) -> u32 {
        Self::in_flight(self)
    }

    fn reset(&'static self) {
        Self::reset(self);
    }
}
