//! `RetryBudget`: a token bucket shared by every call that names it, so a
//! fleet of callers cannot multiply the load on a failing service.
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};

/// A shared retry budget: a token bucket every retry draws from, so that
/// when a dependency goes down, retries stop at once instead of multiplying
/// its load by `max`.
///
/// Declare it as a `static` and name it in `#[retry(budget = NAME)]` or
/// [`Policy::budget`](crate::Policy::budget); every call naming it shares
/// it. The arithmetic is the retry quota of the AWS SDKs' *standard* retry
/// mode (botocore's `retries/quota.py` and `retries/standard.py`; the
/// "Retry behavior" page of the AWS SDKs and Tools reference guide):
///
/// | event | tokens |
/// |---|---|
/// | the bucket starts full | [`CAPACITY`](RetryBudget::CAPACITY) (500), or the capacity given |
/// | a retry | − [`RETRY_COST`](RetryBudget::RETRY_COST) (5) |
/// | a retry after an attempt that timed out | − [`TIMEOUT_RETRY_COST`](RetryBudget::TIMEOUT_RETRY_COST) (10) |
/// | a call that succeeds after retrying | + what its last retry took (5 or 10) |
/// | a call that succeeds at the first attempt | + [`SUCCESS_REFUND`](RetryBudget::SUCCESS_REFUND) (1) |
///
/// never above the capacity. A retry the bucket cannot pay for is not made:
/// the call returns its error with
/// [`StopReason::Budget`](crate::StopReason::Budget). So with the default
/// 500 tokens, at most 100 retries run back to back across all callers
/// while nothing succeeds; successes earn the budget back. "Timed out" means
/// the attempt hit the call's own `timeout`; an error the attempt returned
/// itself costs 5 whatever it says.
///
/// Lock-free: one `AtomicU32`, updated by compare-and-swap. `const`, so it
/// needs no lazy initialisation.
///
/// ```
/// use std::io;
/// use std::time::Duration;
/// use tenacious::{Policy, RetryBudget};
///
/// static SEARCH_BUDGET: RetryBudget = RetryBudget::with_capacity(10);
/// const POLICY: Policy = Policy::new().max(3).base(Duration::ZERO).budget(&SEARCH_BUDGET);
///
/// // The service is down: each failing call spends 5 tokens per retry.
/// let down = || Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused));
/// assert!(POLICY.retry_blocking(down).is_err()); // 2 retries: 10 tokens
/// assert_eq!(SEARCH_BUDGET.balance(), 0);
///
/// // Empty: the next failing call makes one attempt and gives up at once.
/// let mut attempts = 0;
/// let _ = POLICY.retry_blocking(|| { attempts += 1; down() });
/// assert_eq!(attempts, 1);
///
/// // A success earns a token back.
/// assert!(POLICY.retry_blocking(|| Ok::<_, io::Error>(())).is_ok());
/// assert_eq!(SEARCH_BUDGET.balance(), 1);
/// ```
pub struct RetryBudget {
    balance: AtomicU32,
    capacity: u32,
    pub(crate) shared: crate::store::StoreSlot<dyn crate::store::BudgetStore>,
}

impl RetryBudget {
    /// The slot a store binds it by.
    #[doc(hidden)]
    #[must_use]
    pub const fn store_slot(&self) -> &crate::store::StoreSlot<dyn crate::store::BudgetStore> {
        &self.shared
    }

    /// The default capacity: 500 tokens.
    pub const CAPACITY: u32 = 500;
    /// What a retry costs: 5 tokens.
    pub const RETRY_COST: u32 = 5;
    /// What a retry after a timed-out attempt costs: 10 tokens.
    pub const TIMEOUT_RETRY_COST: u32 = 10;
    /// What a call that succeeds without retrying gives back: 1 token.
    pub const SUCCESS_REFUND: u32 = 1;

