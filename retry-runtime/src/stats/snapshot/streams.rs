//! The stream counts of a fn's statistics: its streams, their first
//! items, stalls, resumes and partial failures.
use std::time::Duration;

use super::FnStats;
use crate::Limit;
use crate::stats::record::{LIMITS, limit_index};

/// A record's stream counters, as read by a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(in crate::stats) struct StreamCounts {
    /// Streams that committed.
    pub(in crate::stats) streams: u64,
    /// Their times to first item added up, in nanoseconds (saturating).
    pub(in crate::stats) first_item_nanos: u64,
    /// The longest of those times, in nanoseconds.
    pub(in crate::stats) first_item_max: u64,
    /// Stream timers that ran out, by [`limit_index`].
    pub(in crate::stats) stalls: [u64; LIMITS.len()],
    pub(in crate::stats) resumes: u64,
    /// Streams that failed after delivering items.
    pub(in crate::stats) partial: u64,
    /// The items those had delivered (saturating).
    pub(in crate::stats) partial_items: u64,
}

impl StreamCounts {
    /// Whether the record saw no stream at all.
    pub(super) fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// Adds `other`'s counts to these; the max is the larger one.
    pub(super) fn merge(&mut self, other: &Self) {
        self.streams = self.streams.saturating_add(other.streams);
        self.first_item_nanos = self.first_item_nanos.saturating_add(other.first_item_nanos);
        self.first_item_max = self.first_item_max.max(other.first_item_max);
        for (sum, n) in self.stalls.iter_mut().zip(other.stalls) {
            *sum = sum.saturating_add(n);
        }
        self.resumes = self.resumes.saturating_add(other.resumes);
        self.partial = self.partial.saturating_add(other.partial);
        self.partial_items = self.partial_items.saturating_add(other.partial_items);
    }
}

impl FnStats {
    /// Retried streams that committed: that delivered their first content
    /// item (keepalives and preamble items are not content). 0 for a fn
    /// that opens no stream.
    ///
    /// A stream that failed before its first item and was retried counts
    /// once, when an attempt delivers it.
    ///
    /// ```
    /// use tenacious::stats::CallStats;
    ///
    /// static PLAIN: CallStats = CallStats::new("plain");
    /// assert_eq!(PLAIN.snapshot().streams(), 0);
    /// ```
    #[must_use]
    pub const fn streams(&self) -> u64 {
        self.stream.streams
    }

    /// The mean time to first item of the streams that committed, each
    /// counted from the start of the attempt that delivered it (the open
    /// included); `None` before any committed.
    ///
    /// Never above [`first_item_max`](FnStats::first_item_max), even in a
    /// snapshot taken while streams commit.
    ///
    /// ```
    /// use tenacious::stats::CallStats;
    ///
    /// static PLAIN: CallStats = CallStats::new("plain");
    /// assert_eq!(PLAIN.snapshot().first_item_mean(), None);
    /// ```
    #[must_use]
    pub const fn first_item_mean(&self) -> Option<Duration> {
        match self
            .stream
            .first_item_nanos
            .checked_div(self.stream.streams)
        {
            Some(nanos) => Some(Duration::from_nanos(nanos)),
            None => None,
        }
    }

    /// The longest time to first item of the streams that committed (as
    /// [`first_item_mean`](FnStats::first_item_mean) counts it); `None`
    /// before any committed.
    ///
    /// ```
    /// use tenacious::stats::CallStats;
    ///
    /// static PLAIN: CallStats = CallStats::new("plain");
    /// assert_eq!(PLAIN.snapshot().first_item_max(), None);
    /// ```
    #[must_use]
    pub const fn first_item_max(&self) -> Option<Duration> {
        if self.stream.streams == 0 {
            None
        } else {
            Some(Duration::from_nanos(self.stream.first_item_max))
        }
    }

    /// Stream stalls: the times a retried stream's timer ran out, whichever
    /// (see [`stalls_of`](FnStats::stalls_of)). 0 for a fn that opens no
    /// stream.
    ///
    /// ```
    /// use tenacious::stats::CallStats;
    ///
    /// static PLAIN: CallStats = CallStats::new("plain");
    /// assert_eq!(PLAIN.snapshot().stalls(), 0);
    /// ```
    #[must_use]
    pub fn stalls(&self) -> u64 {
        self.stream
            .stalls
            .iter()
            .fold(0, |sum, n| sum.saturating_add(*n))
    }

    /// The stream stalls of the timer `limit`: [`Limit::FirstItem`] (no
    /// first item in time), [`Limit::Idle`] (no progress between items) or
    /// [`Limit::Deadline`] (the call's deadline, over the whole stream).
    /// 0 for a limit that never ran out, and for one that is no timer
    /// ([`Limit::CatchUp`], [`Limit::Held`]).
    ///
    /// ```
    /// use tenacious::Limit;
    /// use tenacious::stats::CallStats;
    ///
    /// static PLAIN: CallStats = CallStats::new("plain");
    /// assert_eq!(PLAIN.snapshot().stalls_of(Limit::Idle), 0);
    /// ```
    #[must_use]
    pub const fn stalls_of(&self, limit: Limit) -> u64 {
        match limit_index(limit) {
            Some(index) => self.stream.stalls[index],
            None => 0,
        }
    }

    /// Reconnections of retried streams with
    /// [`resume`](crate::Policy::resume): a stream that failed after it
    /// committed and reconnected from where it stopped. 0 for a fn that
    /// opens no stream, or whose streams do not resume.
    ///
    /// ```
    /// use tenacious::stats::CallStats;
    ///
    /// static PLAIN: CallStats = CallStats::new("plain");
    /// assert_eq!(PLAIN.snapshot().resumes(), 0);
    /// ```
    #[must_use]
    pub const fn resumes(&self) -> u64 {
        self.stream.resumes
    }

    /// Partial failures: retried streams that ended with an error after
    /// delivering items, so the consumer has part of the output. 0 for a
    /// fn that opens no stream.
    ///
    /// Each of those calls also gave up, and is counted in
    /// [`gave_up`](FnStats::gave_up) under its reason
    /// ([`StopReason::PartialOutput`](crate::StopReason::PartialOutput) for a stream that does not resume).
    ///
    /// ```
    /// use tenacious::stats::CallStats;
    ///
    /// static PLAIN: CallStats = CallStats::new("plain");
    /// assert_eq!(PLAIN.snapshot().partial_failures(), 0);
    /// ```
    #[must_use]
    pub const fn partial_failures(&self) -> u64 {
        self.stream.partial
    }

    /// The items the [partial failures](FnStats::partial_failures) had
    /// delivered before they failed, added up (saturating). 0 without
    /// partial failures.
    ///
    /// ```
    /// use tenacious::stats::CallStats;
    ///
    /// static PLAIN: CallStats = CallStats::new("plain");
    /// assert_eq!(PLAIN.snapshot().partial_items(), 0);
    /// ```
    #[must_use]
    pub const fn partial_items(&self) -> u64 {
        self.stream.partial_items
    }
}
