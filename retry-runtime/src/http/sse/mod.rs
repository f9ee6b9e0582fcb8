//! Server-sent events from a stream of bytes (feature `sse`), keepalives
//! included: [`sse`] turns the body of a `text/event-stream` response
//! (reqwest's `bytes_stream()`, or any `Stream` of byte chunks) into a
//! stream of [`SseItem`]s.
//!
//! A stream a model serves token by token may pause for a long time
//! between tokens and send a comment line (`: ping`) to keep the
//! connection alive: that is *liveness* (the server is there), not
//! *progress* (no token came). The parser yields comments as
//! [`SseItem::Comment`] so a caller can tell the two apart, where
//! eventsource-stream 0.2 drops them (`RawEventLine::Comment(_) => {}` in
//! its `event_stream.rs`), which leaves no way to see a keepalive.
//!
//! The format is the WHATWG HTML standard's, "Server-sent events", 9.2.6
//! "Interpreting an event stream": lines end in CRLF, LF or CR (a CRLF
//! split across two chunks is one end of line); a leading byte-order mark
//! is skipped; `data` lines join with `\n`; `event` names the type
//! (`message` when none); `id` sets the last event id, which every later
//! event carries until another `id` (one holding NUL is ignored); `retry`
//! with only ASCII digits sets the reconnection time; other fields are
//! ignored; an empty line dispatches the event, unless no `data` came; an
//! event cut off by the end of the stream is not dispatched.
//!
//! A hostile or broken server cannot make it hold unbounded memory: a line,
//! or an event's data, longer than [`SseStream::max_len`] (default
//! [`MAX_LEN`], 1 MiB) ends the stream with [`SseError::TooLong`].
//!
//! ```
//! use std::convert::Infallible;
//! use tenacious::sse::{sse, SseItem};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use futures_util::StreamExt;
//! let body = futures_util::stream::iter([
//!     Ok::<_, Infallible>(&b": ping\n\nid: 7\nevent: delta\ndata: {\"text\":"[..]),
//!     Ok(&b"\"Hel\"}\n\n"[..]),
//! ]);
//! let items: Vec<SseItem> = sse(body).map(Result::unwrap).collect().await;
//! assert_eq!(items[0], SseItem::Comment(" ping".into()));
//! let SseItem::Event(event) = &items[1] else { panic!() };
//! assert_eq!((event.event.as_str(), event.data.as_str()), ("delta", "{\"text\":\"Hel\"}"));
//! assert_eq!(event.id.as_deref(), Some("7"));
//! # }
//! ```
pub mod anthropic;
pub mod openai;
mod parse;
mod provider;

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_core::Stream;
use pin_project_lite::pin_project;

use crate::stream::{ItemKind, StreamItem};
use crate::{Classify, ErrorClass};
use parse::{BOM, Line, field, split_lines, strip_bom};

/// The default bound of a line and of an event's data: 1 MiB.
pub const MAX_LEN: usize = 1 << 20;

/// Why an [`SseStream`] ended with an error.
///
/// ```
/// use std::io;
/// use tenacious::sse::SseError;
/// use tenacious::{Classify, ErrorClass};
///
/// let cut: SseError<io::Error> = SseError::Body(io::Error::from(io::ErrorKind::ConnectionReset));
/// assert_eq!(cut.classify(), ErrorClass::Transient);
/// let huge: SseError<io::Error> = SseError::TooLong { limit: 1 << 20 };
/// assert_eq!(huge.classify(), ErrorClass::Fatal);
/// ```
#[derive(Debug)]
pub enum SseError<E> {
    /// The body's own error (a connection cut, a timeout).
    Body(E),
    /// A line, or an event's data, ran past the bound: not an event
    /// stream a client can read, whatever it is.
    TooLong {
        /// The bound, in bytes.
        limit: usize,
    },
}

impl<E: fmt::Display> fmt::Display for SseError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Body(error) => write!(f, "event stream: {error}"),
            Self::TooLong { limit } => {
                write!(f, "event stream: a line or an event over {limit} bytes")
            }
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for SseError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Body(error) => Some(error),
            Self::TooLong { .. } => None,
        }
    }
}

/// The body's error classifies as itself (class, hint, variant, server
/// hint, signals); an over-long line as `Fatal`, variant `"TooLong"` (an
/// endpoint that does not speak SSE is a fault to fix, not to retry).
#[cfg(feature = "sse")] // on the item too, for its feature badge where it is re-exported
impl<E: Classify> Classify for SseError<E> {
    fn classify(&self) -> ErrorClass {
        match self {
            Self::Body(error) => error.classify(),
            Self::TooLong { .. } => ErrorClass::Fatal,
        }
    }

