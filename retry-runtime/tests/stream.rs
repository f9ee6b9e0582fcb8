//! `Policy::stream` on tokio's paused clock, over in-memory sources: the
//! phases (open, first item, committed), the three timers, keepalives and
//! preambles, partial output and resume, refusals and statistics.
use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};
use tenacious_runtime::stats::CallStats;
use tenacious_runtime::stream::{ItemKind, ResumePoint, StreamItem};
use tenacious_runtime::{
    Attempt, Classify, Elapsed, ErrorClass, Failure, Jitter, Limit, Policy, RetryBudget, StopReason,
};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Overloaded,
    Reset,
    Invalid,
    Stalled(Limit),
}

impl Classify for Fault {
    fn classify(&self) -> ErrorClass {
        match self {
            Fault::Invalid => ErrorClass::Invalid,
            _ => ErrorClass::Transient,
        }
    }
    fn variant(&self) -> &'static str {
        match self {
            Fault::Overloaded => "Overloaded",
            Fault::Reset => "Reset",
            Fault::Invalid => "Invalid",
            Fault::Stalled(_) => "Stalled",
        }
    }
}

impl From<Elapsed> for Fault {
    fn from(elapsed: Elapsed) -> Self {
        Fault::Stalled(elapsed.which())
    }
}

/// An item of a model's stream.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Chunk {
    Start,
    Token(&'static str, u32),
    Ping,
}

impl StreamItem for Chunk {
    fn kind(&self) -> ItemKind {
        match self {
            Chunk::Start => ItemKind::Preamble,
            Chunk::Token(..) => ItemKind::Content,
            Chunk::Ping => ItemKind::Keepalive,
        }
    }
}

type Source = BoxStream<'static, Result<Chunk, Fault>>;

fn items(items: &[Result<Chunk, Fault>]) -> Source {
    stream::iter(items.to_vec()).boxed()
}

/// `items`, one every `gap`.
fn paced(items: &[Result<Chunk, Fault>], gap: Duration) -> Source {
    stream::iter(items.to_vec())
        .then(move |item| async move {
            tokio::time::sleep(gap).await;
            item
        })
        .boxed()
}

fn token(text: &'static str) -> Result<Chunk, Fault> {
    Ok(Chunk::Token(text, 0))
}

const fn fixed(max: u32) -> Policy {
    Policy::new()
        .max(max)
        .base(Duration::from_millis(100))
        .jitter(Jitter::None)
}

#[tokio::test(start_paused = true)]
async fn errors_before_the_first_item_are_retried_with_the_attempt_context() {
    static STATS: CallStats = CallStats::new("stream: retried before content");
    let policy = fixed(4).stats(&STATS);
    let seen = RefCell::new(Vec::new());
    let mut opens = 0;
    let start = Instant::now();
    let out: Vec<_> = policy
        .stream(|resume: &ResumePoint| {
            opens += 1;
            let opened = opens;
            seen.borrow_mut()
                .push((Attempt::current().unwrap().number(), resume.is_start()));
            async move {
                match opened {
                    // The open fails.
                    1 => Err(Fault::Reset),
                    // An in-band error before any content.
                    2 => Ok(items(&[Ok(Chunk::Start), Err(Fault::Overloaded)])),
                    _ => Ok(items(&[Ok(Chunk::Start), token("a"), token("b")])),
                }
            }
        })
        .collect()
        .await;
    // The preamble of the failed attempt is not shown: one `Start`.
    assert_eq!(
        out.into_iter().map(Result::unwrap).collect::<Vec<_>>(),
        [Chunk::Start, Chunk::Token("a", 0), Chunk::Token("b", 0)]
    );
    assert_eq!(*seen.borrow(), [(1, true), (2, true), (3, true)]);
    assert_eq!(start.elapsed(), Duration::from_millis(100 + 200));
    let stats = STATS.snapshot();
    assert_eq!(
        (stats.calls(), stats.attempts(), stats.recovered()),
        (1, 3, 1)
    );
    assert_eq!(stats.streams(), 1);
    assert_eq!(stats.first_item_mean(), Some(Duration::ZERO));
}

