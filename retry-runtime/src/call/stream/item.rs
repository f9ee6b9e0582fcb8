//! What an item of a retried stream is to it: [`ItemKind`] and
//! [`StreamItem`], with the impls for the usual item types.

/// What an item of a retried stream is to the stream (see the module
/// docs): progress that commits it, metadata before it, or liveness.
///
/// ```
/// use tenacious::stream::{ItemKind, StreamItem};
///
/// assert_eq!("token".to_owned().kind(), ItemKind::Content);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemKind {
    /// Output: it commits the stream (the first one delivers the held
    /// preamble before it) and resets the idle timer.
    Content,
    /// Metadata before the content (a `message_start`): held until the
    /// first content item and dropped with a failed attempt, so a retried
    /// stream shows it once; dropped on a resumed attempt, whose consumer
    /// has had it. After commit it is delivered as it comes, as progress.
    Preamble,
    /// Liveness only (an SSE comment, a `ping` event): never delivered,
    /// and no timer is reset by it.
    Keepalive,
}

/// An item of a retried stream: what it is, and its id, if it has one.
///
/// Every item is content with no id unless its type says otherwise: an
/// empty `impl StreamItem for MyChunk {}` says just that. The impls here
/// cover text and bytes (content, no id) and, with the feature `sse`, the
/// parsed events: a comment or a `ping` event is a keepalive, every other
/// event content, with its SSE id.
///
/// ```
/// use tenacious::stream::{ItemKind, StreamItem};
///
/// enum Chunk { Start { id: String }, Delta(String), Ping }
///
/// impl StreamItem for Chunk {
///     fn kind(&self) -> ItemKind {
///         match self {
///             Chunk::Start { .. } => ItemKind::Preamble,
///             Chunk::Delta(_) => ItemKind::Content,
///             Chunk::Ping => ItemKind::Keepalive,
///         }
///     }
/// }
/// assert_eq!(Chunk::Ping.kind(), ItemKind::Keepalive);
/// assert_eq!(Chunk::Delta("hi".into()).id(), None);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `StreamItem`, so a retried stream cannot tell content from keepalives",
    label = "the items of this stream",
    note = "`impl tenacious::stream::StreamItem for {Self} {{}}` says every item is content with no id; override `kind` for keepalives and preambles, `id` for resume"
)]
pub trait StreamItem {
    /// What the item is to the stream. Default: [`ItemKind::Content`].
    fn kind(&self) -> ItemKind {
        ItemKind::Content
    }

    /// The bytes the item takes while a retried stream holds it back (a
    /// preamble before the first content item), as
    /// [`max_held_bytes`](crate::Policy::max_held_bytes) counts them. Default:
    /// `size_of_val(self)`, the item's own size without what it owns on
    /// the heap; the impls here for owned text and bytes add their length,
    /// the SSE ones their strings' lengths. Override it for an item that
    /// owns more.
    ///
    /// ```
    /// use tenacious::stream::StreamItem;
    ///
    /// assert_eq!(7_u64.size(), 8);
    /// assert_eq!("hello".to_owned().size(), size_of::<String>() + 5);
    /// ```
    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }

    /// The item's id (an SSE event's id), by which a resumed stream
    /// recognises items its source sends again: the server's position,
    /// increasing in the order it sends items (see the
    /// [module docs](crate::stream), "Resume"). Default: none.
    fn id(&self) -> Option<&str> {
        None
    }
}

macro_rules! content {
    ($($ty:ty),* $(,)?) => {
        $(
            /// Content, with no id.
            impl StreamItem for $ty {}
        )*
    };
}

macro_rules! owned {
    ($($ty:ty),* $(,)?) => {
        $(
            /// Content, with no id; its size counts its length.
            impl StreamItem for $ty {
                fn size(&self) -> usize {
                    std::mem::size_of_val(self).saturating_add(self.len())
                }
            }
        )*
    };
}

owned!(String, Box<str>, std::sync::Arc<str>, Vec<u8>, Box<[u8]>);

content!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, char,
);

/// Content, with no id.
impl StreamItem for &str {}

/// Content, with no id.
impl StreamItem for &[u8] {}

/// Content, with no id; its size counts its length when it is owned.
impl StreamItem for std::borrow::Cow<'_, str> {
    fn size(&self) -> usize {
        let owned = match self {
            Self::Owned(text) => text.len(),
            Self::Borrowed(_) => 0,
        };
        std::mem::size_of_val(self).saturating_add(owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_numbers_are_content_without_ids() {
        assert_eq!("a".kind(), ItemKind::Content);
        assert_eq!(7_u32.id(), None);
        assert_eq!(vec![1_u8].kind(), ItemKind::Content);
    }
}
