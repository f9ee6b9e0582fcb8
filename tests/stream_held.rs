//! Nothing a server sends grows a retried stream's memory without bound:
//! the preamble it holds back before the first content item is bounded by
//! count (`Policy::max_held`, 1 024 by default) and by bytes
//! (`Policy::max_held_bytes`, 1 MiB, as `StreamItem::size` counts them).
//! A source past either stops the stream with one failure that says how
//! many items were held, never retried. Counted in items, on tokio's
//! paused clock, over in-memory sources.
use std::cell::Cell;
use std::time::Duration;

use futures_util::stream::{self, LocalBoxStream, StreamExt};
use tenacious::stream::{ItemKind, ResumePoint, StreamItem};
use tenacious::{Classify, Elapsed, ErrorClass, Failure, Jitter, Limit, Policy, StopReason};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Reset,
    Stalled(Elapsed),
}

/// Every fault transient, a stream's own limits too: the stream stops at
/// its bound whatever the class says.
impl Classify for Fault {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<Elapsed> for Fault {
    fn from(elapsed: Elapsed) -> Self {
        Fault::Stalled(elapsed)
    }
}

/// A preamble item of `bytes` bytes, or a content item.
#[derive(Debug, Clone, PartialEq)]
enum Chunk {
    Meta(Vec<u8>),
    Token,
}

impl StreamItem for Chunk {
    fn kind(&self) -> ItemKind {
        match self {
            Chunk::Meta(_) => ItemKind::Preamble,
            Chunk::Token => ItemKind::Content,
        }
    }

    fn size(&self) -> usize {
        match self {
            Chunk::Meta(bytes) => bytes.len(),
            Chunk::Token => 0,
        }
    }
}

fn metas(n: usize, bytes: usize) -> Vec<Result<Chunk, Fault>> {
    (0..n).map(|_| Ok(Chunk::Meta(vec![0; bytes]))).collect()
}

const POLICY: Policy = Policy::new()
    .max(3)
    .base(Duration::from_millis(10))
    .jitter(Jitter::None);

/// What the consumer got, the items the sources yielded, and the opens.
struct Run {
    out: Vec<Result<Chunk, Failure<Fault>>>,
    read: usize,
    opens: usize,
}

/// Streams under `policy` from sources that send `attempts`, in order.
async fn stream_of(policy: Policy, attempts: &[Vec<Result<Chunk, Fault>>]) -> Run {
    let read = Cell::new(0);
    let opens = Cell::new(0);
    let out = policy
        .stream(|_: &ResumePoint| {
            opens.set(opens.get() + 1);
            let items = attempts[opens.get() - 1].clone();
            let read = &read;
            async move {
                let counted = stream::iter(items).inspect(move |_| read.set(read.get() + 1));
                Ok::<LocalBoxStream<'_, _>, Fault>(counted.boxed_local())
            }
        })
        .collect()
        .await;
    Run {
        out,
        read: read.get(),
        opens: opens.get(),
    }
}

#[tokio::test(start_paused = true)]
async fn ten_thousand_preamble_items_stop_the_stream_at_the_default_bound() {
    // The issue: a source that sends a preamble without end before any
    // content had every item held.
    let mut items = metas(10_000, 8);
    items.push(Ok(Chunk::Token));
    let run = stream_of(POLICY, &[items]).await;
    assert_eq!(run.out.len(), 1, "one failure, no item");
    let failure = run.out[0].as_ref().expect_err("stopped at the bound");
    assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
    assert_eq!((failure.delivered(), failure.attempts().len()), (0, 1));
    assert_eq!(run.opens, 1, "not retried");
    assert_eq!(run.read, 1_024 + 1, "read no further than the bound");
}

#[tokio::test(start_paused = true)]
async fn a_bound_of_100_holds_at_most_100_and_the_failure_says_so() {
    let policy = POLICY.max_held(100);
    let run = stream_of(policy, &[metas(10_000, 8)]).await;
    assert_eq!(run.out.len(), 1);
    let failure = run.out[0].as_ref().unwrap_err();
    let Fault::Stalled(held) = *failure.last() else {
        panic!("{failure:?}")
    };
    assert_eq!(held.which(), Limit::Held);
    assert_eq!(held.held(), Some(100));
    assert_eq!(held.classify(), ErrorClass::Invalid);
    assert_eq!(
        held.to_string(),
        "stream held 100 preamble items before its first content, as many as its policy allows"
    );
    assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
    assert_eq!((run.opens, run.read), (1, 101));
}

#[tokio::test(start_paused = true)]
async fn the_bytes_held_are_bounded_too() {
    // 100-byte items under 1 000 bytes: ten are held, the eleventh stops it.
    let policy = POLICY.max_held_bytes(1_000);
    let run = stream_of(policy, &[metas(50, 100)]).await;
    let failure = run.out[0].as_ref().unwrap_err();
    let Fault::Stalled(held) = *failure.last() else {
        panic!("{failure:?}")
    };
    assert_eq!((held.which(), held.held()), (Limit::Held, Some(10)));
    assert_eq!((run.opens, run.read, run.out.len()), (1, 11, 1));
}

#[tokio::test(start_paused = true)]
async fn a_preamble_within_the_bounds_is_delivered_and_each_attempt_holds_afresh() {
    // 60 held, then the attempt fails: dropped with it. The next holds 100,
    // the bound, and delivers them before its first token.
    let policy = POLICY.max_held(100);
    let mut second = metas(100, 8);
    second.push(Ok(Chunk::Token));
    let mut first = metas(60, 8);
    first.push(Err(Fault::Reset));
    let run = stream_of(policy, &[first, second]).await;
    assert_eq!(run.opens, 2);
    assert_eq!(run.out.len(), 101);
    assert!(
        run.out[..100]
            .iter()
            .all(|i| matches!(i, Ok(Chunk::Meta(_))))
    );
    assert_eq!(run.out[100].as_ref().ok(), Some(&Chunk::Token));
}

#[tokio::test(start_paused = true)]
async fn a_bound_of_zero_holds_no_preamble() {
    let policy = POLICY.max_held(0);
    let mut items = metas(1, 8);
    items.push(Ok(Chunk::Token));
    let run = stream_of(policy, &[items]).await;
    let failure = run.out[0].as_ref().unwrap_err();
    let Fault::Stalled(held) = *failure.last() else {
        panic!("{failure:?}")
    };
    assert_eq!(held.held(), Some(0));
    assert_eq!(run.out.len(), 1);
}

#[test]
fn the_bounds_default_to_1024_items_and_1_mib() {
    assert_eq!(Policy::new().get_max_held(), 1_024);
    assert_eq!(Policy::new().get_max_held_bytes(), 1 << 20);
}