#[tokio::test(start_paused = true)]
async fn a_stall_before_the_first_item_is_retried_and_keepalives_do_not_count() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(100);
    static STATS: CallStats = CallStats::new("stream: stalls");
    let policy = fixed(3)
        .first_item(Duration::from_secs(2))
        .budget(&BUDGET)
        .stats(&STATS);
    let mut opens = 0;
    let start = Instant::now();
    let out: Vec<_> = policy
        .stream(|_: &ResumePoint| {
            opens += 1;
            let opened = opens;
            async move {
                Ok(match opened {
                    // Pings only: alive, but no first item.
                    1 => paced(&[Ok(Chunk::Ping); 10], Duration::from_millis(500)),
                    // Nothing at all.
                    2 => stream::pending().boxed(),
                    _ => items(&[token("x")]),
                })
            }
        })
        .collect()
        .await;
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].as_ref().ok(), Some(&Chunk::Token("x", 0)));
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(2000 + 100 + 2000 + 200)
    );
    // Each retry after a stall cost 10 tokens (a timed-out attempt's
    // price); the success gave back what the last one took.
    assert_eq!(BUDGET.balance(), 90);
    let stats = STATS.snapshot();
    assert_eq!((stats.stalls_of(Limit::FirstItem), stats.stalls()), (2, 2));
    assert_eq!(
        stats.first_item_max(),
        Some(Duration::ZERO),
        "timed per attempt"
    );
}

#[tokio::test(start_paused = true)]
async fn a_failure_after_commit_ends_the_stream_saying_how_many_were_delivered() {
    static STATS: CallStats = CallStats::new("stream: partial");
    let policy = fixed(3).stats(&STATS);
    let mut opens = 0;
    let out: Vec<_> = policy
        .stream(|_: &ResumePoint| {
            opens += 1;
            async {
                Ok(items(&[
                    token("1"),
                    token("2"),
                    Ok(Chunk::Ping),
                    token("3"),
                    Err(Fault::Reset),
                    token("4"),
                ]))
            }
        })
        .collect()
        .await;
    assert_eq!(opens, 1, "never reopened");
    assert_eq!(out.len(), 4);
    let failure: &Failure<Fault> = out[3].as_ref().unwrap_err();
    assert_eq!(failure.delivered(), 3);
    assert_eq!(failure.stop_reason(), StopReason::PartialOutput);
    assert_eq!(*failure.last(), Fault::Reset);
    assert_eq!(
        failure.to_string(),
        "gave up after 1 attempt (partial output) with 3 items delivered: transient Reset"
    );
    let stats = STATS.snapshot();
    assert_eq!((stats.calls(), stats.attempts()), (1, 1));
    assert_eq!((stats.partial_failures(), stats.partial_items()), (1, 3));
    assert_eq!(stats.gave_up(StopReason::PartialOutput), 1);
}

/// A source of the tokens 1..=10 with ids, from `from` on, cut after `cut`
/// items if given.
fn numbered(from: u32, cut: Option<usize>) -> BoxStream<'static, Result<Numbered, Fault>> {
    let mut out: Vec<Result<Numbered, Fault>> = (from..=10).map(|n| Ok(Numbered(n))).collect();
    if let Some(cut) = cut {
        out.truncate(cut);
        out.push(Err(Fault::Reset));
    }
    stream::iter(out).boxed()
}

#[derive(Debug, Clone, PartialEq)]
struct Numbered(u32);

static IDS: [&str; 11] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"];

impl StreamItem for Numbered {
    fn id(&self) -> Option<&str> {
        Some(IDS[self.0 as usize])
    }
}

#[tokio::test(start_paused = true)]
async fn with_resume_every_item_comes_once_whatever_the_source_sends_again() {
    // How the source reconnects: from the start (ignoring the id), from
    // the last item delivered (inclusive), or after it (as SSE asks).
    static STATS: CallStats = CallStats::new("stream: resumed");
    for replay in ["start", "inclusive", "after"] {
        let policy = fixed(4).resume(true).stats(&STATS);
        let points = RefCell::new(Vec::new());
        let out: Vec<_> = policy
            .stream(|resume: &ResumePoint| {
                points.borrow_mut().push(resume.clone());
                let last: u32 = resume.last_event_id().map_or(0, |id| id.parse().unwrap());
                let from = match (replay, last) {
                    (_, 0) | ("start", _) => 1,
                    ("inclusive", n) => n,
                    (_, n) => n + 1,
                };
                let cut = (last == 0).then_some(3);
                async move { Ok(numbered(from, cut)) }
            })
            .collect()
            .await;
        let got: Vec<u32> = out.into_iter().map(|item| item.unwrap().0).collect();
        assert_eq!(got, (1..=10).collect::<Vec<_>>(), "{replay}");
        let points = points.borrow();
        assert_eq!(points.len(), 2);
        assert_eq!(
            (points[1].delivered(), points[1].last_event_id()),
            (3, Some("3"))
        );
    }
}

