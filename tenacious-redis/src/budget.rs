//! A [`RetryBudget`] shared through Redis: each retry takes its tokens
//! from the fleet's bucket in one script call; refunds are sent in a batch
//! every refresh.
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::scripts::BUDGET_SCRIPT;
use crate::{Agreed, BUDGET_IDLE, BindError, BoxedSync, Link, Member, Settings, Shareable, Unit};
use tenacious_runtime::{Admit, PendingAdmit, RetryBudget, StopReason};

pub(crate) struct SharedBudget {
    pub(crate) link: Arc<Link>,
    key: Arc<str>,
    /// The capacity, the fleet's.
    agreed: Arc<Agreed>,
    /// Refunds not sent yet.
    pending: AtomicU32,
    /// The fleet's tokens as last read.
    balance: AtomicU32,
}

impl SharedBudget {
    /// Fills the fleet's bucket (see [`RetryBudget::refill`]): its mirror
    /// at once, the key deleted in the background (a missing one is full).
    pub(crate) fn reset(&'static self) {
        self.pending.store(0, Ordering::Release);
        self.balance.store(
            u32::try_from(self.capacity()).unwrap_or(0),
            Ordering::Release,
        );
        crate::forget(&self.link, &self.key);
    }

    fn capacity(&self) -> i64 {
        self.agreed.get(0)
    }

    /// A retry's tokens from the fleet's bucket: `None` when Redis is down
    /// (the local bucket pays).
    pub(crate) fn take<'a>(&'static self, local: &'a RetryBudget, cost: u32) -> PendingAdmit<'a> {
        let answer = self.link.decide::<(i64, i64)>(
            &BUDGET_SCRIPT,
            &self.key,
            vec![1, i64::from(cost), self.capacity(), ttl()],
        );
        Box::pin(async move {
            match answer.await {
                Some((taken, balance)) => {
                    self.balance
                        .store(u32::try_from(balance).unwrap_or(0), Ordering::Relaxed);
                    if taken == 1 {
                        Admit::Go
                    } else {
                        Admit::Stop(StopReason::Budget)
                    }
                }
                None => {
                    self.link.local_decision();
                    if local.try_acquire(cost) {
                        Admit::Go
                    } else {
                        Admit::Stop(StopReason::Budget)
                    }
                }
            }
        })
    }

    /// Keeps `amount` to send with the next refresh.
    pub(crate) fn refund(&self, amount: u32) {
        self.pending.fetch_add(amount, Ordering::Relaxed);
    }

    /// The fleet's tokens as last read (less the refunds not sent).
    pub(crate) fn balance(&self) -> u32 {
        self.balance.load(Ordering::Relaxed)
    }
}

fn ttl() -> i64 {
    crate::micros(BUDGET_IDLE) / 1000
}

impl Member for SharedBudget {
    fn sync(&'static self) -> BoxedSync {
        Box::pin(async move {
            let refund = self.pending.swap(0, Ordering::Relaxed);
            let (op, amount) = if refund == 0 { (2, 0) } else { (0, refund) };
            let args = [op, i64::from(amount), self.capacity(), ttl()];
            match self
                .link
                .run::<(i64, i64)>(&BUDGET_SCRIPT, &self.key, &args)
                .await
            {
                Some((_, balance)) => self
                    .balance
                    .store(u32::try_from(balance).unwrap_or(0), Ordering::Relaxed),
                // Not sent: kept for the next time.
                None => {
                    self.pending.fetch_add(refund, Ordering::Relaxed);
                }
            }
        })
    }
}

impl Shareable for RetryBudget {
    fn bind_to(
        &'static self,
        link: &Arc<Link>,
        key: String,
        agreed: Arc<Agreed>,
    ) -> Result<(), BindError> {
        let shared = crate::bind(
            self.store_slot(),
            || SharedBudget {
                link: Arc::clone(link),
                key: key.into(),
                agreed,
                pending: AtomicU32::new(0),
                balance: AtomicU32::new(self.capacity()),
            },
            |shared| shared,
        )?;
        link.join(shared);
        Ok(())
    }

    fn kind(&self) -> &'static str {
        "budget"
    }

    fn settings(&self) -> Settings {
        Settings::new(
            &[("capacity", Unit::Count)],
            vec![i64::from(self.capacity())],
        )
    }
}

crate::forward_store!(SharedBudget);

impl tenacious_runtime::store::BudgetStore for SharedBudget {
    fn take<'a>(&'static self, local: &'a RetryBudget, cost: u32) -> PendingAdmit<'a> {
        Self::take(self, local, cost)
    }

    fn refund(&self, amount: u32) {
        Self::refund(self, amount);
    }

    fn balance(&self) -> u32 {
        Self::balance(self)
    }

    fn reset(&'static self) {
        Self::reset(self);
    }
}
