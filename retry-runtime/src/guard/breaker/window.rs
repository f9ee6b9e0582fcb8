//! The breaker's sampling window: ten buckets of outcomes packed in
//! atomics, and the probe slots of a half-open breaker, packed alike.
use std::sync::atomic::Ordering;

use super::Breaker;

/// The buckets of the sampling window: each holds a tenth of it.
pub(super) const BUCKETS: u64 = 10;
/// A bucket: `VALID | id << 32 | failures << 16 | total`, where `id` is
/// the bucket's number on the clock (its start over its length), 31 bits.
pub(super) const VALID: u64 = 1 << 63;
const ID_MASK: u64 = 0x7FFF_FFFF;
pub(super) const COUNT_MAX: u64 = 0xFFFF;
/// The probes of a half-open phase: `tag << 32 | taken << 16 | succeeded`,
/// where `tag` is the low 32 bits of the phase's opening time.
pub(super) const TAG_MASK: u64 = 0xFFFF_FFFF;

impl Breaker {
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
    pub(super) fn sample(&self, now: u64, failed: bool) {
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
    pub(super) fn sampled(&self, now: u64) -> (u64, u64) {
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

/// What an outcome says, to the breaker.
#[derive(Clone, Copy)]
pub(super) enum Seen {
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

pub(super) const fn pack_probes(tag: u64, taken: u64, succeeded: u64) -> u64 {
    (tag & TAG_MASK) << 32 | (taken & COUNT_MAX) << 16 | (succeeded & COUNT_MAX)
}

/// `(tag, taken, succeeded)`.
pub(super) const fn unpack_probes(out: u64) -> (u64, u64, u64) {
    (out >> 32, (out >> 16) & COUNT_MAX, out & COUNT_MAX)
}
