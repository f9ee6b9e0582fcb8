//! [`Route::stream`]: a stream of items from the first target that
//! serves, switching before the first content item, continuing after it
//! only at a target that declares it can.
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_core::Stream;
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

use super::hop::Hop;
use super::outcome::{RouteFailure, RouteStop, TargetError, Tried};
use super::{Route, Target, Then};
use crate::stream::{ItemKind, Open, ResumePoint, RetriedStream, StreamItem, Usage};
use crate::{Classify, Elapsed, Failure, Limit};

/// Where a target's stream starts, as its opener sees it: the target's
/// own [`ResumePoint`] (its policy's resume, within its own stream) and
/// the content items the consumer already has, from every target before
/// (empty before the route's first content item).
///
/// A target that [continues](Target::continues) a cut stream rebuilds its
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
    /// route [continues](Target::continues) cut streams; empty otherwise.
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

/// What a routed stream and its targets' openers share.
struct Shared<O, T> {
    open: Mutex<O>,
    /// The content items delivered, when a target continues cut streams.
    items: Mutex<Vec<T>>,
    /// Attempts opened at the target being read.
    opens: AtomicU32,
}

fn lock<X>(mutex: &Mutex<X>) -> MutexGuard<'_, X> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

pin_project! {
    /// The opener of one target's stream: the route's opener, told its
    /// target, with the target's silence limit on its open.
    struct TargetOpen<'r, D, O, F, T> {
        target: &'r Target<D>,
        // The route's targets: a target with no estimate of its own
        // starts from theirs.
        peers: &'r [Target<D>],
        shared: Arc<Shared<O, T>>,
        limit: Option<Duration>,
        started: Option<Instant>,
        #[pin]
        pending: Option<F>,
        #[pin]
        silence: Option<Sleep>,
    }
}

impl<'r, D, O, F, S, T, E> Open<Hop<E>> for TargetOpen<'r, D, O, F, T>
where
    O: FnMut(&'r Target<D>, &Resume<'_, T>) -> F,
    F: Future<Output = Result<S, E>>,
{
    type Source = TargetSource<'r, D, S>;

    fn poll_open(
        self: Pin<&mut Self>,
        resume: &ResumePoint,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::Source, Hop<E>>> {
        let mut this = self.project();
        if this.pending.is_none() {
            this.shared.opens.fetch_add(1, Ordering::Relaxed);
            let opened = {
                let items = lock(&this.shared.items);
                let mut open = lock(&this.shared.open);
                (open)(this.target, &Resume::new(resume, &items))
            };
            this.pending.set(Some(opened));
            *this.limit = this.target.stream_silence_now(this.peers);
            let now = Instant::now();
            *this.started = this.target.learns().then_some(now);
            let silence = this
                .limit
                .map(|limit| tokio::time::sleep_until(deadline(now, limit)));
            this.silence.set(silence);
        }
        let Some(pending) = this.pending.as_mut().as_pin_mut() else {
            unreachable!("set above")
        };
        let opened = match pending.poll(cx) {
            Poll::Ready(opened) => opened,
            Poll::Pending => {
                if let Some(silence) = this.silence.as_mut().as_pin_mut()
                    && silence.poll(cx).is_ready()
                {
                    this.pending.set(None);
                    this.silence.set(None);
                    this.target.went_silent(this.peers);
                    return Poll::Ready(Err(silent(*this.limit)));
                }
                return Poll::Pending;
            }
        };
        this.pending.set(None);
        let until = this
            .silence
            .as_ref()
            .as_pin_ref()
            .map(|sleep| sleep.deadline());
        this.silence.set(None);
        Poll::Ready(match opened {
            Ok(source) => Ok(TargetSource {
                target: this.target,
                peers: this.peers,
                limit: *this.limit,
                started: this.started.take(),
                source,
                silence: until.map(tokio::time::sleep_until),
            }),
            Err(error) => Err(Hop::Answer(error)),
        })
    }

    fn cancel(self: Pin<&mut Self>, _: &mut Context<'_>) {
        let mut this = self.project();
        this.pending.set(None);
        this.silence.set(None);
    }
}

/// `now + limit`, or far ahead when that does not fit the clock.
fn deadline(now: Instant, limit: Duration) -> Instant {
    now.checked_add(limit)
        .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365 * 30))
}

/// The silence of a target that sent no content within `limit`.
fn silent<E>(limit: Option<Duration>) -> Hop<E> {
    Hop::Silent(Elapsed::of(Limit::FirstItem, limit.unwrap_or_default()))
}

pin_project! {
    /// One attempt's source at a target: its errors as the target's, its
    /// first content item awaited within the target's silence limit, and
    /// timed when the target learns it.
    struct TargetSource<'r, D, S> {
        target: &'r Target<D>,
        peers: &'r [Target<D>],
        limit: Option<Duration>,
        started: Option<Instant>,
        #[pin]
        source: S,
        #[pin]
        silence: Option<Sleep>,
    }
}

impl<D, S, T, E> Stream for TargetSource<'_, D, S>
where
    S: Stream<Item = Result<T, E>>,
    T: StreamItem,
{
    type Item = Result<T, Hop<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        match this.source.poll_next(cx) {
            Poll::Ready(Some(Ok(item))) => {
                if item.kind() == ItemKind::Content {
                    if let Some(started) = this.started.take() {
                        this.target.answered(started.elapsed());
                    }
                    this.silence.set(None);
                }
                Poll::Ready(Some(Ok(item)))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(Hop::Answer(error)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => {
                if let Some(silence) = this.silence.as_mut().as_pin_mut()
                    && silence.poll(cx).is_ready()
                {
                    this.silence.set(None);
                    this.target.went_silent(this.peers);
                    return Poll::Ready(Some(Err(silent(*this.limit))));
                }
                Poll::Pending
            }
        }
    }
}

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
            shared: Arc::new(Shared {
                open: Mutex::new(open),
                items: Mutex::new(Vec::new()),
                opens: AtomicU32::new(0),
            }),
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
                TargetOpen {
                    target,
                    peers: targets,
                    shared: Arc::clone(&self.shared),
                    limit: None,
                    started: None,
                    pending: None,
                    silence: None,
                },
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
