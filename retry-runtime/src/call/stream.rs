//! Retried streams: a call whose answer comes as a stream of items (model
//! output token by token), retried as one call and never duplicated.
//!
//! [`Policy::stream`] (and `#[retry]` on a fn that opens a stream) takes
//! an opener and gives the consumer one stream of items. Each attempt
//! goes through three phases:
//!
//! 1. **open**: the opener's future runs (connect, send, read the head);
//! 2. **first item**: the source is read until its first *content* item;
//! 3. **committed**: content reached the consumer; from here on the
//!    stream is the consumer's.
//!
//! Before commit, every failure is retried by the policy as any call's
//! is — an error opening, an error item (transport or in-band, classified
//! by [`Classify`]), a source that ends in error before content, a stall
//! past [`first_item`](Policy::first_item) — with its classes, hints,
//! budget, guards and statistics. After commit a failure is never retried
//! silently: by default the stream ends with a [`Failure`] whose
//! [`delivered`](Failure::delivered) counts the items the consumer has, and
//! [`StopReason::PartialOutput`]; with [`resume`](Policy::resume) the
//! policy decides as before, and the next opener gets the
//! [`ResumePoint`] — items delivered, the last event id — to reconnect
//! from, while items the source sends again are dropped by their id.
//!
//! **Resume** tells repeats by ids that are the server's position: ids
//! that increase in the order the server sends them, compared by length,
//! then byte by byte (decimal numbers compare as numbers, a prefix and a
//! counter as the counter, ids of one length — ULIDs, zero-padded
//! counters — as their bytes); an item without an id is at the id before
//! it. A resumed attempt drops what its source sends until it has caught
//! up with the consumer: an item whose id is at most the last delivered
//! one, and the items the consumer had after that id (at it, or without
//! one); the first item past them is new, and so is all that follows. An
//! item without an id before the attempt's first id is dropped if it is a
//! preamble and new if it is content (a source that honours the last id
//! goes on after it). So a source that replays from the start, from the
//! middle or from the last item delivered shows nothing twice; and one
//! that ends cleanly before it caught up fails its attempt with
//! `E::from(Elapsed)` of [`Limit::CatchUp`], decided by the policy as any
//! failure after commit: its answer is cut, not complete. Delivered ids
//! seen going down are no positions: a resumed attempt then drops every
//! item until the last delivered id comes again, and fails (`CatchUp`)
//! if it never does. Without ids nothing tells a repeat: the opener
//! resumes from [`delivered`](ResumePoint::delivered), and what its
//! source sends is delivered.
//!
//! **Liveness is not progress.** Each item says what it is
//! ([`StreamItem::kind`]): *content* (a token: it commits the stream and
//! resets the idle timer), a *preamble* (metadata before the content,
//! such as a `message_start` event: held back until the first content
//! item and dropped with its attempt if that attempt fails, so a retry
//! never shows it twice; at most [`max_held`](Policy::max_held) items and
//! [`max_held_bytes`](Policy::max_held_bytes) bytes, by default 1 024 and
//! 1 MiB, past which the stream stops, `E::from(Elapsed)` of
//! [`Limit::Held`], [`StopReason::NotRetryable`]), or a *keepalive* (an SSE comment, a `ping`
//! event: the connection is alive, the answer is not moving). Keepalives
//! are never delivered and reset no timer, so a stream that only pings
//! runs out of [`first_item`](Policy::first_item) or
//! [`idle`](Policy::idle); one whose server pings while a model thinks
//! needs an `idle` longer than the longest think.
//!
//! Three timers bound a stream: `first_item` from the start of each
//! attempt to its first content item, `idle` between items once
//! committed (counted while the stream waits on its source, not while the
//! consumer handles an item; without `first_item`, it bounds a resumed
//! attempt's wait for its first new item too), and the policy's
//! [`deadline`](Policy::deadline) over the whole stream, retries and
//! backoff included. A stream that runs out of one fails with
//! `E::from(Elapsed)` (see [`Elapsed::which`]); at the deadline it stops,
//! [`StopReason::Deadline`].
//!
//! The wrapper adds no allocation per item: it counts what it delivers,
//! and with `resume` copies an item's id, when it is another than the
//! last, into one buffer it reuses.
//!
//! ```
//! use std::time::Duration;
//! use futures_util::{stream, StreamExt};
//! use tenacious::{Elapsed, Policy};
//!
//! #[derive(Debug)]
//! enum ChatError { Overloaded, Stalled(Elapsed) }
//! impl From<Elapsed> for ChatError {
//!     fn from(e: Elapsed) -> Self { ChatError::Stalled(e) }
//! }
//! impl tenacious::Classify for ChatError {
//!     fn classify(&self) -> tenacious::ErrorClass { tenacious::ErrorClass::Transient }
//! }
//!
//! const POLICY: Policy = Policy::new().base(Duration::from_millis(10)).first_item(Duration::from_secs(5));
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let mut opens = 0;
//! let tokens = POLICY.stream(|_resume| {
//!     opens += 1;
//!     let first = opens == 1;
//!     async move {
//!         if first {
//!             // An in-band error before any content: retried.
//!             return Ok(stream::iter(vec![Err(ChatError::Overloaded)]).boxed());
//!         }
//!         Ok(stream::iter(vec![Ok("Hel".to_owned()), Ok("lo".to_owned())]).boxed())
//!     }
//! });
//! let text: Vec<String> = tokens.map(Result::unwrap).collect().await;
//! assert_eq!(text.concat(), "Hello");
//! # }
//! ```
pub use futures_core::Stream;
use pin_project_lite::pin_project;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

