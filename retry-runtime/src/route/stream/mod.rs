//! [`Route::stream`]: a stream of items from the first target that
//! serves, switching before the first content item, continuing after it
//! only at a target that declares it can.
mod resume;
mod target;

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, ready};

use futures_core::Stream;
use tokio::time::{Instant, Sleep};

use super::hop::Hop;
use super::outcome::{RouteFailure, RouteStop, TargetError, Tried};
use super::{Route, Target, Then};
use crate::stream::{ItemKind, RetriedStream, StreamItem, Usage};
use crate::{Classify, Elapsed, Failure};
pub use resume::Resume;
use target::{Shared, TargetOpen, TargetSource, deadline, lock};

/// The retried stream of one target, boxed: it is replaced in place when
/// the route moves on.
type TargetStream<'r, D, O, F, S, T, E> =
    Pin<Box<RetriedStream<'r, TargetOpen<'r, D, O, F, T>, TargetSource<'r, D, S>, T, Hop<E>>>>;

/// A routed stream: what [`Route::stream`] returns. A stream of
/// `Result<T, RouteFailure<E>>`: the items of the target that serves,
/// then, if no target could, one [`RouteFailure`] and the end.
///
/// [`served_by`](RoutedStream::served_by) says which target's items are
/// coming, [`tried`](RoutedStream::tried) which targets failed before.
#[must_use = "a stream does nothing until polled"]
pub struct RoutedStream<'r, D, O, F, S, T, E>
where
    E: Classify,
{
    route: &'r Route<D>,
    shared: Arc<Shared<O, T>>,
    /// The next target to try.
    next: usize,
    /// The target being read, and its stream.
    serving: Option<usize>,
    current: Option<TargetStream<'r, D, O, F, S, T, E>>,
    tried: Vec<Tried<E>>,
    larger_than: Option<u64>,
    deadline: Option<Pin<Box<Sleep>>>,
    /// Items the consumer has.
    delivered: u64,
    /// Whether content items are kept for a target that continues.
    keep: bool,
    /// The index in `tried` of the failure that cut the stream.
    cause: Option<usize>,
    /// Whether the target being read continues a cut stream (its
    /// preamble is dropped: the consumer has the first target's), until
    /// its first content item.
    continuing: bool,
    /// The tokens the items reported, dropped ones included.
    usage: Usage,
    done: bool,
    _types: PhantomData<fn() -> (F, S)>,
}

// Nothing of it is pinned in place: each target's stream and the
// deadline's timer are boxed.
impl<D, O, F, S, T, E: Classify> Unpin for RoutedStream<'_, D, O, F, S, T, E> {}

impl<D, O, F, S, T, E: Classify> fmt::Debug for RoutedStream<'_, D, O, F, S, T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RoutedStream")
            .field("route", &self.route.name())
            .field("served_by", &self.served_by())
            .field("tried", &self.tried.len())
            .field("delivered", &self.delivered)
            .finish_non_exhaustive()
    }
}

impl<D, O, F, S, T, E: Classify> RoutedStream<'_, D, O, F, S, T, E> {
    /// The target whose items are coming (or whose attempt is open), if
    /// one is.
    #[must_use]
    pub fn served_by(&self) -> Option<&'static str> {
        self.serving
            .map(|index| self.route.targets[index].static_name())
    }

    /// The targets that failed so far, in order.
    #[must_use]
    pub fn tried(&self) -> &[Tried<E>] {
        &self.tried
    }

    /// The items delivered so far.
    #[must_use]
    pub const fn delivered(&self) -> u64 {
        self.delivered
    }

    /// The tokens the items reported so far ([`StreamItem::usage`]),
    /// summed over every target that served part of the answer — a
    /// continuation's dropped preamble included (Anthropic's
    /// `message_start` reports the input tokens). Attempts that failed
    /// before content are not counted: their items never reached the
    /// route.
    #[must_use]
    pub const fn usage(&self) -> Usage {
        self.usage
    }
}

