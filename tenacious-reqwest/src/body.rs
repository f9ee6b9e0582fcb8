//! An error response read for its classification and handed back whole:
//! [`read_failed`] reads at most [`HttpError::MAX_BODY`] bytes of the body
//! (what the presets parse), for at most the middleware's
//! [`body_timeout`](super::RetryMiddleware::body_timeout), and the
//! response it returns replays them before the rest, which is left
//! unread.
use std::collections::VecDeque;
use std::future::Future as _;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body as _, Frame, SizeHint};
use reqwest::ResponseBuilderExt as _;

use tenacious_runtime::HttpError;

/// Classifies a response with a 4xx or 5xx status by its status, headers
/// and error body (see [`HttpError`]), and gives it back with the same
/// status, headers, extensions, URL and body: the bytes read for the
/// classification first, then the rest of the body as the server sends
/// it (or the error that cut it). A body that stalls is read for `within`
/// at most: the response is then classified by what came (its status and
/// headers, when the body said nothing whole), and the rest of the body
/// is left to whoever reads the response.
pub(super) async fn read_failed(
    response: reqwest::Response,
    within: std::time::Duration,
) -> (HttpError, reqwest::Response) {
    let error = HttpError::from(&response);
    let url = response.url().clone();
    let (mut parts, mut body) = http::Response::<reqwest::Body>::from(response).into_parts();
    let mut read = VecDeque::new();
    // What the presets are given: the first `MAX_BODY` bytes, copied once.
    let mut head = Vec::new();
    let mut seen = 0usize;
    let mut stalled = false;
    let timer = tokio::time::sleep(within);
    let mut timer = std::pin::pin!(timer);
    let rest = loop {
        if seen > HttpError::MAX_BODY {
            break Rest::Body(body);
        }
        let frame = std::future::poll_fn(|cx| match Pin::new(&mut body).poll_frame(cx) {
            Poll::Ready(frame) => Poll::Ready(Some(frame)),
            Poll::Pending => timer.as_mut().poll(cx).map(|()| None),
        })
        .await;
        let Some(frame) = frame else {
            // Stalled past the bound: classified by what came.
            stalled = true;
            break Rest::Body(body);
        };
        match frame {
            None => break Rest::Done,
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    seen = seen.saturating_add(data.len());
                    let room = HttpError::MAX_BODY - head.len();
                    head.extend_from_slice(&data[..data.len().min(room)]);
                }
                // Trailers come last: the body ends after them.
                let trailers = frame.is_trailers();
                read.push_back(frame);
                if trailers {
                    break Rest::Body(body);
                }
            }
            Some(Err(cut)) => break Rest::Failed(Some(cut)),
        }
    };
    let whole = seen <= HttpError::MAX_BODY && !rest.failed() && !stalled;
    let error = if whole {
        error.with_body(&head)
    } else {
        error.with_partial_body(&head)
    };
    // `From<http::Response>` takes the URL from this extension, which
    // reqwest's own conversion the other way does not leave.
    if let Ok(with_url) = http::Response::builder().url(url).body(()) {
        parts.extensions.extend(with_url.into_parts().0.extensions);
    }
    let replayed = reqwest::Body::wrap(Replayed { read, rest });
    (
        error,
        reqwest::Response::from(http::Response::from_parts(parts, replayed)),
    )
}

/// What is left of a body after the frames read for its classification.
enum Rest {
    /// The body as it was, positioned after those frames.
    Body(reqwest::Body),
    /// The body failed while it was read: its error, replayed once.
    Failed(Option<reqwest::Error>),
    /// The body ended.
    Done,
}

impl Rest {
    const fn failed(&self) -> bool {
        matches!(self, Self::Failed(_))
    }
}

/// The body of a response given back by [`read_failed`]: the frames read,
/// then the [`Rest`].
struct Replayed {
    read: VecDeque<Frame<Bytes>>,
    rest: Rest,
}

impl http_body::Body for Replayed {
    type Data = Bytes;
    type Error = reqwest::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, reqwest::Error>>> {
        let this = self.get_mut();
        if let Some(frame) = this.read.pop_front() {
            return Poll::Ready(Some(Ok(frame)));
        }
        match &mut this.rest {
            Rest::Body(body) => Pin::new(body).poll_frame(cx),
            Rest::Failed(cut) => Poll::Ready(cut.take().map(Err)),
            Rest::Done => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.read.is_empty()
            && match &self.rest {
                Rest::Body(body) => body.is_end_stream(),
                Rest::Failed(cut) => cut.is_none(),
                Rest::Done => true,
            }
    }

    /// The bytes read and what the rest says of itself, so the response's
    /// `content_length()` is what the server declared.
    fn size_hint(&self) -> SizeHint {
        let read = self
            .read
            .iter()
            .filter_map(Frame::data_ref)
            .map(|data| data.len() as u64)
            .sum::<u64>();
        let mut hint = SizeHint::new();
        match &self.rest {
            Rest::Body(body) => {
                let rest = body.size_hint();
                hint.set_lower(rest.lower().saturating_add(read));
                if let Some(upper) = rest.upper() {
                    hint.set_upper(upper.saturating_add(read));
                }
            }
            Rest::Failed(_) => hint.set_lower(read),
            Rest::Done => hint.set_exact(read),
        }
        hint
    }
}