use crate::classify::failure::Provenance;
use crate::poll::PollDriver;
use crate::{Classify, Elapsed, Failure, Limit, Policy, StopReason, observe};

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
    /// [`max_held_bytes`](Policy::max_held_bytes) counts them. Default:
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
    /// [module docs](self), "Resume"). Default: none.
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

/// Where a retried stream's next attempt starts: how many items the
/// consumer has, and the id of the last one that had an id. The start of
/// the stream (0 items, no id) for every attempt before commit, and for
/// every attempt of a stream without [`resume`](Policy::resume).
///
/// The opener of [`Policy::stream`] gets it as its argument; the body of
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
    delivered: u64,
    last_event_id: Option<String>,
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
    fn scoped<R>(&self, f: impl FnOnce() -> R) -> R {
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

/// How a retried stream opens each attempt's source: the opener closure
/// of [`Policy::stream`] ([`OpenWith`]), or the body of a `#[retry]` fn.
/// Not meant to be implemented outside this crate.
pub trait Open<E> {
    /// The stream an open gives.
    type Source;

    /// Polls the open of the next attempt, from `resume`: the first poll
    /// of an attempt starts it.
    fn poll_open(
        self: Pin<&mut Self>,
        resume: &ResumePoint,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::Source, E>>;

    /// Drops an open in flight (its first-item timer or the deadline ran
    /// out before it opened).
    fn cancel(self: Pin<&mut Self>, cx: &mut Context<'_>);
}

pin_project! {
    /// The opener of [`Policy::stream`]: a closure called once per
    /// attempt with its [`ResumePoint`], and the future it returned.
    #[derive(Debug)]
    pub struct OpenWith<O, F> {
        open: O,
        #[pin]
        pending: Option<F>,
    }
}

impl<O, F, S, E> Open<E> for OpenWith<O, F>
where
    O: FnMut(&ResumePoint) -> F,
    F: Future<Output = Result<S, E>>,
{
    type Source = S;

    fn poll_open(
        self: Pin<&mut Self>,
        resume: &ResumePoint,
        cx: &mut Context<'_>,
    ) -> Poll<Result<S, E>> {
        let mut this = self.project();
        if this.pending.is_none() {
            let open = (this.open)(resume);
            this.pending.set(Some(open));
        }
        let Some(pending) = this.pending.as_mut().as_pin_mut() else {
            unreachable!("set above")
        };
        let opened = std::task::ready!(pending.poll(cx));
        this.pending.set(None);
        Poll::Ready(opened)
    }

    fn cancel(self: Pin<&mut Self>, _: &mut Context<'_>) {
        self.project().pending.set(None);
    }
}

/// What the wrapper and a `#[retry]` fn's opener share: whether an open
/// is wanted, or one in flight cancelled, and its result.
#[derive(Debug)]
struct PortState<S, E> {
    wanted: bool,
    cancel: bool,
    opened: Option<Result<S, E>>,
}

/// The stream's end of a [`Port`] (`#[retry]`'s expansion).
#[doc(hidden)]
#[derive(Debug)]
pub struct Shared<S, E>(Arc<Mutex<PortState<S, E>>>);

fn lock<S, E>(shared: &Shared<S, E>) -> MutexGuard<'_, PortState<S, E>> {
    // Nothing is left half-written under the lock: a panic elsewhere
    // cannot leave it inconsistent.
    shared.0.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The opener side of a `#[retry]` fn that opens a stream: the fn's
/// arguments live in one future (the driver) that loops, opening once
/// each time the stream asks ([`Port::serve`]), so every attempt borrows
/// them afresh, as a `#[retry]` fn's attempts do.
#[doc(hidden)]
#[derive(Debug)]
pub struct Port<S, E> {
    shared: Shared<S, E>,
}

impl<S, E> Port<S, E> {
    /// Runs `open` — one attempt's open — once the stream asks for it,
    /// and hands its result over; returns early, dropping it, if the
    /// stream cancels it.
    pub async fn serve<F: Future<Output = Result<S, E>>>(&self, open: F) {
        let mut open = std::pin::pin!(open);
        std::future::poll_fn(|cx| {
            {
                let mut state = lock(&self.shared);
                if state.cancel {
                    state.cancel = false;
                    return Poll::Ready(());
                }
                if !state.wanted {
                    // The stream polls its driver only when it wants an
                    // open, or to cancel one: no waker to keep.
                    return Poll::Pending;
                }
            }
            let opened = std::task::ready!(open.as_mut().poll(cx));
            let mut state = lock(&self.shared);
            state.wanted = false;
            state.opened = Some(opened);
            Poll::Ready(())
        })
        .await;
    }
}

pin_project! {
    /// The opener of a `#[retry]` fn that opens a stream: its driver
    /// future and the state it shares with its [`Port`].
    #[doc(hidden)]
    #[derive(Debug)]
    pub struct Driven<D, S, E> {
        #[pin]
        driver: D,
        shared: Shared<S, E>,
    }
}

/// A port and the link the stream keeps to it (`#[retry]`'s expansion).
#[doc(hidden)]
#[must_use]
pub fn port<S, E>() -> (Port<S, E>, Shared<S, E>) {
    let shared = Arc::new(Mutex::new(PortState {
        wanted: false,
        cancel: false,
        opened: None,
    }));
    (
        Port {
            shared: Shared(Arc::clone(&shared)),
        },
        Shared(shared),
    )
}

impl<D: Future, S, E> Open<E> for Driven<D, S, E> {
    type Source = S;

    fn poll_open(
        self: Pin<&mut Self>,
        _: &ResumePoint,
        cx: &mut Context<'_>,
    ) -> Poll<Result<S, E>> {
        let this = self.project();
        lock(this.shared).wanted = true;
        // The driver loops forever: it never completes.
        let _ = this.driver.poll(cx);
        match lock(this.shared).opened.take() {
            Some(opened) => Poll::Ready(opened),
            None => Poll::Pending,
        }
    }

    fn cancel(self: Pin<&mut Self>, cx: &mut Context<'_>) {
        let this = self.project();
        {
            let mut state = lock(this.shared);
            if !state.wanted {
                return;
            }
            state.wanted = false;
            state.cancel = true;
        }
        // Polled once, the driver drops the open in flight.
        let _ = this.driver.poll(cx);
        lock(this.shared).opened = None;
    }
}

/// Where a retried stream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before an attempt: its backoff and pacing.
    Start,
    /// The attempt's open is running.
    Opening,
    /// Reading the attempt's source.
    Reading,
    /// Over: what is held is delivered, then the stream ends.
    Done,
}

/// Where a resumed attempt is against what the consumer has (see
/// [`repeated`] and the module docs, "Resume").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skip {
    /// Deliver what comes: the attempt caught up, or there is nothing to
    /// catch up with (no resume, no id delivered).
    Off,
    /// A resumed attempt before its first id: a preamble is dropped (the
    /// consumer has it), content is new (a source that honours the last
    /// id goes on after it).
    Unplaced,
    /// The source sent an id before the last delivered one: it replays,
    /// and what comes is dropped until that id, or one past it.
    Behind,
    /// The source sent the last delivered id again: the `tail` items the
    /// consumer had after it (at that id, or without one) are dropped too.
    AtLast,
}

pin_project! {
    /// A retried stream: the stream [`Policy::stream`] returns, and a
    /// `#[retry]` fn that opens a stream (see the [module docs](self)).
    ///
    /// Yields the items of its attempts' sources — each at most once, in
    /// order — then ends; or ends with one `Err(Failure)` when the policy
    /// gives up, a failure after commit ends it, or the deadline passes.
    /// Dropped after commit, it counts as a success (the consumer had what
    /// it wanted); dropped before, it is not counted, as a call dropped
    /// mid-way is not.
    #[must_use = "streams do nothing unless polled"]
    #[project = Projected]
    pub struct RetriedStream<'p, O, S, T, E>
    where
        E: Classify,
    {
        policy: &'p Policy,
        #[pin]
        polled: PollDriver<'p, E>,
        #[pin]
        open: O,
        #[pin]
        source: Option<S>,
        #[pin]
        deadline: Option<Sleep>,
        phase: Phase,
        // The running attempt delivered content.
        committed: bool,
        // An item was delivered since the idle timer was last armed.
        progressed: bool,
        // The held preamble is being delivered.
        flushing: bool,
        skip: Skip,
        // The last delivered id is in `last_id`.
        has_last: bool,
        // No delivered id came before the one delivered ahead of it: the
        // ids are positions (see `position`).
        ordered: bool,
        // Polls of the source, wrapping: every 256th looks at the deadline
        // while a source is always ready.
        ticks: u8,
        // When the deadline passes: compared with the clock on those
        // polls (its timer fires only when the runtime gets control back,
        // which a task that is always ready never gives it).
        deadline_at: Option<Instant>,
        // The attempt's own timer, and how long it was armed for.
        armed: Option<(Limit, Duration)>,
        delivered: u64,
        attempt_start: Option<Instant>,
        held: VecDeque<T>,
        // The bytes of `held`, by `StreamItem::size`.
        held_bytes: usize,
        resume: ResumePoint,
        last_id: String,
        // `delivered` when the item that brought `last_id` was delivered:
        // the items after it, at its id or without one, are
        // `delivered - last_at`.
        last_at: u64,
        // With `Skip::AtLast`: the items at the last id still to drop.
        tail: u64,
        provenance: Provenance,
    }

    impl<'p, O, S, T, E> PinnedDrop for RetriedStream<'p, O, S, T, E>
    where
        E: Classify,
    {
        fn drop(this: Pin<&mut Self>) {
            let this = this.project();
            // Dropped by its consumer while reading after content came: a
            // success. (Dropped while it waits to resume, it is not
            // counted, as a call dropped mid-way is not.)
            if *this.phase == Phase::Reading && *this.committed && !this.polled.is_done() {
                this.polled.settle_success();
            }
        }
    }
}

impl Policy {
    /// A retried stream: `open` is called for each attempt with where it
    /// starts (a [`ResumePoint`]) and returns the future of that attempt's
    /// source, a stream of `Result<T, E>`; the consumer gets one stream of
    /// `Result<T, Failure<E>>` (see the [`stream`](crate::stream) module
    /// for the phases, the timers and resume).
    ///
    /// The policy's [`first_item`](Policy::first_item),
    /// [`idle`](Policy::idle), [`deadline`](Policy::deadline) and
    /// [`resume`](Policy::resume) apply; its per-attempt
    /// [`timeout`](Policy::timeout) does not (`first_item` bounds an
    /// attempt's open and wait for content). Inside `open` and its future,
    /// [`Attempt::current`](crate::Attempt::current) describes the attempt
    /// and [`ResumePoint::current`] gives the resume point.
    ///
    /// # Panics
    ///
    /// When polled outside a tokio runtime with the time driver enabled,
    /// if it has a timer to arm or a backoff to wait.
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures_util::{stream, StreamExt};
    /// use tenacious::{Elapsed, Limit, Policy, StopReason};
    ///
    /// #[derive(Debug)]
    /// struct Cut(Option<Elapsed>);
    /// impl From<Elapsed> for Cut {
    ///     fn from(e: Elapsed) -> Self { Cut(Some(e)) }
    /// }
    /// impl tenacious::Classify for Cut {
    ///     fn classify(&self) -> tenacious::ErrorClass { tenacious::ErrorClass::Transient }
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let policy = Policy::new().idle(Duration::from_secs(30));
    /// // Two tokens, then the connection drops: nothing is repeated.
    /// let tokens = policy.stream(|_| async {
    ///     Ok(stream::iter(vec![Ok("a"), Ok("b"), Err(Cut(None))]))
    /// });
    /// let out: Vec<_> = tokens.collect().await;
    /// assert_eq!(out.len(), 3);
    /// let failure = out[2].as_ref().unwrap_err();
    /// assert_eq!((failure.delivered(), failure.stop_reason()), (2, StopReason::PartialOutput));
    /// # }
    /// ```
    pub fn stream<O, F, S, T, E>(&self, open: O) -> RetriedStream<'_, OpenWith<O, F>, S, T, E>
    where
        O: FnMut(&ResumePoint) -> F,
        F: Future<Output = Result<S, E>>,
        S: Stream<Item = Result<T, E>>,
        T: StreamItem,
        E: Classify + From<Elapsed>,
    {
        RetriedStream::new(
            self,
            OpenWith {
                open,
                pending: None,
            },
        )
    }
}

impl<'p, O, S, T, E> RetriedStream<'p, O, S, T, E>
where
    O: Open<E, Source = S>,
    E: Classify,
{
    /// A stream under `policy` opened by `open`, before its first attempt.
    pub fn new(policy: &'p Policy, open: O) -> Self {
        Self::with_polled(PollDriver::new(policy), open)
    }

    fn with_polled(mut polled: PollDriver<'p, E>, open: O) -> Self {
        let policy = polled.engine().policy();
        if E::refused().is_some() {
            // A guard may refuse the first attempt: the stream then ends
            // with the failure made of the refusal.
            polled.refusable();
        }
        Self {
            policy,
            polled,
            open,
            source: None,
            deadline: None,
            phase: Phase::Start,
            committed: false,
            progressed: false,
            flushing: false,
            skip: Skip::Off,
            has_last: false,
            ordered: true,
            ticks: 0,
            deadline_at: None,
            armed: None,
            delivered: 0,
            attempt_start: None,
            held: VecDeque::new(),
            held_bytes: 0,
            resume: ResumePoint::start(),
            last_id: String::new(),
            last_at: 0,
            tail: 0,
            provenance: Provenance::new(),
        }
    }
}

#[doc(hidden)]
impl<'p, D, S, T, E> RetriedStream<'p, Driven<D, S, E>, S, T, E>
where
    D: Future,
    E: Classify,
{
    /// The stream of a `#[retry]` fn, whose call `engine` started (with
    /// its key, nested or not): its driver serves the opens through the
    /// port whose link is `shared`.
    pub fn driven(engine: crate::engine::Engine<'p>, shared: Shared<S, E>, driver: D) -> Self {
        Self::with_polled(PollDriver::from_engine(engine), Driven { driver, shared })
    }
}

/// What the consumer of a `#[retry]` fn's stream gets for an attempt's
/// item `X = Result<T, E>`: `Result<T, Failure<E>>`.
#[doc(hidden)]
pub type StreamOutput<X> =
    Result<<X as StreamItemResult>::Ok, Failure<<X as StreamItemResult>::Error>>;

/// An item of one attempt's stream, as a `#[retry]` fn declares it:
/// `Result<T, E>`, its error a cut the call classifies and retries.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a retried stream's items are `Result<T, E>`, found `{Self}`",
    label = "not a `Result`",
    note = "a read that fails is an item `Err(e)`, classified and retried like a failed open: declare `impl Stream<Item = Result<String, Cut>>`, with `Cut` the fn's error type"
)]
pub trait StreamItemResult {
    /// What the stream delivers.
    type Ok;
    /// Why a read fails.
    type Error;
    /// The item, as the `Result` it is.
    fn into_result(self) -> Result<Self::Ok, Self::Error>;
}