impl<D> Route<D> {
    /// A routed stream: `open` opens one attempt's stream at the target
    /// it is given, from where the consumer is ([`Resume`]); each target
    /// is retried by its own policy as [`Policy::stream`](crate::Policy::stream)
    /// retries any stream (its phases, timers and resume), and the
    /// consumer gets one stream of items.
    ///
    /// - **Before the first content item** any failure may move to the
    ///   next target, by the route's [`Rules`](super::Rules), as for
    ///   [`call`](Route::call): a target that is down, overloaded, out of
    ///   quota or whose breaker is open is left; a content filter or a
    ///   request to fix stops the route. A target with no content within
    ///   its [`silence`](Target::silence) limit (default: its policy's
    ///   [`first_item`](crate::Policy::first_item)) — no headers, or only
    ///   keepalives — is left after that one attempt; with
    ///   [`learn_silence`](Target::learn_silence) the limit is learnt
    ///   from its times to first content.
    /// - **After it**, the consumer has part of an answer: the stream
    ///   goes on only at a later target that
    ///   [`continues`](Target::continues), whose opener gets the items
    ///   delivered ([`Resume::items`]) to continue from; its preamble is
    ///   dropped (the consumer has one). Targets that cannot continue are
    ///   skipped. When none is left, or the failure stops the route (a
    ///   content filter mid-answer), the stream ends with a
    ///   [`RouteFailure`] of [`RouteStop::PartialOutput`] whose
    ///   [`cause`](RouteFailure::cause) is the failure that cut it — not
    ///   a continuation's own error.
    /// - One [deadline](super::RouteBuilder::deadline) over the whole
    ///   stream: when it passes, the stream ends with
    ///   [`RouteStop::Deadline`] whatever the target is doing.
    ///
    /// # Panics
    ///
    /// When polled outside a tokio runtime with the time driver enabled,
    /// if it has a timer to arm or a backoff to wait.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use futures_util::{stream, StreamExt};
    /// use tenacious::route::{Route, Target};
    /// use tenacious::{Classify, Elapsed, ErrorClass, Policy};
    ///
    /// #[derive(Debug)]
    /// struct Cut;
    /// impl From<Elapsed> for Cut {
    ///     fn from(_: Elapsed) -> Self { Cut }
    /// }
    /// impl Classify for Cut {
    ///     fn classify(&self) -> ErrorClass { ErrorClass::Transient }
    /// }
    ///
    /// let route = Route::builder("docs-stream")
    ///     .target(Target::new("docs-stream-a", "a").policy(Policy::new().max(1)))
    ///     .target(Target::new("docs-stream-b", "b").continues(true))
    ///     .build()
    ///     .unwrap();
    /// let tokens = route.stream(|target, resume| {
    ///     let (name, prefill) = (*target.data(), resume.text());
    ///     async move {
    ///         Ok(match name {
    ///             // Two tokens, then the connection drops.
    ///             "a" => stream::iter(vec![Ok("Hel".to_owned()), Ok("lo,".to_owned()), Err(Cut)]).boxed(),
    ///             // Continues from what the consumer has.
    ///             _ => {
    ///                 assert_eq!(prefill, "Hello,");
    ///                 stream::iter(vec![Ok(" world".to_owned())]).boxed()
    ///             }
    ///         })
    ///     }
    /// });
    /// let text: Vec<String> = tokens.map(Result::unwrap).collect().await;
    /// assert_eq!(text.concat(), "Hello, world");
    /// # }
    /// ```
    pub fn stream<'r, O, F, S, T, E>(&'r self, open: O) -> RoutedStream<'r, D, O, F, S, T, E>
    where
        O: FnMut(&'r Target<D>, &Resume<'_, T>) -> F,
        F: Future<Output = Result<S, E>>,
        S: Stream<Item = Result<T, E>>,
        T: StreamItem + Clone,
        E: Classify + From<Elapsed>,
    {
        RoutedStream {
            route: self,
            shared: Arc::new(Shared::new(open)),
            next: 0,
            serving: None,
            current: None,
            tried: Vec::new(),
            larger_than: None,
            // Armed at the first poll: the route's deadline runs from when
            // the stream is read, and building it needs no runtime.
            deadline: None,
            delivered: 0,
            keep: self.targets.iter().any(Target::get_continues),
            cause: None,
            continuing: false,
            usage: Usage::default(),
            done: false,
            _types: PhantomData,
        }
    }
}