    fn variant(&self) -> &'static str {
        match self {
            Self::Body(error) => error.variant(),
            Self::TooLong { .. } => "TooLong",
        }
    }

    /// The body's error: every method not written here is its.
    fn inner(&self) -> Option<&dyn Classify> {
        match self {
            Self::Body(error) => Some(error),
            Self::TooLong { .. } => None,
        }
    }
}

/// One item of a server-sent event stream: an event, or a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    /// An event (progress, when its data is content).
    Event(SseEvent),
    /// A comment line, without its leading `:`: what servers send to keep
    /// the connection alive (liveness, not progress).
    Comment(String),
}

/// A dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct SseEvent {
    /// Its type: the last `event` field, `message` when none.
    pub event: String,
    /// Its `data` lines, joined with `\n`.
    pub data: String,
    /// The last event id when it was dispatched: the last `id` field of
    /// the stream so far (what a reconnection sends as `Last-Event-ID`),
    /// `None` before any, and after an empty `id` field, which resets it
    /// (the standard's empty last event id, never sent).
    pub id: Option<String>,
    /// The reconnection time the server asked for in this event's
    /// `retry` field, if any.
    pub retry: Option<Duration>,
}

#[cfg(feature = "sse")]
/// A comment is a keepalive; an event is as [`SseEvent`]'s impl says.
impl StreamItem for SseItem {
    fn kind(&self) -> ItemKind {
        match self {
            Self::Comment(_) => ItemKind::Keepalive,
            Self::Event(event) => event.kind(),
        }
    }

    fn id(&self) -> Option<&str> {
        match self {
            Self::Comment(_) => None,
            Self::Event(event) => event.id(),
        }
    }

    /// Its size and its strings' lengths.
    fn size(&self) -> usize {
        let strings = match self {
            Self::Comment(text) => text.len(),
            Self::Event(event) => sse_strings(event),
        };
        std::mem::size_of_val(self).saturating_add(strings)
    }
}

#[cfg(feature = "sse")]
/// The lengths of an event's strings.
fn sse_strings(event: &SseEvent) -> usize {
    let id = event.id.as_ref().map_or(0, String::len);
    event
        .event
        .len()
        .saturating_add(event.data.len())
        .saturating_add(id)
}

#[cfg(feature = "sse")]
/// An event of type `ping` is a keepalive, every other one content; its id
/// is its SSE id.
impl StreamItem for SseEvent {
    fn kind(&self) -> ItemKind {
        if self.event == "ping" {
            ItemKind::Keepalive
        } else {
            ItemKind::Content
        }
    }

    fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// Its size and its strings' lengths.
    fn size(&self) -> usize {
        std::mem::size_of_val(self).saturating_add(sse_strings(self))
    }
}

pin_project! {
    /// The stream of [`sse`].
    #[derive(Debug)]
    #[must_use = "streams do nothing unless polled"]
    pub struct SseStream<S> {
        #[pin]
        inner: S,
        // Bytes of a line not ended yet.
        line: Vec<u8>,
        // Lines ended and not yet parsed, with their end: parsed one at a
        // time, so a chunk of many events yields them one by one.
        pending: Vec<u8>,
        at: usize,
        // The event being read.
        event: String,
        data: String,
        has_data: bool,
        retry: Option<Duration>,
        // The last event id buffer (the last `id` field so far), and the
        // last event id of the events dispatched (set from the buffer at
        // each dispatch, as the standard's last event ID string).
        last_id: Option<String>,
        dispatched_id: Option<String>,
        reconnect: Option<Duration>,
        // A CR ended the last line: an LF first in the next chunk is
        // the rest of that end of line.
        after_cr: bool,
        // Whether the first bytes were looked at for a byte-order mark.
        started: bool,
        // How many bytes of a byte-order mark the body began with so far,
        // when its first chunks were too short to tell.
        bom: u8,
        done: bool,
        max_len: usize,
    }
}

/// Parses the server-sent events of `body`, a stream of byte chunks.
/// Its errors pass through as they come, as [`SseError::Body`]; the end
/// of the body ends the stream (an event not finished by an empty line is
/// dropped).
pub fn sse<S, B, E>(body: S) -> SseStream<S>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    SseStream {
        inner: body,
        line: Vec::new(),
        pending: Vec::new(),
        at: 0,
        event: String::new(),
        data: String::new(),
        has_data: false,
        retry: None,
        last_id: None,
        dispatched_id: None,
        reconnect: None,
        after_cr: false,
        started: false,
        bom: 0,
        done: false,
        max_len: MAX_LEN,
    }
}