impl<T, E> StreamItemResult for Result<T, E> {
    type Ok = T;
    type Error = E;

    #[inline]
    fn into_result(self) -> Self {
        self
    }
}

pin_project! {
    /// The stream a `#[retry]` fn's body opened, read as its declared item
    /// `X`: every type of the retried stream comes from `X` (through
    /// [`StreamItemResult`]), so an item that is not a `Result` is one
    /// error, on `X`, and not another in the retried stream's terms.
    #[doc(hidden)]
    #[derive(Debug)]
    pub struct ItemsOf<S, X> {
        #[pin]
        source: S,
        // The item type only: no `X` is held.
        item: std::marker::PhantomData<fn() -> X>,
    }
}

impl<S, X> Stream for ItemsOf<S, X>
where
    S: Stream<Item = X>,
    X: StreamItemResult,
{
    type Item = Result<X::Ok, X::Error>;

    #[inline]
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.project()
            .source
            .poll_next(cx)
            .map(|item| item.map(StreamItemResult::into_result))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.source.size_hint()
    }
}

/// The error of a `#[retry]` fn's open, which must be its items' error
/// `E`: one error type, classified the same whether the open or a read
/// fails.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this stream's items fail with `{E}`, but opening it fails with `{Self}`",
    label = "the items fail with `{E}`",
    note = "a retried stream has one error type, classified the same whether the open or a read fails: declare `Result<impl Stream<Item = Result<T, {E}>>, {E}>`, or map one error into the other in the fn's body"
)]
pub trait OpensWith<E> {
    /// `self`, as the items' error.
    fn into_items_error(self) -> E;
}