    /// A full bucket of [`CAPACITY`](RetryBudget::CAPACITY) (500) tokens.
    ///
    /// ```
    /// use tenacious::RetryBudget;
    ///
    /// static BUDGET: RetryBudget = RetryBudget::new();
    /// assert_eq!(BUDGET.balance(), 500);
    /// assert_eq!(BUDGET.capacity(), 500);
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self::with_capacity(Self::CAPACITY)
    }

    /// A full bucket of `capacity` tokens: `capacity / 5` retries in a row.
    /// Zero never allows a retry.
    ///
    /// ```
    /// use tenacious::RetryBudget;
    ///
    /// static SMALL: RetryBudget = RetryBudget::with_capacity(50);
    /// assert_eq!(SMALL.balance(), 50);
    /// ```
    #[must_use]
    pub const fn with_capacity(capacity: u32) -> Self {
        Self {
            balance: AtomicU32::new(capacity),
            capacity,
            shared: crate::store::StoreSlot::new(),
        }
    }

    /// The tokens left now (others may take or give some at any moment).
    /// Bound to a store (feature `redis`), the fleet's, as last read.
    #[must_use]
    pub fn balance(&self) -> u32 {
        if let Some(shared) = self.shared.get()
            && shared.is_up()
        {
            return shared.balance();
        }
        self.balance.load(Ordering::Relaxed)
    }

    /// Fills the bucket now, by hand: for an operator after an outage the
    /// budget rightly drained, once the provider serves again. Bound to a
    /// store (feature `redis`), the fleet's bucket is filled too.
    ///
    /// ```
    /// use tenacious::RetryBudget;
    ///
    /// static BUDGET: RetryBudget = RetryBudget::with_capacity(50);
    /// BUDGET.refill();
    /// assert_eq!(BUDGET.balance(), 50);
    /// ```
    pub fn refill(&self) {
        self.balance.store(self.capacity, Ordering::Relaxed);
        if let Some(shared) = self.shared.get() {
            shared.reset();
        }
    }

    /// The most tokens the bucket holds.
    #[must_use]
    pub const fn capacity(&self) -> u32 {
        self.capacity
    }

    /// What a retry costs: [`TIMEOUT_RETRY_COST`](RetryBudget::TIMEOUT_RETRY_COST)
    /// after an attempt that timed out, else [`RETRY_COST`](RetryBudget::RETRY_COST).
    pub(crate) const fn retry_cost(after_timeout: bool) -> u32 {
        if after_timeout {
            Self::TIMEOUT_RETRY_COST
        } else {
            Self::RETRY_COST
        }
    }

    /// Takes `cost` tokens if there are that many; `false` leaves the
    /// bucket as it was.
    #[doc(hidden)]
    pub fn try_acquire(&self, cost: u32) -> bool {
        // The counter publishes no other memory, so `Relaxed` suffices; the
        // compare-and-swap makes each take atomic, so two callers can never
        // both spend the last tokens.
        self.balance
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                b.checked_sub(cost)
            })
            .is_ok()
    }

    /// Gives back up to `amount` tokens, never above the capacity; returns
    /// how many went in.
    pub(crate) fn refund(&self, amount: u32) -> u32 {
        let capacity = self.capacity;
        match self
            .balance
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                // `None` when full: no write, so a healthy fleet does not
                // contend on the cache line just to stay full.
                let refilled = b.saturating_add(amount).min(capacity);
                (refilled != b).then_some(refilled)
            }) {
            Ok(before) => before.saturating_add(amount).min(capacity) - before,
            Err(_) => 0,
        }
    }

    #[cfg(test)]
    const fn with_balance(capacity: u32, balance: u32) -> Self {
        Self {
            balance: AtomicU32::new(balance),
            capacity,
            shared: crate::store::StoreSlot::new(),
        }
    }
}

impl Default for RetryBudget {
    /// [`RetryBudget::new`]: 500 tokens.
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryBudget")
            .field("balance", &self.balance())
            .field("capacity", &self.capacity)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;
    use std::time::Duration;

    use super::*;
    use crate::{Classify, ErrorClass, Failure, Policy, StopReason};

    #[test]
    fn acquire_never_goes_below_zero_and_refund_never_above_capacity() {
        let budget = RetryBudget::with_capacity(12);
        assert!(budget.try_acquire(5));
        assert!(budget.try_acquire(5));
        assert!(!budget.try_acquire(5));
        assert_eq!(budget.balance(), 2);
        assert_eq!(budget.refund(7), 7);
        assert_eq!(budget.refund(7), 3);
        assert_eq!(budget.refund(1), 0);
        assert_eq!(budget.balance(), 12);
        assert_eq!(budget.refund(u32::MAX), 0);
        let huge = RetryBudget::with_balance(u32::MAX, u32::MAX - 1);
        assert_eq!(huge.refund(u32::MAX), 1);
        assert!(RetryBudget::with_capacity(0).try_acquire(0));
        assert!(!RetryBudget::with_capacity(0).try_acquire(1));
    }

    #[test]
    fn debug_shows_balance_and_capacity() {
        let budget = RetryBudget::with_balance(9, 4);
        assert_eq!(
            format!("{budget:?}"),
            "RetryBudget { balance: 4, capacity: 9 }"
        );
    }

