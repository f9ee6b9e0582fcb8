//! What an item of a retried stream is to it: [`ItemKind`] and
//! [`StreamItem`], with the impls for the usual item types, and the
//! [`Usage`] an item may report.

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

/// The tokens a model's answer used, as a stream item reports them
/// ([`StreamItem::usage`]): `input`, the prompt's tokens, and `output`, the
/// answer's.
///
/// Counts add up with [`add`](Usage::add) (or `+`, `+=`, `sum`), which
/// saturates at `u64::MAX` instead of overflowing: a hostile count never
/// panics, nor wraps around to a small one.
///
/// ```
/// use tenacious::stream::Usage;
///
/// let start = Usage::new(12, 0);
/// let end = Usage::new(0, 30);
/// assert_eq!(start.add(end), Usage { input: 12, output: 30 });
/// assert_eq!(Usage::new(u64::MAX, 1).add(Usage::new(1, 1)), Usage::new(u64::MAX, 2));
/// let total: Usage = [start, end, Usage::new(1, 1)].into_iter().sum();
/// assert_eq!(total, Usage::new(13, 31));
/// assert_eq!(Usage::default(), Usage::new(0, 0));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Usage {
    /// Tokens of the input: the prompt, cached or not.
    pub input: u64,
    /// Tokens of the output: the answer, reasoning included.
    pub output: u64,
}

impl Usage {
    /// `input` tokens in, `output` tokens out.
    #[must_use]
    pub const fn new(input: u64, output: u64) -> Self {
        Self { input, output }
    }

    /// Both counts added, each saturating at `u64::MAX`.
    #[must_use]
    // The inherent fn, so it is `const` and needs no import; `+` is the
    // `Add` impl below, which calls it.
    #[allow(clippy::should_implement_trait)]
    pub const fn add(self, other: Self) -> Self {
        Self {
            input: self.input.saturating_add(other.input),
            output: self.output.saturating_add(other.output),
        }
    }
}

/// [`Usage::add`]: saturating.
impl std::ops::Add for Usage {
    type Output = Self;

    fn add(self, other: Self) -> Self {
        Usage::add(self, other)
    }
}

/// [`Usage::add`]: saturating.
impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        *self = Usage::add(*self, other);
    }
}

/// The [`Usage::add`] of them all, from [`Usage::default`]: saturating.
impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::default(), Usage::add)
    }
}

/// An item of a retried stream: what it is, and its id, if it has one;
/// and for its consumer, the text it delivers and the tokens it reports.
///
/// Every item is content with no id, no text and no usage unless its type
/// says otherwise: an empty `impl StreamItem for MyChunk {}` says just
/// that. The impls here cover text (content, no id, itself as its
/// [`text`](StreamItem::text)) and bytes (content, no id) and, with the
/// feature `sse`, the parsed events: a comment or a `ping` event is a
/// keepalive, every other event content, with its SSE id; and the items of
/// the providers' streams, `tenacious::sse::openai::Chunk` and
/// `tenacious::sse::anthropic::Event`, give all four: kind, id, text and
/// usage.
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

    /// The tokens this item reports, if it reports any: a provider's
    /// usage chunk, the end of a message. What it counts is the item
    /// type's to say (a count so far, or the tokens since the last
    /// report); the providers' items of `tenacious::sse` report each token
    /// once, so the [sum](Usage::add) of a stream's usages is its
    /// answer's. Default: none.
    ///
    /// ```
    /// use tenacious::stream::{StreamItem, Usage};
    ///
    /// struct Chunk { text: String, usage: Option<Usage> }
    ///
    /// impl StreamItem for Chunk {
    ///     fn usage(&self) -> Option<Usage> {
    ///         self.usage
    ///     }
    ///     fn text(&self) -> Option<&str> {
    ///         Some(&self.text)
    ///     }
    /// }
    /// let chunks = [
    ///     Chunk { text: "Hel".into(), usage: None },
    ///     Chunk { text: "lo".into(), usage: Some(Usage::new(9, 2)) },
    /// ];
    /// let total: Usage = chunks.iter().filter_map(StreamItem::usage).sum();
    /// assert_eq!(total, Usage::new(9, 2));
    /// assert_eq!(chunks.iter().filter_map(StreamItem::text).collect::<String>(), "Hello");
    /// assert_eq!("Hello".usage(), None);
    /// ```
    fn usage(&self) -> Option<Usage> {
        None
    }

    /// The text of the answer this item delivers, if it delivers any (a
    /// token, a delta): not metadata, not a keepalive. `String`, `&str`,
    /// `Box<str>`, `Arc<str>` and `Cow<str>` are their own text. Default:
    /// none.
    ///
    /// ```
    /// use tenacious::stream::StreamItem;
    ///
    /// assert_eq!("Hel".text(), Some("Hel"));
    /// assert_eq!(String::from("lo").text(), Some("lo"));
    /// assert_eq!(7_u32.text(), None);
    /// assert_eq!(b"bytes".as_slice().text(), None);
    /// ```
    fn text(&self) -> Option<&str> {
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

macro_rules! owned_text {
    ($($ty:ty),* $(,)?) => {
        $(
            /// Content, with no id; its size counts its length; its text
            /// is itself.
            impl StreamItem for $ty {
                fn size(&self) -> usize {
                    std::mem::size_of_val(self).saturating_add(self.len())
                }

                fn text(&self) -> Option<&str> {
                    Some(self)
                }
            }
        )*
    };
}

owned_text!(String, Box<str>, std::sync::Arc<str>);
owned!(Vec<u8>, Box<[u8]>);

content!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, char,
);

/// Content, with no id; its text is itself.
impl StreamItem for &str {
    fn text(&self) -> Option<&str> {
        Some(self)
    }
}

/// Content, with no id.
impl StreamItem for &[u8] {}

/// Content, with no id; its size counts its length when it is owned;
/// its text is itself.
impl StreamItem for std::borrow::Cow<'_, str> {
    fn size(&self) -> usize {
        let owned = match self {
            Self::Owned(text) => text.len(),
            Self::Borrowed(_) => 0,
        };
        std::mem::size_of_val(self).saturating_add(owned)
    }

    fn text(&self) -> Option<&str> {
        Some(self)
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

    #[test]
    fn text_is_its_own_text_and_nothing_reports_usage_by_default() {
        let shared: std::sync::Arc<str> = "c".into();
        let boxed: Box<str> = "b".into();
        let cow = std::borrow::Cow::Borrowed("d");
        assert_eq!(
            [
                "a".text(),
                boxed.text(),
                shared.text(),
                cow.text(),
                String::new().text()
            ],
            [Some("a"), Some("b"), Some("c"), Some("d"), Some("")]
        );
        assert_eq!(vec![b'a'].text(), None);
        assert_eq!(7_u8.text(), None);
        assert_eq!("a".usage(), None);
    }

    #[test]
    fn usage_adds_and_saturates() {
        let mut usage = Usage::new(u64::MAX - 1, 5);
        usage += Usage::new(10, 5);
        assert_eq!(usage, Usage::new(u64::MAX, 10));
        assert_eq!(
            usage + Usage::new(u64::MAX, u64::MAX),
            Usage::new(u64::MAX, u64::MAX)
        );
        assert_eq!(std::iter::empty::<Usage>().sum::<Usage>(), Usage::default());
        const SUM: Usage = Usage::new(1, 2).add(Usage::new(3, 4));
        assert_eq!(
            SUM,
            Usage {
                input: 4,
                output: 6
            }
        );
    }
}