impl<E> OpensWith<E> for E {
    #[inline]
    fn into_items_error(self) -> E {
        self
    }
}

/// A `#[retry]` fn's open, typed by its declared item `X`: the open's error
/// is the items' (see [`OpensWith`]).
#[doc(hidden)]
#[inline]
pub fn opened<X, S, E>(opened: Result<S, E>) -> Result<ItemsOf<S, X>, X::Error>
where
    X: StreamItemResult,
    E: OpensWith<X::Error>,
{
    match opened {
        Ok(source) => Ok(ItemsOf {
            source,
            item: std::marker::PhantomData,
        }),
        Err(error) => Err(error.into_items_error()),
    }
}

/// Says an `impl Trait` captures the lifetimes in `T`, in any edition.
#[doc(hidden)]
pub trait Captures<T: ?Sized> {}

impl<T: ?Sized, U: ?Sized> Captures<U> for T {}

impl<O, S, T, E> Stream for RetriedStream<'_, O, S, T, E>
where
    O: Open<E, Source = S>,
    S: Stream<Item = Result<T, E>>,
    T: StreamItem,
    E: Classify + From<Elapsed>,
{
    type Item = Result<T, Failure<E>>;

    #[inline]
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        // The steady state (committed, reading, nothing held back, no
        // repeats to drop) in a function small enough to inline into the
        // consumer's loop: the slow path's helpers take the whole
        // projection by reference, which makes the compiler build all of
        // it, every field's address, in each function that calls them
        // (`scripts/instructions.sh stream`: 118 instructions per item
        // without this path).
        let mut this = self.as_mut().project();
        if *this.phase == Phase::Reading
            && *this.committed
            && !*this.flushing
            && *this.skip == Skip::Off
        {
            if this.deadline.is_some() {
                *this.ticks = this.ticks.wrapping_add(1);
                if *this.ticks == 0 {
                    return self.poll_slow(cx, Entry::Tick);
                }
            }
            let Some(mut source) = this.source.as_mut().as_pin_mut() else {
                unreachable!("a source is read once opened")
            };
            let mut spins = 0;
            loop {
                match source.as_mut().poll_next(cx) {
                    Poll::Ready(Some(Ok(item))) if item.kind() == ItemKind::Keepalive => {
                        spins += 1;
                        if spins == SPINS {
                            return self.poll_slow(cx, Entry::Fresh);
                        }
                    }
                    Poll::Ready(Some(Ok(item))) => {
                        return Poll::Ready(Some(Ok(deliver(&mut this, item))));
                    }
                    polled => return self.poll_slow(cx, Entry::Polled(polled)),
                }
            }
        }
        self.poll_slow(cx, Entry::Fresh)
    }
}

