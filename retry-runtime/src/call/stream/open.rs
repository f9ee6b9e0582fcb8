//! How each attempt's source is opened: [`Open`], [`OpenWith`] for a
//! closure, and for `#[retry]` a driver future ([`Driven`]) that opens
//! once each time the stream asks through a [`Port`].
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::resume::ResumePoint;

/// How a retried stream opens each attempt's source: the opener closure
/// of [`Policy::stream`](crate::Policy::stream) ([`OpenWith`]), or the body of a `#[retry]` fn.
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
        pub(super) open: O,
        #[pin]
        pub(super) pending: Option<F>,
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
    pub(super) wanted: bool,
    pub(super) cancel: bool,
    pub(super) opened: Option<Result<S, E>>,
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
    pub(super) shared: Shared<S, E>,
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
        pub(super) driver: D,
        pub(super) shared: Shared<S, E>,
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