impl<'r, D, O, F, S, T, E> RoutedStream<'r, D, O, F, S, T, E>
where
    O: FnMut(&'r Target<D>, &Resume<'_, T>) -> F,
    F: Future<Output = Result<S, E>>,
    S: Stream<Item = Result<T, E>>,
    T: StreamItem + Clone,
    E: Classify + From<Elapsed>,
{
    /// Starts the next target that may serve; `false` when none is left.
    fn start_next(&mut self) -> bool {
        let committed = self.delivered > 0;
        let targets = &self.route.targets;
        while let Some(target) = targets.get(self.next) {
            let index = self.next;
            self.next += 1;
            let skipped = if committed && !target.get_continues() {
                Some(TargetError::CannotContinue)
            } else if let Some(window) = self.larger_than
                && target.get_context().is_none_or(|context| context <= window)
            {
                Some(TargetError::Skipped)
            } else {
                None
            };
            if let Some(error) = skipped {
                self.tried.push(Tried {
                    target: target.static_name(),
                    index,
                    attempts: 0,
                    stop: crate::StopReason::NotRetryable,
                    then: Then::Next,
                    error,
                });
                continue;
            }
            self.shared.opens.store(0, Ordering::Relaxed);
            self.serving = Some(index);
            self.continuing = committed;
            self.current = Some(Box::pin(RetriedStream::new(
                target.get_policy(),
                TargetOpen::new(target, targets, Arc::clone(&self.shared)),
            )));
            return true;
        }
        false
    }

    /// The target being read failed for good: records it and decides.
    /// `Some(stop)` ends the route.
    fn failed(&mut self, failure: Failure<Hop<E>>) -> Option<RouteStop> {
        self.current = None;
        let index = self.serving.unwrap_or(0);
        let target = &self.route.targets[index];
        let stop = failure.stop_reason();
        let last = failure.into_inner();
        let committed = self.delivered > 0;
        let (class, rejected, silent) = (last.classify(), last.rejected(), last.is_silent());
        let rules = &self.route.rules;
        let then = if committed {
            rules.after_commit(class, rejected, silent)
        } else {
            rules.decide(stop, class, rejected, silent)
        };
        // The failure that cut the stream stays its cause; a
        // continuation's own failure does not mask it.
        if committed && self.cause.is_none() {
            self.cause = Some(self.tried.len());
        }
        self.tried.push(Tried {
            target: target.static_name(),
            index,
            attempts: self.shared.opens.load(Ordering::Relaxed),
            stop,
            then,
            error: last.into_target_error(),
        });
        match then {
            Then::Stop if committed => Some(RouteStop::PartialOutput),
            Then::Stop => Some(RouteStop::Stopped),
            Then::Larger => {
                self.larger_than = Some(target.get_context().unwrap_or(0));
                None
            }
            Then::Next => None,
        }
    }

    /// Ends the stream with the route's failure.
    fn finish(&mut self, stop: RouteStop) -> Poll<Option<Result<T, RouteFailure<E>>>> {
        self.done = true;
        self.current = None;
        self.deadline = None;
        Poll::Ready(Some(Err(RouteFailure {
            tried: std::mem::take(&mut self.tried),
            stop,
            delivered: self.delivered,
            cause: self.cause,
        })))
    }

    /// Where the route stands when no target is left to start.
    const fn none_left(&self) -> RouteStop {
        if self.delivered > 0 {
            RouteStop::PartialOutput
        } else {
            RouteStop::NoTargetLeft
        }
    }
}

impl<'r, D, O, F, S, T, E> Stream for RoutedStream<'r, D, O, F, S, T, E>
where
    O: FnMut(&'r Target<D>, &Resume<'_, T>) -> F,
    F: Future<Output = Result<S, E>>,
    S: Stream<Item = Result<T, E>>,
    T: StreamItem + Clone,
    E: Classify + From<Elapsed>,
{
    type Item = Result<T, RouteFailure<E>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if this.deadline.is_none()
            && this.next == 0
            && let Some(limit) = this.route.deadline
        {
            this.deadline = Some(Box::pin(tokio::time::sleep_until(deadline(
                Instant::now(),
                limit,
            ))));
        }
        if let Some(deadline) = this.deadline.as_mut()
            && deadline.as_mut().poll(cx).is_ready()
        {
            return this.finish(RouteStop::Deadline);
        }
        loop {
            if this.current.is_none() && !this.start_next() {
                let stop = this.none_left();
                return this.finish(stop);
            }
            let Some(current) = this.current.as_mut() else {
                unreachable!("started above")
            };
            match ready!(current.as_mut().poll_next(cx)) {
                Some(Ok(item)) => {
                    let kind = item.kind();
                    if let Some(usage) = item.usage() {
                        this.usage += usage;
                    }
                    if this.continuing {
                        // A continuation's preamble (its `role`, its
                        // `message_start`) is dropped: the consumer has
                        // the first target's. What comes after its first
                        // content (a finish, a usage chunk) is delivered.
                        match kind {
                            ItemKind::Preamble => continue,
                            _ => this.continuing = false,
                        }
                    }
                    if kind == ItemKind::Content && this.keep {
                        lock(&this.shared.items).push(item.clone());
                    }
                    this.delivered = this.delivered.saturating_add(1);
                    return Poll::Ready(Some(Ok(item)));
                }
                Some(Err(failure)) => {
                    if let Some(stop) = this.failed(failure) {
                        return this.finish(stop);
                    }
                }
                None => {
                    this.done = true;
                    this.current = None;
                    return Poll::Ready(None);
                }
            }
        }
    }
}
