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
//! [`StopReason::PartialOutput`](crate::StopReason::PartialOutput); with [`resume`](Policy::resume) the
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
//! [`Limit::Held`], [`StopReason::NotRetryable`](crate::StopReason::NotRetryable)), or a *keepalive* (an SSE comment, a `ping`
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
//! [`StopReason::Deadline`](crate::StopReason::Deadline).
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
mod expansion;
mod item;
mod open;
mod read;
mod resume;
mod timers;

pub use expansion::{Captures, ItemsOf, OpensWith, StreamItemResult, StreamOutput, opened};
pub use item::{ItemKind, StreamItem, Usage};
pub use open::{Driven, Open, OpenWith, Port, Shared, port};
pub use resume::ResumePoint;

pub use futures_core::Stream;
use pin_project_lite::pin_project;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

use crate::classify::failure::Provenance;
use crate::poll::PollDriver;
use crate::{Classify, Elapsed, Failure, Limit, Policy};
use read::deliver;
use timers::SPINS;

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
