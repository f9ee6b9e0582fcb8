//! A policy's time limits: each attempt's `timeout` and the call's
//! `deadline`, and the nanoseconds the engine reads them in.
use std::time::Duration;

use super::Policy;
use crate::clock::saturating_nanos;

impl Policy {
    /// Bounds each attempt of [`retry_timed`](Policy::retry_timed) and
    /// [`retry_timed_with`](Policy::retry_timed_with) (and of
    /// `#[retry(timeout = "...")]`): an attempt still running after
    /// `timeout` is dropped and counts as the error `E::from(Elapsed)`, which
    /// is transient. With a [`deadline`](Policy::deadline), an attempt gets
    /// at most what is left of it. Default: none.
    ///
    /// Only those loops apply it: they need `E: From<Elapsed>` to turn a
    /// timeout into an error of yours, which [`retry`](Policy::retry),
    /// [`retry_with`](Policy::retry_with) and
    /// [`retry_failure`](Policy::retry_failure) do not require, and the
    /// blocking loops cannot interrupt a running closure. They ignore it.
    /// (The tower adapter, feature `tower`, applies it always: its error
    /// has a variant for it.)
    ///
    /// [`Elapsed`]: crate::Elapsed
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// let p = Policy::new().timeout(Duration::from_secs(10));
    /// assert_eq!(p.get_timeout(), Some(Duration::from_secs(10)));
    /// assert_eq!(Policy::new().get_timeout(), None);
    /// ```
    #[must_use]
    pub const fn timeout(self, timeout: Duration) -> Self {
        Self {
            timeout: Some(saturating_nanos(timeout)),
            ..self
        }
    }

    /// Bounds the whole call, attempts and sleeps, measured from the start
    /// of the first attempt. Default: none.
    ///
    /// No sleep starts that would end at or past the deadline, and a
    /// server hint that would is not waited: the call returns the last
    /// error with [`StopReason::Deadline`](crate::StopReason::Deadline). With
    /// a [`timeout`](Policy::timeout) (async), each attempt is also cut at
    /// the deadline, so the call never runs past it (give or take tokio's
    /// one-millisecond timer resolution). Without one, an attempt already
    /// running is not interrupted: the call ends at most the last attempt's
    /// own run time past the deadline.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// let p = Policy::new().deadline(Duration::from_secs(30));
    /// assert_eq!(p.get_deadline(), Some(Duration::from_secs(30)));
    /// ```
    #[must_use]
    pub const fn deadline(self, deadline: Duration) -> Self {
        Self {
            deadline: Some(saturating_nanos(deadline)),
            ..self
        }
    }

    /// The per-attempt timeout, if any.
    #[must_use]
    pub const fn get_timeout(&self) -> Option<Duration> {
        match self.timeout {
            Some(nanos) => Some(Duration::from_nanos(nanos)),
            None => None,
        }
    }

    /// The whole-call deadline, if any.
    #[must_use]
    pub const fn get_deadline(&self) -> Option<Duration> {
        match self.deadline {
            Some(nanos) => Some(Duration::from_nanos(nanos)),
            None => None,
        }
    }

    pub(crate) const fn timeout_nanos(&self) -> Option<u64> {
        self.timeout
    }

    pub(crate) const fn deadline_nanos(&self) -> Option<u64> {
        self.deadline
    }
}