    #[derive(Debug)]
    struct Down;

    impl Classify for Down {
        fn classify(&self) -> ErrorClass {
            ErrorClass::Transient
        }
    }

    /// A xorshift step: the failures of each task, seeded per task, the same
    /// on every run. (Atomics only so the task's future is `Send`; each is
    /// used by one task.)
    fn next(state: &AtomicU64) -> u64 {
        let mut x = state.load(Ordering::Relaxed);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        state.store(x, Ordering::Relaxed);
        x
    }

    /// What one task's calls did to the bucket, by its own count.
    #[derive(Debug, Default)]
    struct Tally {
        retries: u64,
        refunds_due: u64,
        budget_stops: u64,
        first_attempt_budget_stops: u64,
    }

    // Room above the start, so no refund is ever cut by the capacity and
    // the arithmetic below is exact; the bucket still runs dry, since half
    // of all attempts fail and each failing call drains more than a success
    // earns back.
    static STRESSED: RetryBudget = RetryBudget::with_balance(u32::MAX, 1_000);
    const STRESS: Policy = Policy::new().max(3).base(Duration::ZERO).budget(&STRESSED);

    #[test]
    fn eight_tasks_never_retry_more_than_the_bucket_allows_nor_lose_a_refund() {
        const TASKS: u64 = 8;
        const CALLS: u64 = 10_000;
        let start = STRESSED.balance();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(8)
            .build()
            .unwrap();
        let tallies: Vec<Tally> = runtime.block_on(async {
            let tasks: Vec<_> = (0..TASKS)
                .map(|task| {
                    tokio::spawn(async move {
                        let rng = AtomicU64::new(0x9e37_79b9_7f4a_7c15 ^ (task + 1));
                        let mut tally = Tally::default();
                        for _ in 0..CALLS {
                            let attempts = AtomicU32::new(0);
                            let result = STRESS
                                .retry_failure(|| {
                                    attempts.fetch_add(1, Ordering::Relaxed);
                                    let fails = next(&rng) & 1 == 0;
                                    std::future::ready(if fails { Err(Down) } else { Ok(()) })
                                })
                                .await;
                            let attempts = attempts.into_inner();
                            let retries = u64::from(attempts - 1);
                            tally.retries += retries;
                            match result {
                                Ok(()) if retries == 0 => tally.refunds_due += 1,
                                Ok(()) => tally.refunds_due += 5,
                                Err(failure) => {
                                    assert_eq!(failure.attempts().len(), attempts as usize);
                                    if failure.stop_reason() == StopReason::Budget {
                                        tally.budget_stops += 1;
                                        if retries == 0 {
                                            tally.first_attempt_budget_stops += 1;
                                        }
                                    }
                                }
                            }
                        }
                        tally
                    })
                })
                .collect();
            let mut tallies = Vec::new();
            for task in tasks {
                tallies.push(task.await.unwrap());
            }
            tallies
        });
        let retries: u64 = tallies.iter().map(|t| t.retries).sum();
        let refunds: u64 = tallies.iter().map(|t| t.refunds_due).sum();
        let budget_stops: u64 = tallies.iter().map(|t| t.budget_stops).sum();
        let first: u64 = tallies.iter().map(|t| t.first_attempt_budget_stops).sum();
        let end = u64::from(STRESSED.balance());
        // Exact: every retry took 5, every success gave back what it was
        // due (the capacity is out of reach), and nothing else moved a
        // token. As the balance cannot go below zero, this also says no
        // retry ran that the bucket could not pay for.
        assert_eq!(end + retries * 5, u64::from(start) + refunds);
        // The bucket did run dry, and then stopped retries, some of them
        // before any retry of their call.
        assert!(budget_stops > 1_000, "{budget_stops}");
        assert!(first > 0);
        // Without a budget, 8 * 10 000 calls at 50 % failures retry about
        // 60 000 times; the bucket allowed far fewer.
        assert!(retries < 30_000, "{retries}");
    }

    #[test]
    fn an_empty_budget_makes_one_attempt_and_says_so() {
        static EMPTY: RetryBudget = RetryBudget::with_capacity(4);
        const POLICY: Policy = Policy::new().base(Duration::ZERO).budget(&EMPTY);
        let mut attempts = 0;
        let result: Result<(), Failure<Down>> = POLICY.retry_blocking_failure(|| {
            attempts += 1;
            Err(Down)
        });
        assert_eq!(attempts, 1);
        assert_eq!(result.unwrap_err().stop_reason(), StopReason::Budget);
        assert_eq!(EMPTY.balance(), 4);
    }
}
