//! A resumed stream never repeats an item and never hides a cut: whatever
//! point its source replays from (the start, the middle, the last item
//! delivered, or after it, as `Last-Event-ID` asks), every item reaches
//! the consumer once, in order; and a resumed attempt whose source ends
//! cleanly before it caught up with the consumer is a failed attempt,
//! retried by the policy, or the stream's last item when none is left.
//! In-memory sources, on tokio's paused clock.
use std::cell::RefCell;
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};
use tenacious::stream::{ItemKind, ResumePoint, StreamItem};
use tenacious::{Classify, Elapsed, Failure, Jitter, Limit, Policy, StopReason};

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum Fault {
    /// The connection dropped mid-answer.
    #[classify(transient)]
    Reset,
    /// A limit of the stream ran out.
    #[classify(transient)]
    Stalled(Limit),
}

impl From<Elapsed> for Fault {
    fn from(elapsed: Elapsed) -> Self {
        Fault::Stalled(elapsed.which())
    }
}

/// An item: its text, its id (if any) and its kind.
#[derive(Debug, Clone, PartialEq)]
struct Event {
    text: String,
    id: Option<String>,
    kind: ItemKind,
}

impl StreamItem for Event {
    fn kind(&self) -> ItemKind {
        self.kind
    }

    fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// The content item of id `n`, whose text is `n` too.
fn token(n: u32) -> Result<Event, Fault> {
    named(&n.to_string(), &n.to_string())
}

/// Content of text `text` and id `id`.
fn named(text: &str, id: &str) -> Result<Event, Fault> {
    Ok(Event {
        text: text.to_owned(),
        id: Some(id.to_owned()),
        kind: ItemKind::Content,
    })
}

/// An item without an id.
fn plain(text: &str, kind: ItemKind) -> Result<Event, Fault> {
    Ok(Event {
        text: text.to_owned(),
        id: None,
        kind,
    })
}

fn tokens(range: std::ops::RangeInclusive<u32>) -> Vec<Result<Event, Fault>> {
    range.map(token).collect()
}

/// `items`, then the connection drops.
fn then_cut(mut items: Vec<Result<Event, Fault>>) -> Vec<Result<Event, Fault>> {
    items.push(Err(Fault::Reset));
    items
}

const RESUMED: Policy = Policy::new()
    .max(4)
    .base(Duration::from_millis(10))
    .jitter(Jitter::None)
    .resume(true);

/// What a stream gave its consumer, and where each attempt started.
struct Run {
    items: Vec<Event>,
    failure: Option<Failure<Fault>>,
    points: Vec<ResumePoint>,
}

impl Run {
    fn texts(&self) -> Vec<&str> {
        self.items.iter().map(|e| e.text.as_str()).collect()
    }
}

/// Streams under `policy` from a source whose attempts send `attempts`,
/// in order (an attempt past them is a test failure).
async fn stream_of(policy: Policy, attempts: Vec<Vec<Result<Event, Fault>>>) -> Run {
    let points = RefCell::new(Vec::new());
    let out: Vec<Result<Event, Failure<Fault>>> = policy
        .stream(|resume: &ResumePoint| {
            let n = {
                let mut points = points.borrow_mut();
                points.push(resume.clone());
                points.len()
            };
            let items = attempts
                .get(n - 1)
                .unwrap_or_else(|| panic!("attempt {n} opened, {} scripted", attempts.len()))
                .clone();
            async move { Ok::<BoxStream<'static, _>, Fault>(stream::iter(items).boxed()) }
        })
        .collect()
        .await;
    let mut items = Vec::new();
    let mut failure = None;
    for (i, item) in out.into_iter().enumerate() {
        assert!(failure.is_none(), "item {i} after the failure");
        match item {
            Ok(event) => items.push(event),
            Err(f) => failure = Some(f),
        }
    }
    Run {
        items,
        failure,
        points: points.into_inner(),
    }
}

fn texts(range: std::ops::RangeInclusive<u32>) -> Vec<String> {
    range.map(|n| n.to_string()).collect()
}

/// 1..=10 delivered, then a cut; the second attempt sends `second`:
/// every one of 1..=15 comes once, from two attempts, the second resumed
/// after the 10 items, at id 10.
async fn resumed_after_ten(second: Vec<Result<Event, Fault>>) {
    let run = stream_of(RESUMED, vec![then_cut(tokens(1..=10)), second]).await;
    assert!(run.failure.is_none(), "{:?}", run.failure);
    assert_eq!(run.texts(), texts(1..=15), "each item once, in order");
    assert_eq!(run.points.len(), 2);
    assert_eq!(
        (run.points[1].delivered(), run.points[1].last_event_id()),
        (10, Some("10"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_replay_from_the_middle_repeats_nothing() {
    // The issue: a server that sends 6..10 again after 1..10 were delivered.
    resumed_after_ten(tokens(6..=15)).await;
}

#[tokio::test(start_paused = true)]
async fn a_replay_from_the_start_repeats_nothing() {
    resumed_after_ten(tokens(1..=15)).await;
}

#[tokio::test(start_paused = true)]
async fn a_replay_from_the_last_item_delivered_repeats_nothing() {
    resumed_after_ten(tokens(10..=15)).await;
}

#[tokio::test(start_paused = true)]
async fn a_source_that_goes_on_after_the_last_id_loses_nothing() {
    resumed_after_ten(tokens(11..=15)).await;
}

#[tokio::test(start_paused = true)]
async fn a_resumed_attempt_that_ends_before_catching_up_is_retried() {
    // The issue: a resumed source that restarts and ends (cleanly) before
    // it reaches the last delivered id. Its answer is cut: the attempt
    // failed, and the next one resumes from the same point.
    let run = stream_of(
        RESUMED,
        vec![
            then_cut(tokens(1..=10)),
            tokens(1..=5),
            Vec::new(),
            tokens(6..=15),
        ],
    )
    .await;
    assert!(run.failure.is_none(), "{:?}", run.failure);
    assert_eq!(run.texts(), texts(1..=15));
    assert_eq!(
        run.points.len(),
        4,
        "two attempts that ended short, retried"
    );
    for point in &run.points[1..] {
        assert_eq!((point.delivered(), point.last_event_id()), (10, Some("10")));
    }
}

#[tokio::test(start_paused = true)]
async fn a_resumed_attempt_that_ends_before_catching_up_with_no_retry_left_ends_the_stream_in_error()
 {
    let run = stream_of(
        RESUMED.max(2),
        vec![then_cut(tokens(1..=10)), tokens(1..=5)],
    )
    .await;
    assert_eq!(run.texts(), texts(1..=10));
    let failure = run.failure.expect("a cut answer is no success");
    assert_eq!(*failure.last(), Fault::Stalled(Limit::CatchUp));
    assert_eq!(failure.delivered(), 10);
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(failure.attempts().len(), 2);
    assert_eq!(failure.attempts()[1].variant, "Stalled");
    // Where a re-issued call picks up: 10 items, the last id 10.
    assert_eq!(failure.last_event_id(), Some("10"));
    let point = tenacious::stream::ResumePoint::after(&failure);
    assert_eq!((point.delivered(), point.last_event_id()), (10, Some("10")));
}

#[tokio::test(start_paused = true)]
async fn items_without_an_id_after_the_last_id_are_not_repeated() {
    // The consumer had `x` after id 2; a replay from the start sends it
    // again after 2 (dropped), then `y`, new.
    let first = then_cut(vec![token(1), token(2), plain("x", ItemKind::Content)]);
    let second = vec![
        token(1),
        plain("between", ItemKind::Content),
        token(2),
        plain("x", ItemKind::Content),
        plain("y", ItemKind::Content),
        token(3),
    ];
    let run = stream_of(RESUMED, vec![first, second]).await;
    assert!(run.failure.is_none(), "{:?}", run.failure);
    assert_eq!(run.texts(), ["1", "2", "x", "y", "3"]);
}

#[tokio::test(start_paused = true)]
async fn content_without_an_id_before_a_resumed_attempts_first_id_is_new() {
    // A server that goes on after the last id, whose next event has none
    // (a `message_stop`): delivered; its preamble is not, the consumer has it.
    let first = then_cut(vec![plain("start", ItemKind::Preamble), token(1), token(2)]);
    let second = vec![
        plain("start", ItemKind::Preamble),
        plain("stop", ItemKind::Content),
    ];
    let run = stream_of(RESUMED, vec![first, second]).await;
    assert!(run.failure.is_none(), "{:?}", run.failure);
    assert_eq!(run.texts(), ["start", "1", "2", "stop"]);
}

#[tokio::test(start_paused = true)]
async fn ids_that_go_down_are_no_positions_and_the_last_one_must_come_again() {
    // `c` after `k`: the ids are no positions. A replay from the middle
    // still repeats nothing (items are dropped until the last id, `x`).
    let first = then_cut(vec![named("k", "k"), named("c", "c"), named("x", "x")]);
    let replay = vec![named("c", "c"), named("x", "x"), named("a", "a")];
    let run = stream_of(RESUMED, vec![first.clone(), replay]).await;
    assert!(run.failure.is_none(), "{:?}", run.failure);
    assert_eq!(run.texts(), ["k", "c", "x", "a"]);

    // A source that never sends `x` again cannot be told from one that
    // replays: the attempt fails, as a cut, rather than guess.
    let cut = stream_of(RESUMED.max(2), vec![first, vec![named("a", "a")]]).await;
    assert_eq!(cut.texts(), ["k", "c", "x"]);
    let failure = cut.failure.expect("no catch-up is a failure");
    assert_eq!(*failure.last(), Fault::Stalled(Limit::CatchUp));
}

#[tokio::test(start_paused = true)]
async fn ids_compare_as_positions_across_lengths() {
    // `evt-9` before `evt-10`: a replay from `evt-8` after `evt-10` was
    // delivered drops 8 to 10, whatever their lengths.
    let id = |n: u32| named(&n.to_string(), &format!("evt-{n}"));
    let first = then_cut((7..=10).map(id).collect());
    let second = (8..=12).map(id).collect();
    let run = stream_of(RESUMED, vec![first, second]).await;
    assert!(run.failure.is_none(), "{:?}", run.failure);
    assert_eq!(run.texts(), texts(7..=12));
}
