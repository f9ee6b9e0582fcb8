//! One target's attempts under a routed stream: [`TargetOpen`] opens
//! each with the route's opener, told its target and what the consumer
//! has, and [`TargetSource`] reads it, its first content item awaited
//! within the target's silence limit.
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

use super::super::Target;
use super::super::hop::Hop;
use super::Resume;
use crate::stream::{ItemKind, Open, ResumePoint, StreamItem};
use crate::{Elapsed, Limit};

/// What a routed stream and its targets' openers share.
pub(super) struct Shared<O, T> {
    open: Mutex<O>,
    /// The content items delivered, when a target continues cut streams.
    pub(super) items: Mutex<Vec<T>>,
    /// Attempts opened at the target being read.
    pub(super) opens: AtomicU32,
}

impl<O, T> Shared<O, T> {
    pub(super) const fn new(open: O) -> Self {
        Self {
            open: Mutex::new(open),
            items: Mutex::new(Vec::new()),
            opens: AtomicU32::new(0),
        }
    }
}

pub(super) fn lock<X>(mutex: &Mutex<X>) -> MutexGuard<'_, X> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

pin_project! {
    /// The opener of one target's stream: the route's opener, told its
    /// target, with the target's silence limit on its open.
    pub(super) struct TargetOpen<'r, D, O, F, T> {
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

impl<'r, D, O, F, T> TargetOpen<'r, D, O, F, T> {
    /// The opener of `target`'s stream, one of the route's `peers`.
    pub(super) const fn new(
        target: &'r Target<D>,
        peers: &'r [Target<D>],
        shared: Arc<Shared<O, T>>,
    ) -> Self {
        Self {
            target,
            peers,
            shared,
            limit: None,
            started: None,
            pending: None,
            silence: None,
        }
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
pub(super) fn deadline(now: Instant, limit: Duration) -> Instant {
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
    pub(super) struct TargetSource<'r, D, S> {
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
