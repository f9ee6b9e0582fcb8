//! [`Resume`]: where a target's stream starts, as its opener sees it.
use std::fmt;

use crate::stream::{ResumePoint, StreamItem};

/// Where a target's stream starts, as its opener sees it: the target's
/// own [`ResumePoint`] (its policy's resume, within its own stream) and
/// the content items the consumer already has, from every target before
/// (empty before the route's first content item).
///
/// A target that [continues](crate::route::Target::continues) a cut stream rebuilds its
/// request from [`items`](Resume::items): for a chat model, the text so
/// far as an assistant prefill, so its answer goes on where the other's
/// stopped.
///
/// ```
/// use tenacious::route::Resume;
/// use tenacious::stream::ResumePoint;
///
/// let (start, items) = (ResumePoint::start(), ["Hel".to_owned(), "lo".to_owned()]);
/// let resume = Resume::new(&start, &items);
/// assert!(resume.is_continuation());
/// assert_eq!(resume.text(), "Hello");
/// ```
pub struct Resume<'a, T> {
    point: &'a ResumePoint,
    items: &'a [T],
}

impl<'a, T> Resume<'a, T> {
    /// A resume point with the `items` the consumer has (what a routed
    /// stream gives its opener; for tests of an opener).
    #[must_use]
    pub const fn new(point: &'a ResumePoint, items: &'a [T]) -> Self {
        Self { point, items }
    }

    /// The target's own resume point: where its policy resumes its own
    /// stream after a cut (with [`resume`](crate::Policy::resume) on).
    #[must_use]
    pub const fn point(&self) -> &'a ResumePoint {
        self.point
    }

    /// The content items the consumer has, from this target's attempts
    /// and every target before, in order. Kept only when a target of the
    /// route [continues](crate::route::Target::continues) cut streams; empty otherwise.
    #[must_use]
    pub const fn items(&self) -> &'a [T] {
        self.items
    }

    /// The text the consumer has: the [`text`](StreamItem::text) of the
    /// [items](Resume::items), joined — what an assistant prefill sends.
    #[must_use]
    pub fn text(&self) -> String
    where
        T: StreamItem,
    {
        self.items.iter().filter_map(StreamItem::text).collect()
    }

    /// Whether the consumer already has content: the opener continues a
    /// cut stream rather than starting one.
    #[must_use]
    pub const fn is_continuation(&self) -> bool {
        !self.items.is_empty()
    }
}

impl<T> fmt::Debug for Resume<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resume")
            .field("point", self.point)
            .field("items", &self.items.len())
            .finish()
    }
}
