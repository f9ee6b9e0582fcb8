//! Where an attempt starts: [`ResumePoint`], and how a resumed source's
//! repeats are recognised by the ids already delivered.
use std::cell::RefCell;

use super::item::{ItemKind, StreamItem};
use super::{Projected, Skip};
use crate::Classify;

/// Where a retried stream's next attempt starts: how many items the
/// consumer has, and the id of the last one that had an id. The start of
/// the stream (0 items, no id) for every attempt before commit, and for
/// every attempt of a stream without [`resume`](crate::Policy::resume).
///
/// The opener of [`Policy::stream`](crate::Policy::stream) gets it as its argument; the body of
/// a `#[retry]` fn reads it with [`ResumePoint::current`]. Reconnect with
/// it — an SSE source takes `last_event_id()` as the `Last-Event-ID`
/// header, another an offset of `delivered()` items.
///
/// ```
/// use tenacious::stream::ResumePoint;
///
/// let start = ResumePoint::start();
/// assert!(start.is_start());
/// assert_eq!((start.delivered(), start.last_event_id()), (0, None));
/// // Outside a retried stream's opener there is none.
/// assert_eq!(ResumePoint::current(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ResumePoint {
    pub(super) delivered: u64,
    pub(super) last_event_id: Option<String>,
}

thread_local! {
    // The resume point of the retried stream whose opener runs on this
    // thread, while it runs; `None` outside.
    static CURRENT: RefCell<Option<ResumePoint>> = const { RefCell::new(None) };
}

impl ResumePoint {
    /// The start of a stream: nothing delivered, no id.
    #[must_use]
    pub const fn start() -> Self {
        Self {
            delivered: 0,
            last_event_id: None,
        }
    }

    /// Where a new call continues a stream that failed: after the
    /// `failure`'s delivered items and its last event id (see
    /// [`Failure::last_event_id`](crate::Failure::last_event_id)). What an
    /// opener reconnects from when the stream is re-issued — by another
    /// call, another process, another target — rather than resumed by the
    /// policy that delivered them.
    #[must_use]
    pub fn after<E>(failure: &crate::Failure<E>) -> Self {
        Self::at(failure.delivered(), failure.last_event_id())
    }

    /// The point after `delivered` items, the last with id
    /// `last_event_id`: a resume point built by hand, for a call that
    /// kept its own count (a stream re-issued from a journal).
    ///
    /// ```
    /// use tenacious::stream::ResumePoint;
    ///
    /// let point = ResumePoint::at(40, Some("41"));
    /// assert_eq!((point.delivered(), point.last_event_id()), (40, Some("41")));
    /// assert!(!point.is_start());
    /// ```
    #[must_use]
    pub fn at(delivered: u64, last_event_id: Option<&str>) -> Self {
        Self {
            delivered,
            last_event_id: last_event_id.map(str::to_owned),
        }
    }

    /// Items the consumer has from the attempts before.
    #[must_use]
    pub const fn delivered(&self) -> u64 {
        self.delivered
    }

    /// The id of the last delivered item that had one (for SSE, what to
    /// send as `Last-Event-ID`).
    #[must_use]
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// Whether nothing was delivered yet: the attempt opens from the start.
    #[must_use]
    pub const fn is_start(&self) -> bool {
        self.delivered == 0
    }

    /// The resume point of the retried stream whose opener is running (on
    /// this thread, in the opener and each poll of the future it returns);
    /// `None` outside one. What the body of a `#[retry]` fn that opens a
    /// stream reads to reconnect from where the stream stopped.
    #[must_use]
    pub fn current() -> Option<Self> {
        CURRENT.with(|current| current.borrow().clone())
    }

    /// Runs `f` with `self` as the [`current`](ResumePoint::current) one,
    /// putting back what was there after, unwinding included.
    pub(super) fn scoped<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<ResumePoint>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                CURRENT.with(|current| *current.borrow_mut() = previous);
            }
        }
        let previous = CURRENT.with(|current| current.borrow_mut().replace(self.clone()));
        let _restore = Restore(previous);
        f()
    }
}