/// How [`RetriedStream::poll_slow`] is entered from `poll_next`'s fast
/// path.
enum Entry<P> {
    /// Nothing read yet.
    Fresh,
    /// What the source gave the fast path.
    Polled(P),
    /// The fast path counted the 256th poll: the deadline is looked at.
    Tick,
}

impl<O, S, T, E> RetriedStream<'_, O, S, T, E>
where
    O: Open<E, Source = S>,
    S: Stream<Item = Result<T, E>>,
    T: StreamItem,
    E: Classify + From<Elapsed>,
{
    /// `poll_next` past its steady state: every phase, timer and kind of
    /// item.
    #[inline(never)]
    fn poll_slow(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut entry: Entry<Poll<Option<Result<T, E>>>>,
    ) -> Poll<Option<Result<T, Failure<E>>>> {
        let mut this = self.project();
        // Items kept back in this poll.
        let mut spins = 0;
        loop {
            if *this.flushing {
                if let Some(item) = this.held.pop_front() {
                    return Poll::Ready(Some(Ok(deliver(&mut this, item))));
                }
                *this.flushing = false;
            }
            match *this.phase {
                Phase::Done => return Poll::Ready(None),
                Phase::Start => {
                    match this.polled.as_mut().poll_start(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Err(last)) => {
                            // Stopped after the wait (the deadline, a guard).
                            let stop = this
                                .polled
                                .engine()
                                .stop_reason()
                                .unwrap_or(StopReason::Deadline);
                            *this.phase = Phase::Done;
                            let Some(last) = last else {
                                let refusal = this.polled.engine().refused_error(stop);
                                return Poll::Ready(refused::<E>(refusal).map(Err));
                            };
                            return Poll::Ready(Some(Err(end(&mut this, stop, last))));
                        }
                        Poll::Ready(Ok(())) => {}
                    }
                    start_attempt(&mut this);
                }
                Phase::Opening => {
                    let (polled, open, resume) =
                        (this.polled.as_mut(), this.open.as_mut(), &*this.resume);
                    let opened = polled.in_attempt(|| resume.scoped(|| open.poll_open(resume, cx)));
                    match opened {
                        Poll::Ready(Ok(source)) => {
                            this.source.set(Some(source));
                            *this.phase = Phase::Reading;
                        }
                        Poll::Ready(Err(error)) => {
                            if let Some(end) = failed(&mut this, error) {
                                return Poll::Ready(Some(Err(end)));
                            }
                        }
                        Poll::Pending => match expired(&mut this, cx) {
                            Some(limit) => {
                                this.open.as_mut().cancel(cx);
                                if let Some(end) = stalled(&mut this, limit) {
                                    return Poll::Ready(Some(Err(end)));
                                }
                            }
                            None => return Poll::Pending,
                        },
                    }
                }
                Phase::Reading => {
                    let polled = match std::mem::replace(&mut entry, Entry::Fresh) {
                        Entry::Polled(polled) => polled,
                        fresh_or_tick => {
                            if this.deadline.is_some() {
                                // A source always ready never returns
                                // `Pending`, where the deadline is looked
                                // at: every 256th poll looks at it too.
                                if matches!(fresh_or_tick, Entry::Fresh) {
                                    *this.ticks = this.ticks.wrapping_add(1);
                                }
                                if *this.ticks == 0
                                    && this.deadline_at.is_some_and(|at| Instant::now() >= at)
                                    && let Some(end) = stalled(&mut this, Limit::Deadline)
                                {
                                    return Poll::Ready(Some(Err(end)));
                                }
                            }
                            let Some(source) = this.source.as_mut().as_pin_mut() else {
                                unreachable!("a source is read once opened")
                            };
                            source.poll_next(cx)
                        }
                    };
                    match polled {
                        Poll::Ready(Some(Ok(item))) => {
                            match arrived(&mut this, item) {
                                Ok(Some(item)) => return Poll::Ready(Some(Ok(item))),
                                Ok(None) => {}
                                Err(end) => return Poll::Ready(Some(Err(end))),
                            }
                            // Kept back (a keepalive, a repeat, a
                            // preamble): a source always ready with such
                            // items must not outlive the timers, nor hold
                            // the thread.
                            spins += 1;
                            if spins == SPINS {
                                spins = 0;
                                rearm_idle(&mut this);
                                if let Some(limit) = expired(&mut this, cx) {
                                    if let Some(end) = stalled(&mut this, limit) {
                                        return Poll::Ready(Some(Err(end)));
                                    }
                                    continue;
                                }
                                cx.waker().wake_by_ref();
                                return Poll::Pending;
                            }
                        }
                        Poll::Ready(Some(Err(error))) => {
                            if let Some(end) = failed(&mut this, error) {
                                return Poll::Ready(Some(Err(end)));
                            }
                        }
                        Poll::Ready(None) if *this.skip != Skip::Off => {
                            // A resumed attempt that ended before it
                            // caught up: the answer is cut, not complete.
                            let cut = E::from(Elapsed::of(Limit::CatchUp, Duration::ZERO));
                            if let Some(end) = failed(&mut this, cut) {
                                return Poll::Ready(Some(Err(end)));
                            }
                        }
                        Poll::Ready(None) => {
                            // The source ended: the call succeeded, and
                            // what it held back is delivered.
                            this.source.set(None);
                            this.deadline.set(None);
                            if !this.polled.is_done() {
                                let _ = this
                                    .polled
                                    .as_mut()
                                    .finish_recorded(this.provenance, Ok::<(), E>(()));
                            }
                            *this.phase = Phase::Done;
                            // A source that ended before content: its
                            // preamble is all there is.
                            *this.flushing = !this.held.is_empty();
                        }
                        Poll::Pending => {
                            rearm_idle(&mut this);
                            match expired(&mut this, cx) {
                                Some(limit) => {
                                    if let Some(end) = stalled(&mut this, limit) {
                                        return Poll::Ready(Some(Err(end)));
                                    }
                                }
                                None => return Poll::Pending,
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The attempt may start: arm its timers and open it.
fn start_attempt<O, S, T, E: Classify>(this: &mut Projected<'_, '_, O, S, T, E>) {
    *this.phase = Phase::Opening;
    *this.committed = false;
    *this.progressed = false;
    let policy = *this.policy;
    if this.deadline.is_none()
        && let Some(deadline) = policy.get_deadline()
    {
        let (start, _) = this.polled.as_mut().engine_mut().clock_start();
        // A deadline past what the clock can hold is no deadline.
        if let Some(at) = Instant::from_std(start).checked_add(deadline) {
            this.deadline.set(Some(tokio::time::sleep_until(at)));
            *this.deadline_at = Some(at);
        }
    }
    // Until its first content item: `first_item`; a resumed attempt
    // without one is already past the stream's first item, so `idle`.
    let wait = match (policy.get_first_item(), *this.delivered > 0) {
        (Some(first_item), _) => Some((Limit::FirstItem, first_item)),
        (None, true) => policy.get_idle().map(|idle| (Limit::Idle, idle)),
        (None, false) => None,
    };
    arm(this, wait);
    *this.attempt_start = policy.get_stats().map(|_| Instant::now());
    if *this.delivered > 0 {
        // A resumed attempt: from where the consumer is.
        *this.resume = ResumePoint {
            delivered: *this.delivered,
            last_event_id: this.has_last.then(|| this.last_id.clone()),
        };
        *this.skip = if *this.has_last {
            Skip::Unplaced
        } else {
            Skip::Off
        };
        if let Some(stats) = policy.get_stats() {
            observe::stream_resume(stats, *this.delivered);
        }
    }
}

/// An item came from the source: `Some` to deliver it now, `Err` when the
/// stream ends with it (it held as much as it may).
#[inline]
fn arrived<O, S, T: StreamItem, E: Classify + From<Elapsed>>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    item: T,
) -> Result<Option<T>, Failure<E>> {
    let kind = item.kind();
    if kind == ItemKind::Keepalive {
        return Ok(None);
    }
    if *this.skip != Skip::Off && repeated(this, &item) {
        return Ok(None);
    }
    if !*this.committed {
        match kind {
            ItemKind::Preamble => {
                // A resumed attempt's consumer had the preamble already.
                if *this.delivered == 0 {
                    hold(this, item)?;
                }
                return Ok(None);
            }
            _ => return Ok(Some(commit(this, item))),
        }
    }
    Ok(Some(deliver(this, item)))
}

/// Holds a preamble `item` until the first content item, within the
/// policy's bounds; past them the stream ends, with the failure returned.
fn hold<O, S, T: StreamItem, E: Classify + From<Elapsed>>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    item: T,
) -> Result<(), Failure<E>> {
    let bytes = this.held_bytes.saturating_add(item.size());
    let max_items = usize::try_from(this.policy.get_max_held()).unwrap_or(usize::MAX);
    let max_bytes = usize::try_from(this.policy.get_max_held_bytes()).unwrap_or(usize::MAX);
    if this.held.len() >= max_items || bytes > max_bytes {
        return Err(held_too_much(this));
    }
    this.held.push_back(item);
    *this.held_bytes = bytes;
    Ok(())
}

/// The source sent more preamble than the stream may hold: it stops, a
/// retry would hold as much again, whatever `E`'s class says.
#[cold]
fn held_too_much<O, S, T, E: Classify + From<Elapsed>>(
    this: &mut Projected<'_, '_, O, S, T, E>,
) -> Failure<E> {
    let held = u32::try_from(this.held.len()).unwrap_or(u32::MAX);
    this.source.set(None);
    drop_held(this);
    give_up(
        this,
        StopReason::NotRetryable,
        E::from(Elapsed::held_back(held)),
    )
}

/// Drops what the attempt held back.
fn drop_held<O, S, T, E: Classify>(this: &mut Projected<'_, '_, O, S, T, E>) {
    this.held.clear();
    *this.held_bytes = 0;
}

/// The attempt's first content item: the stream commits.
#[cold]
fn commit<O, S, T: StreamItem, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    item: T,
) -> T {
    *this.committed = true;
    let policy = *this.policy;
    arm(this, policy.get_idle().map(|idle| (Limit::Idle, idle)));
    // The stream's first commit: a resumed attempt's is no first item.
    if *this.delivered == 0
        && let (Some(stats), Some(start)) = (policy.get_stats(), *this.attempt_start)
    {
        observe::stream_first_item(stats, start.elapsed());
    }
    if this.held.is_empty() {
        return deliver(this, item);
    }
    // Delivered from here: no longer counted against the bound.
    *this.held_bytes = 0;
    this.held.push_back(item);
    *this.flushing = true;
    let first = this
        .held
        .pop_front()
        .unwrap_or_else(|| unreachable!("pushed above"));
    deliver(this, first)
}

/// Hands `item` to the consumer: counts it and, with resume, keeps its id.
/// Always inlined: a call would take the whole projection's address, which
/// makes the caller build every field's (see `poll_next`).
#[inline(always)]
fn deliver<O, S, T: StreamItem, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    item: T,
) -> T {
    *this.delivered += 1;
    *this.progressed = true;
    if this.policy.get_resume()
        && let Some(id) = item.id()
    {
        let last = Last {
            id: this.last_id,
            has: this.has_last,
            ordered: this.ordered,
            at: this.last_at,
        };
        keep_id(last, id, *this.delivered);
    }
    item
}

/// The last delivered id and what is known of it.
struct Last<'a> {
    id: &'a mut String,
    has: &'a mut bool,
    ordered: &'a mut bool,
    at: &'a mut u64,
}

/// With resume: `id`, the id of the `delivered`th item, is the last
/// delivered; copied into the one buffer only when it is another id than
/// the last.
#[inline]
fn keep_id(last: Last<'_>, id: &str, delivered: u64) {
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
fn position(id: &str, last: &str) -> std::cmp::Ordering {
    id.len()
        .cmp(&last.len())
        .then_with(|| id.as_bytes().cmp(last.as_bytes()))
}

/// Whether a resumed attempt's `item` is one the consumer has: every item
/// is, until the attempt has caught up with the consumer (see the module
/// docs, "Resume").
#[cold]
fn repeated<O, S, T: StreamItem, E: Classify>(
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

/// The limit that ran out, if one did: the deadline, or the attempt's own
/// timer (its first item before commit, its idle time after).
fn expired<O, S, T, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    cx: &mut Context<'_>,
) -> Option<Limit> {
    if let Some(deadline) = this.deadline.as_mut().as_pin_mut()
        && deadline.poll(cx).is_ready()
    {
        return Some(Limit::Deadline);
    }
    if this.armed.is_some() && this.polled.as_mut().poll_timer(cx).is_ready() {
        return this.armed.map(|(limit, _)| limit);
    }
    None
}

/// How many items kept back (keepalives, repeats, a preamble) one poll
/// reads before it looks at the timers and yields.
const SPINS: u32 = 128;

/// Arms the attempt's own timer as `wait` says, or disarms it.
fn arm<O, S, T, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    wait: Option<(Limit, Duration)>,
) {
    *this.armed = wait;
    match wait {
        Some((_, after)) => this.polled.as_mut().arm(after),
        None => this.polled.as_mut().disarm(),
    }
}

/// After progress, the idle limit counts again from now.
fn rearm_idle<O, S, T, E: Classify>(this: &mut Projected<'_, '_, O, S, T, E>) {
    if std::mem::take(this.progressed)
        && let Some(idle) = this.policy.get_idle()
    {
        arm(this, Some((Limit::Idle, idle)));
    }
}

/// The attempt ran out of `limit`: it fails with `E::from(Elapsed)`.
#[cold]
fn stalled<O, S, T, E: Classify + From<Elapsed>>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    limit: Limit,
) -> Option<Failure<E>> {
    let policy = *this.policy;
    let length = match (limit, *this.armed) {
        (Limit::Deadline, _) => policy.get_deadline().unwrap_or_default(),
        (_, Some((_, armed))) => armed,
        (_, None) => Duration::ZERO,
    };
    if let Some(stats) = policy.get_stats() {
        observe::stream_stall(stats, limit);
    }
    let error = E::from(Elapsed::of(limit, length));
    if limit == Limit::Deadline {
        this.source.set(None);
        drop_held(this);
        return Some(give_up(this, StopReason::Deadline, error));
    }
    this.polled.as_mut().note_timeout();
    failed(this, error)
}

/// The attempt failed with `error`: `None` to try again, or the failure
/// the stream ends with.
#[cold]
fn failed<O, S, T, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    error: E,
) -> Option<Failure<E>> {
    this.source.set(None);
    // What this attempt held back goes with it.
    drop_held(this);
    if *this.delivered > 0 && !this.policy.get_resume() {
        // A retry would repeat what the consumer has.
        return Some(give_up(this, StopReason::PartialOutput, error));
    }
    match this
        .polled
        .as_mut()
        .finish_recorded(this.provenance, Err::<(), E>(error))
    {
        ControlFlow::Continue(()) => {
            *this.phase = Phase::Start;
            None
        }
        ControlFlow::Break(result) => {
            let error = match result {
                Err(error) => error,
                Ok(()) => unreachable!("a failed attempt decides no success"),
            };
            let stop = this
                .polled
                .engine()
                .stop_reason()
                .unwrap_or(StopReason::Exhausted);
            Some(end(this, stop, error))
        }
    }
}

