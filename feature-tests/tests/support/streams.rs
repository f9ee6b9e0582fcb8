//! Retried streams that meet every stream timer, on tokio's paused clock:
//! what the stream statistics, events and metrics are checked against,
//! driven through `Policy::stream` itself.
use std::time::Duration;

use futures_util::stream::{self, BoxStream, StreamExt};
use tenacious::stats::CallStats;
use tenacious::{Classify, Elapsed, ErrorClass, Jitter, Policy};

#[derive(Debug)]
pub struct Stalled;

impl Classify for Stalled {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

impl From<Elapsed> for Stalled {
    fn from(_: Elapsed) -> Self {
        Stalled
    }
}

type Source = BoxStream<'static, Result<String, Stalled>>;

/// `first` after `after`, then `rest` one every `gap`, then nothing.
fn source(after: Duration, first: &str, rest: usize, gap: Duration) -> Source {
    let first = first.to_owned();
    let head = stream::once(async move {
        tokio::time::sleep(after).await;
        Ok(first)
    });
    let tail = stream::iter(0..rest).then(move |n| async move {
        tokio::time::sleep(gap).await;
        Ok(format!("t{n}"))
    });
    head.chain(tail).chain(stream::pending()).boxed()
}

/// Drains `policy.stream(open)` on a paused current-thread runtime (so
/// the thread's subscriber and recorder see it all).
fn drain(policy: &Policy, mut open: impl FnMut(u32) -> Source) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut attempt = 0;
        let items: Vec<_> = policy
            .stream(|_| {
                attempt += 1;
                let source = open(attempt);
                async move { Ok::<_, Stalled>(source) }
            })
            .collect()
            .await;
        assert!(items.last().is_some_and(Result::is_err), "it ends failed");
    });
}

/// One stream, with resume, that meets each timer once: attempt 1 sends
/// nothing (a `first_item` stall); attempt 2 sends its first item after
/// 1.25 s, one more, then nothing (an `idle` stall, after 2 items); the
/// resumed attempt 3 sends an item at once and one every 4 s, until the
/// deadline ends it at 20 s with 5 items delivered.
pub fn every_timer_once(stats: &'static CallStats) {
    let policy = Policy::new()
        .max(5)
        .base(Duration::from_millis(100))
        .jitter(Jitter::None)
        .first_item(Duration::from_secs(2))
        .idle(Duration::from_secs(5))
        .deadline(Duration::from_secs(20))
        .resume(true)
        .stats(stats);
    drain(&policy, |attempt| match attempt {
        1 => stream::pending().boxed(),
        2 => source(Duration::from_millis(1_250), "a", 1, Duration::ZERO),
        _ => source(Duration::ZERO, "c", 10, Duration::from_secs(4)),
    });
}

/// One stream without resume: its first item after 0.5 s, then nothing:
/// an `idle` stall after 1 item ends it with partial output.
pub fn cut_after_one(stats: &'static CallStats) {
    let policy = Policy::new()
        .first_item(Duration::from_secs(2))
        .idle(Duration::from_secs(5))
        .stats(stats);
    drain(&policy, |_| {
        source(Duration::from_millis(500), "a", 0, Duration::ZERO)
    });
}