impl<S> SseStream<S> {
    /// Bounds a line, and an event's data, to `max_len` bytes (default
    /// [`MAX_LEN`]): past it the stream ends with [`SseError::TooLong`].
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use tenacious::sse::{sse, SseError};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use futures_util::StreamExt;
    /// let body = futures_util::stream::iter([Ok::<_, Infallible>(&[b'x'; 100][..])]);
    /// let mut events = sse(body).max_len(64);
    /// assert!(matches!(events.next().await, Some(Err(SseError::TooLong { limit: 64 }))));
    /// assert!(events.next().await.is_none());
    /// # }
    /// ```
    pub fn max_len(self, max_len: usize) -> Self {
        Self { max_len, ..self }
    }

    /// The last event id of the events dispatched so far: the value of
    /// the last `id` field before the blank line that ended the last event
    /// (or the last blank line), as the standard's last event ID string —
    /// what a reconnection sends as `Last-Event-ID`. An `id` field of an
    /// event the end of the body cut off is not in it (the server would
    /// skip an event never received), nor is an empty one, which resets
    /// it to `None`.
    ///
    /// ```
    /// use std::convert::Infallible;
    /// use tenacious::sse::sse;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use futures_util::StreamExt;
    /// let body = futures_util::stream::iter([Ok::<_, Infallible>(&b"id: 1\ndata: a\n\nid: 2\ndata: b"[..])]);
    /// let mut events = sse(body);
    /// while events.next().await.is_some() {}
    /// // The event of id 2 was cut off by the end of the body.
    /// assert_eq!(events.last_event_id(), Some("1"));
    /// # }
    /// ```
    #[must_use]
    pub fn last_event_id(&self) -> Option<&str> {
        self.dispatched_id.as_deref()
    }

    /// The reconnection time the server last asked for (a `retry` field,
    /// with an event or without), if any.
    #[must_use]
    pub const fn reconnection_time(&self) -> Option<Duration> {
        self.reconnect
    }
}