/// The failure of a stream whose first attempt a guard refused
/// (`refused`); `None` when `E` cannot say so (the refusal is then taken as a
/// go, see `PollDriver::refusable`).
#[cold]
fn refused<E: Classify>(refused: crate::Refused) -> Option<Failure<E>> {
    let make = <Failure<E> as Classify>::refused()?;
    Some(make(refused))
}

/// The stream stops for `reason` with `error`, whatever the policy would
/// decide (its give-up is counted and recorded here).
#[cold]
fn give_up<O, S, T, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    reason: StopReason,
    error: E,
) -> Failure<E> {
    if !this.polled.is_done() {
        this.polled
            .as_mut()
            .stop_after(this.provenance, &error, reason);
    }
    end(this, reason, error)
}

/// The failure the stream ends with.
fn end<O, S, T, E: Classify>(
    this: &mut Projected<'_, '_, O, S, T, E>,
    reason: StopReason,
    error: E,
) -> Failure<E> {
    *this.phase = Phase::Done;
    this.deadline.set(None);
    let delivered = *this.delivered;
    if delivered > 0
        && let Some(stats) = this.policy.get_stats()
    {
        observe::stream_partial(stats, delivered, reason);
    }
    let retry_in = this.polled.engine().retry_in();
    std::mem::take(this.provenance)
        .into_stream_failure(reason, delivered, error)
        .with_retry_in(retry_in)
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
