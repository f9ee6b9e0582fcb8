//! The settings of a retried stream: the time to its first item and
//! between items, resuming, and what it may hold before content.
use std::time::Duration;

use super::Policy;
use crate::clock::saturating_nanos;

impl Policy {
    /// For a retried stream ([`Policy::stream`], `#[retry]` on a fn that
    /// opens one): the longest wait for its first content item, counted
    /// from the start of each attempt (the open included). Default: none.
    ///
    /// Keepalives and preamble items (see
    /// [`ItemKind`](crate::stream::ItemKind)) do not stop it: only content
    /// does. A stream that sends none in time is dropped and the attempt
    /// fails with `E::from(Elapsed)` ([`Limit::FirstItem`](crate::Limit::FirstItem)),
    /// transient, which the policy retries like any error before the
    /// stream committed. Ignored by calls that are no stream.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// let p = Policy::new().first_item(Duration::from_secs(10));
    /// assert_eq!(p.get_first_item(), Some(Duration::from_secs(10)));
    /// assert_eq!(Policy::new().get_first_item(), None);
    /// ```
    #[must_use]
    pub const fn first_item(self, first_item: Duration) -> Self {
        Self {
            first_item: Some(saturating_nanos(first_item)),
            ..self
        }
    }

    /// For a retried stream: the longest time the stream may go without
    /// progress once it has committed (after its first content item), a
    /// resumed attempt's wait for its first new item included when
    /// [`first_item`](Policy::first_item) is not set. Default: none.
    ///
    /// Progress is any item but a keepalive; a keepalive (an SSE comment,
    /// a `ping` event) shows the connection is alive, not that the answer
    /// moves, so it does not reset the timer, and a stream that only pings
    /// runs out of it. The wait is counted while the stream waits on its
    /// source, not while the consumer handles an item. A stream that runs
    /// out of it fails with `E::from(Elapsed)` ([`Limit::Idle`](crate::Limit::Idle)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::Policy;
    ///
    /// let p = Policy::new().idle(Duration::from_secs(30));
    /// assert_eq!(p.get_idle(), Some(Duration::from_secs(30)));
    /// ```
    #[must_use]
    pub const fn idle(self, idle: Duration) -> Self {
        Self {
            idle: Some(saturating_nanos(idle)),
            ..self
        }
    }

    /// For a retried stream: whether a failure after the stream committed
    /// reconnects from where it stopped. Default: `false`.
    ///
    /// Without it, a stream that failed after delivering items ends with a
    /// [`Failure`](crate::Failure) saying how many
    /// ([`StopReason::PartialOutput`](crate::StopReason::PartialOutput)):
    /// retrying would repeat what the consumer has. With it, the failure is
    /// decided by the policy like any other, and the next attempt's opener
    /// gets the [`ResumePoint`](crate::stream::ResumePoint) (items
    /// delivered, the last event id) to reconnect from; items the source
    /// sends again are dropped by their id, which must be the server's
    /// position (ids that increase in the order it sends them), and an
    /// attempt that ends before it caught up with the consumer fails
    /// ([`Limit::CatchUp`](crate::Limit::CatchUp)); see the
    /// [`stream`](crate::stream) module, "Resume".
    ///
    /// ```
    /// use tenacious::Policy;
    ///
    /// assert!(Policy::new().resume(true).get_resume());
    /// assert!(!Policy::new().get_resume());
    /// ```
    #[must_use]
    pub const fn resume(self, resume: bool) -> Self {
        Self { resume, ..self }
    }

    /// For a retried stream: the most preamble items it holds back before
    /// its first content item (see [`ItemKind::Preamble`](crate::stream::ItemKind::Preamble)).
    /// Default: 1 024.
    ///
    /// A source that sends more (or more bytes than
    /// [`max_held_bytes`](Policy::max_held_bytes)) before any content
    /// stops the stream with `E::from(Elapsed)` of
    /// [`Limit::Held`](crate::Limit::Held), whose
    /// [`held`](crate::Elapsed::held) says how many items it held, which
    /// are dropped, and [`StopReason::NotRetryable`](crate::StopReason::NotRetryable)
    /// whatever `E`'s class: a retry would hold as many again. 0 holds
    /// none: the first preamble stops it. Set on the policy only (no
    /// `#[retry]` key: a `#[retry(policy = NAME)]` fn takes it from its
    /// named policy).
    ///
    /// ```
    /// use tenacious::Policy;
    ///
    /// let p = Policy::new().max_held(100);
    /// assert_eq!(p.get_max_held(), 100);
    /// assert_eq!(Policy::new().get_max_held(), 1024);
    /// ```
    #[must_use]
    pub const fn max_held(self, items: u32) -> Self {
        Self {
            max_held: items,
            ..self
        }
    }

    /// For a retried stream: the most bytes of preamble it holds back
    /// before its first content item, as [`StreamItem::size`](crate::stream::StreamItem::size)
    /// counts them. Default: 1 MiB (1 048 576).
    ///
    /// Exceeding it stops the stream as exceeding
    /// [`max_held`](Policy::max_held) does. Set on the policy only, as
    /// `max_held` is.
    ///
    /// ```
    /// use tenacious::Policy;
    ///
    /// let p = Policy::new().max_held_bytes(64 << 10);
    /// assert_eq!(p.get_max_held_bytes(), 65_536);
    /// assert_eq!(Policy::new().get_max_held_bytes(), 1 << 20);
    /// ```
    #[must_use]
    pub const fn max_held_bytes(self, bytes: u32) -> Self {
        Self {
            max_held_bytes: bytes,
            ..self
        }
    }

    /// The stream's time to its first content item, if any.
    #[must_use]
    pub const fn get_first_item(&self) -> Option<Duration> {
        match self.first_item {
            Some(nanos) => Some(Duration::from_nanos(nanos)),
            None => None,
        }
    }

    /// The stream's idle limit, if any.
    #[must_use]
    pub const fn get_idle(&self) -> Option<Duration> {
        match self.idle {
            Some(nanos) => Some(Duration::from_nanos(nanos)),
            None => None,
        }
    }

    /// Whether a stream resumes after it committed.
    #[must_use]
    pub const fn get_resume(&self) -> bool {
        self.resume
    }

    /// The most preamble items a stream holds before its first content.
    #[must_use]
    pub const fn get_max_held(&self) -> u32 {
        self.max_held
    }

    /// The most bytes of preamble a stream holds before its first content.
    #[must_use]
    pub const fn get_max_held_bytes(&self) -> u32 {
        self.max_held_bytes
    }
}