/// The last delivered id and what is known of it.
pub(super) struct Last<'a> {
    pub(super) id: &'a mut String,
    pub(super) has: &'a mut bool,
    pub(super) ordered: &'a mut bool,
    pub(super) at: &'a mut u64,
}

/// With resume: `id`, the id of the `delivered`th item, is the last
/// delivered; copied into the one buffer only when it is another id than
/// the last.
#[inline]
pub(super) fn keep_id(last: Last<'_>, id: &str, delivered: u64) {
    if *last.has {
        match position(id, last.id) {
            std::cmp::Ordering::Equal => return,
            // Ids that go down are no positions.
            std::cmp::Ordering::Less => *last.ordered = false,
            std::cmp::Ordering::Greater => {}
        }
    }
    last.id.clear();
    last.id.push_str(id);
    *last.has = true;
    *last.at = delivered;
}

/// Where the id `id` is against `last`, in the order of ids that are
/// positions: by length, then byte by byte. Decimal numbers (without
/// leading zeros) compare as numbers, a prefix and a counter as the
/// counter (`evt-9` before `evt-10`), ids of one length (ULIDs,
/// zero-padded counters) as their bytes.
#[inline]
pub(super) fn position(id: &str, last: &str) -> std::cmp::Ordering {
    id.len()
        .cmp(&last.len())
        .then_with(|| id.as_bytes().cmp(last.as_bytes()))
}

/// Whether a resumed attempt's `item` is one the consumer has: every item
/// is, until the attempt has caught up with the consumer (see the module
/// docs, "Resume").
#[cold]
pub(super) fn repeated<O, S, T: StreamItem, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    item: &T,
) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let last = this.last_id.as_str();
    let at = item.id().map(|id| {
        if *this.ordered {
            position(id, last)
        } else if id == last {
            // Ids that are no positions: only the last one can be told.
            Equal
        } else {
            Less
        }
    });
    match (*this.skip, at) {
        (Skip::Off, _) => return false,
        (Skip::AtLast, None | Some(Equal)) => {
            // What the consumer had after the last id, sent again.
            *this.tail -= 1;
            if *this.tail == 0 {
                *this.skip = Skip::Off;
            }
        }
        // Past the last id: new, and so is all that follows.
        (Skip::AtLast, Some(_)) | (_, Some(Greater)) => {
            *this.skip = Skip::Off;
            return false;
        }
        (_, Some(Less)) => *this.skip = Skip::Behind,
        (_, Some(Equal)) => {
            *this.tail = *this.delivered - *this.last_at;
            *this.skip = if *this.tail == 0 {
                Skip::Off
            } else {
                Skip::AtLast
            };
        }
        // After an id before the last: part of the replay.
        (Skip::Behind, None) => {}
        // Before any id: a preamble the consumer has, or content that
        // follows the last id.
        (Skip::Unplaced, None) => {
            if item.kind() != ItemKind::Preamble {
                *this.skip = Skip::Off;
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_positions_by_length_then_bytes() {
        use std::cmp::Ordering::{Equal, Greater, Less};
        assert_eq!(position("9", "10"), Less);
        assert_eq!(position("10", "9"), Greater);
        assert_eq!(position("evt-9", "evt-10"), Less);
        assert_eq!(position("01HZX3", "01HZX2"), Greater);
        assert_eq!(position("42", "42"), Equal);
    }

    #[test]
    fn the_resume_point_is_current_only_inside_its_scope() {
        let point = ResumePoint {
            delivered: 3,
            last_event_id: Some("3".into()),
        };
        assert_eq!(ResumePoint::current(), None);
        let inner = point.scoped(|| {
            let outer = ResumePoint::current();
            let nested = ResumePoint::start().scoped(ResumePoint::current);
            (outer, nested, ResumePoint::current())
        });
        assert_eq!(inner.0.as_ref(), Some(&point));
        assert_eq!(inner.1, Some(ResumePoint::start()));
        assert_eq!(inner.2.as_ref(), Some(&point));
        assert_eq!(ResumePoint::current(), None);
    }
}