#[tokio::test(start_paused = true)]
async fn idle_times_a_committed_stream_out_and_pings_do_not_reset_it() {
    let policy = fixed(3).idle(Duration::from_secs(5));
    let start = Instant::now();
    let out: Vec<_> = policy
        .stream(|_: &ResumePoint| async {
            let mut chunks = vec![token("a")];
            chunks.extend([Ok(Chunk::Ping); 20]);
            Ok(paced(&chunks, Duration::from_secs(1)))
        })
        .collect()
        .await;
    assert_eq!(out[0].as_ref().ok(), Some(&Chunk::Token("a", 0)));
    let failure = out[1].as_ref().unwrap_err();
    assert_eq!(*failure.last(), Fault::Stalled(Limit::Idle));
    assert_eq!(failure.stop_reason(), StopReason::PartialOutput);
    // One second to the token, then five without progress.
    assert_eq!(start.elapsed(), Duration::from_secs(1 + 5));
}

#[tokio::test(start_paused = true)]
async fn the_deadline_ends_a_slow_stream() {
    let policy = fixed(3)
        .idle(Duration::from_secs(5))
        .deadline(Duration::from_secs(10));
    let start = Instant::now();
    let out: Vec<_> = policy
        .stream(|_: &ResumePoint| async { Ok(paced(&[token("t"); 100], Duration::from_secs(3))) })
        .collect()
        .await;
    assert_eq!(out.len(), 4, "three tokens in ten seconds, then the end");
    let failure = out[3].as_ref().unwrap_err();
    assert_eq!(*failure.last(), Fault::Stalled(Limit::Deadline));
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert_eq!(failure.delivered(), 3);
    assert_eq!(start.elapsed(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn an_error_not_retried_ends_the_stream_at_once() {
    let mut opens = 0;
    let out: Vec<_> = fixed(3)
        .stream(|_: &ResumePoint| {
            opens += 1;
            async { Ok(items(&[Err(Fault::Invalid)])) }
        })
        .collect()
        .await;
    assert_eq!(opens, 1);
    let failure = out[0].as_ref().unwrap_err();
    assert_eq!(
        (failure.stop_reason(), failure.delivered()),
        (StopReason::NotRetryable, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn a_stream_dropped_after_content_counts_as_a_success() {
    static STATS: CallStats = CallStats::new("stream: dropped");
    static BUDGET: RetryBudget = RetryBudget::with_capacity(100);
    let policy = fixed(3).stats(&STATS).budget(&BUDGET);
    let opens = AtomicU32::new(0);
    let mut tokens = Box::pin(policy.stream(|_: &ResumePoint| {
        let first = opens.fetch_add(1, Ordering::Relaxed) == 0;
        async move {
            if first {
                Err(Fault::Reset)
            } else {
                Ok(items(&[token("a"), token("b")]))
            }
        }
    }));
    assert_eq!(
        tokens.next().await.unwrap().ok(),
        Some(Chunk::Token("a", 0))
    );
    assert!(BUDGET.balance() < 100, "the retry took tokens");
    drop(tokens);
    let stats = STATS.snapshot();
    assert_eq!((stats.calls(), stats.recovered()), (1, 1));
    assert_eq!(BUDGET.balance(), 100);
}

#[tokio::test(start_paused = true)]
async fn limits_past_what_the_clock_holds_never_panic() {
    let policy = fixed(2)
        .first_item(Duration::MAX)
        .idle(Duration::MAX)
        .deadline(Duration::MAX);
    let out: Vec<_> = policy
        .stream(|_: &ResumePoint| async { Ok(items(&[token("a"), token("b")])) })
        .collect()
        .await;
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(Result::is_ok));
}

/// A source always ready with content never returns `Pending`, where the
/// timers are looked at: the deadline still ends it (looked at every 256
/// polls). Real time: a paused clock does not advance while the task is
/// never idle; the assertion is on the outcome only.
#[tokio::test]
async fn the_deadline_ends_a_source_that_is_always_ready() {
    let policy = fixed(1).deadline(Duration::from_millis(20));
    let stream = policy.stream(|_: &ResumePoint| async {
        Ok::<_, Fault>(stream::repeat_with(|| token("t")).boxed())
    });
    let mut stream = std::pin::pin!(stream);
    let mut delivered = 0_u64;
    let failure = loop {
        match stream.next().await {
            Some(Ok(_)) => delivered += 1,
            Some(Err(failure)) => break failure,
            None => panic!("an endless source ended"),
        }
    };
    assert_eq!(failure.stop_reason(), StopReason::Deadline);
    assert_eq!(failure.delivered(), delivered);
    assert!(stream.next().await.is_none());
}