impl<S, B, E> Stream for SseStream<S>
where
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    type Item = Result<SseItem, SseError<E>>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        loop {
            // The lines already split off, one at a time.
            while *this.at < this.pending.len() {
                let rest = &this.pending[*this.at..];
                let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                let line = String::from_utf8_lossy(&rest[..end]).into_owned();
                *this.at += end + 1;
                if line.is_empty() {
                    // The dispatch step sets the last event id string from
                    // the buffer, with data or without.
                    this.dispatched_id.clone_from(this.last_id);
                }
                let outcome = field(
                    &line,
                    this.event,
                    this.data,
                    this.has_data,
                    this.retry,
                    this.last_id,
                );
                if let Some(retry) = *this.retry {
                    *this.reconnect = Some(retry);
                }
                match outcome {
                    Line::Nothing => {}
                    Line::Comment(text) => return Poll::Ready(Some(Ok(SseItem::Comment(text)))),
                    Line::Dispatch(event) => return Poll::Ready(Some(Ok(SseItem::Event(event)))),
                }
            }
            this.pending.clear();
            *this.at = 0;
            if *this.done {
                return Poll::Ready(None);
            }
            match ready!(this.inner.as_mut().poll_next(cx)) {
                Some(Ok(chunk)) => {
                    let mut bytes = chunk.as_ref();
                    if !*this.started {
                        // A byte-order mark, which chunks may split: its
                        // bytes are held until they make one (dropped) or
                        // turn out not to (the body's first bytes).
                        let (held, rest) = strip_bom(bytes, this.bom);
                        if usize::from(*this.bom) < BOM.len() && rest.is_empty() && held.is_empty()
                        {
                            continue;
                        }
                        *this.started = true;
                        split_lines(held, this.line, this.pending, this.after_cr);
                        bytes = rest;
                    }
                    split_lines(bytes, this.line, this.pending, this.after_cr);
                    if this.line.len() > *this.max_len || this.data.len() > *this.max_len {
                        *this.done = true;
                        this.line.clear();
                        this.data.clear();
                        this.pending.clear();
                        let limit = *this.max_len;
                        return Poll::Ready(Some(Err(SseError::TooLong { limit })));
                    }
                }
                Some(Err(error)) => return Poll::Ready(Some(Err(SseError::Body(error)))),
                None => {
                    // An unfinished line and event are dropped.
                    *this.done = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `chunks` to the end, synchronously (the stream never waits).
    fn parse(chunks: &[&[u8]]) -> Vec<SseItem> {
        let body = futures_util::stream::iter(
            chunks
                .iter()
                .map(|chunk| Ok::<_, std::convert::Infallible>(*chunk)),
        );
        let mut stream = std::pin::pin!(sse(body));
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut items = Vec::new();
        loop {
            match stream.as_mut().poll_next(&mut cx) {
                Poll::Ready(Some(Ok(item))) => items.push(item),
                Poll::Ready(None) => return items,
                Poll::Ready(Some(Err(SseError::Body(never)))) => match never {},
                Poll::Ready(Some(Err(error))) => panic!("{error}"),
                Poll::Pending => unreachable!("an iterator's stream never waits"),
            }
        }
    }

    fn event(kind: &str, data: &str, id: Option<&str>) -> SseItem {
        SseItem::Event(SseEvent {
            event: kind.to_owned(),
            data: data.to_owned(),
            id: id.map(str::to_owned),
            retry: None,
        })
    }

    #[test]
    fn the_standard_s_examples() {
        // "data" lines join with a newline; a field without a colon is a
        // name with an empty value (an empty id resets the last event id:
        // `None`); the last event, unended, is dropped.
        assert_eq!(
            parse(&[b"data: YHOO\ndata: +2\ndata: 10\n\n"]),
            [event("message", "YHOO\n+2\n10", None)]
        );
        assert_eq!(
            parse(&[b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n"]),
            [
                SseItem::Comment(" test stream".into()),
                event("message", "first event", Some("1")),
                event("message", "second event", None),
            ]
        );
        assert_eq!(
            parse(&[b"data\n\ndata\ndata\n\ndata:"]),
            [event("message", "", None), event("message", "\n", None)]
        );
        assert_eq!(
            parse(&[b"data:test\n\ndata: test\n\n"]),
            [
                event("message", "test", None),
                event("message", "test", None)
            ]
        );
    }

    #[test]
    fn every_end_of_line_and_a_crlf_split_across_chunks() {
        let expected = [
            event("delta", "a", Some("1")),
            event("delta", "b", Some("1")),
        ];
        for body in [
            &b"id: 1\nevent: delta\ndata: a\n\nevent: delta\ndata: b\n\n"[..],
            b"id: 1\r\nevent: delta\r\ndata: a\r\n\r\nevent: delta\r\ndata: b\r\n\r\n",
            b"id: 1\revent: delta\rdata: a\r\revent: delta\rdata: b\r\r",
        ] {
            // Every split into two chunks, and one byte at a time.
            for at in 0..=body.len() {
                assert_eq!(
                    parse(&[&body[..at], &body[at..]]),
                    expected,
                    "split at {at}"
                );
            }
            let bytes: Vec<&[u8]> = body.chunks(1).collect();
            assert_eq!(parse(&bytes), expected);
        }
    }

    #[test]
    fn a_byte_order_mark_retry_and_unknown_fields() {
        let items = parse(&[b"\xEF\xBB\xBFretry: 1500\nfoo: bar\nretry: 1x\ndata: x\n\n"]);
        assert_eq!(
            items,
            [SseItem::Event(SseEvent {
                event: "message".into(),
                data: "x".into(),
                id: None,
                retry: Some(Duration::from_millis(1500)),
            })]
        );
        // An id holding NUL is ignored; an event without data is none.
        assert_eq!(
            parse(&[b"id: 3\n\nid: a\0b\nevent: e\n\ndata: y\n\n"]),
            [event("message", "y", Some("3"))]
        );
    }

    #[test]
    fn a_line_or_data_past_the_bound_ends_the_stream_with_an_error() {
        let body = futures_util::stream::iter([
            Ok::<_, std::convert::Infallible>(&b"data: a\n\n"[..]),
            Ok(&b"data: 0123456789\ndata: 0123456789\n"[..]),
            Ok(&b"data: more\n\n"[..]),
        ]);
        let mut stream = std::pin::pin!(sse(body).max_len(16));
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut next = || stream.as_mut().poll_next(&mut cx);
        assert!(matches!(next(), Poll::Ready(Some(Ok(SseItem::Event(_))))));
        assert!(matches!(
            next(),
            Poll::Ready(Some(Err(SseError::TooLong { limit: 16 })))
        ));
        assert!(matches!(next(), Poll::Ready(None)));
    }

    #[test]
    fn invalid_utf8_is_replaced_never_a_panic() {
        assert_eq!(
            parse(&[b"data: \xFF\xFE\n\n"]),
            [event("message", "\u{FFFD}\u{FFFD}", None)]
        );
    }

    #[test]
    fn comments_and_pings_are_keepalives() {
        assert_eq!(SseItem::Comment(" ping".into()).kind(), ItemKind::Keepalive);
        let ping = SseEvent {
            event: "ping".into(),
            ..SseEvent::default()
        };
        assert_eq!(ping.kind(), ItemKind::Keepalive);
        let delta = SseEvent {
            event: "content_block_delta".into(),
            id: Some("4".into()),
            ..SseEvent::default()
        };
        assert_eq!(SseItem::Event(delta.clone()).kind(), ItemKind::Content);
        assert_eq!(SseItem::Event(delta).id(), Some("4"));
    }
}
