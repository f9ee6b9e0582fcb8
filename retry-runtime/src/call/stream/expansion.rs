//! What the expansion of `#[retry]` on a fn that opens a stream names:
//! the item type it returns, the check of the opener's result, and
//! `Captures`.
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use pin_project_lite::pin_project;

use crate::Failure;

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
        pub(super) source: S,
        // The item type only: no `X` is held.
        pub(super) item: std::marker::PhantomData<fn() -> X>,
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
