//! Routed streams: a target is left before its first content item by the
//! route's rules, and after it only for a target that continues from the
//! items delivered; counted on the paused clock. Each test names its
//! targets apart: a target name's guards and estimates are process-wide.
use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::{self, BoxStream};
use tenacious::route::{Route, RouteFailure, RouteStop, Target, TargetError, Then};
use tenacious::stream::{ItemKind, StreamItem};
use tenacious::{Breaker, Classify, Elapsed, ErrorClass, Limit, Policy, Reject, StopReason};
use tokio::time::Instant;

#[derive(Debug, Clone, PartialEq)]
enum Item {
    /// `role: assistant`, `message_start`: before the content.
    Start(&'static str),
    Token(String),
    Ping,
    /// A usage report after the content: metadata, as a preamble is.
    Usage(u64, u64),
}

impl StreamItem for Item {
    fn kind(&self) -> ItemKind {
        match self {
            Self::Start(_) | Self::Usage(..) => ItemKind::Preamble,
            Self::Token(_) => ItemKind::Content,
            Self::Ping => ItemKind::Keepalive,
        }
    }

    fn usage(&self) -> Option<tenacious::stream::Usage> {
        match self {
            Self::Usage(input, output) => Some(tenacious::stream::Usage::new(*input, *output)),
            _ => None,
        }
    }
}

#[derive(Debug)]
enum ChatError {
    Overloaded,
    Cut,
    ContentFilter,
    /// A target that rejects an assistant prefill.
    PrefillRejected,
    ContextLength,
    Timer(#[allow(dead_code, reason = "read in failures' Debug output")] Elapsed),
}

impl std::fmt::Display for ChatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self, f)
    }
}

impl From<Elapsed> for ChatError {
    fn from(elapsed: Elapsed) -> Self {
        Self::Timer(elapsed)
    }
}

impl Classify for ChatError {
    fn classify(&self) -> ErrorClass {
        match self {
            Self::Overloaded | Self::Cut | Self::Timer(_) => ErrorClass::Transient,
            Self::ContentFilter | Self::PrefillRejected | Self::ContextLength => {
                ErrorClass::Invalid
            }
        }
    }

    fn rejected(&self) -> Option<Reject> {
        match self {
            Self::ContentFilter => Some(Reject::ContentFilter),
            Self::ContextLength => Some(Reject::ContextLength),
            _ => None,
        }
    }
}

type Source = BoxStream<'static, Result<Item, ChatError>>;

fn tokens(words: &[&str]) -> Vec<Result<Item, ChatError>> {
    words
        .iter()
        .map(|w| Ok(Item::Token((*w).to_owned())))
        .collect()
}

/// A whole answer: its preamble, then its words.
fn answer(who: &'static str, words: &[&str]) -> Source {
    let mut items = vec![Ok(Item::Start(who))];
    items.extend(tokens(words));
    stream::iter(items).boxed()
}

/// An answer cut by `error` after `words`.
fn cut(who: &'static str, words: &[&str], error: ChatError) -> Source {
    let mut items = vec![Ok(Item::Start(who))];
    items.extend(tokens(words));
    items.push(Err(error));
    stream::iter(items).boxed()
}

/// The text of the items delivered.
fn text(items: &[Item]) -> String {
    items
        .iter()
        .filter_map(|item| match item {
            Item::Token(token) => Some(token.as_str()),
            _ => None,
        })
        .collect()
}

/// What a routed stream delivered, and how it ended.
async fn drain<S>(stream: S) -> (Vec<Item>, Option<RouteFailure<ChatError>>)
where
    S: futures_util::Stream<Item = Result<Item, RouteFailure<ChatError>>>,
{
    let mut items = Vec::new();
    let mut failure = None;
    let mut stream = std::pin::pin!(stream);
    while let Some(next) = stream.next().await {
        match next {
            Ok(item) => items.push(item),
            Err(end) => {
                assert!(failure.is_none(), "one failure ends the stream");
                failure = Some(end);
            }
        }
    }
    (items, failure)
}

const QUICK: Policy = Policy::new()
    .max(2)
    .base(Duration::from_millis(100))
    .first_item(Duration::from_secs(30));

#[tokio::test(start_paused = true)]
async fn before_its_first_content_a_stream_moves_to_the_next_target_without_a_repeated_preamble() {
    let route = Route::builder("rs-before")
        .target(Target::new("rs-before-a", "a").policy(QUICK))
        .target(Target::new("rs-before-b", "b").policy(QUICK))
        .build()
        .unwrap();
    let opens = RefCell::new(Vec::new());
    let routed = route.stream(|target, resume| {
        opens.borrow_mut().push(*target.data());
        assert!(!resume.is_continuation());
        let name = *target.data();
        async move {
            Ok(match name {
                // An in-band overload after its preamble, before content.
                "a" => cut("a", &[], ChatError::Overloaded),
                _ => answer("b", &["Hel", "lo"]),
            })
        }
    });
    let (items, failure) = drain(routed).await;
    assert!(failure.is_none());
    assert_eq!(
        items,
        vec![
            Item::Start("b"),
            Item::Token("Hel".into()),
            Item::Token("lo".into())
        ]
    );
    assert_eq!(*opens.borrow(), vec!["a", "a", "b"]);
}

#[tokio::test(start_paused = true)]
async fn served_by_and_tried_say_who_answered() {
    let route = Route::builder("rs-who")
        .target(Target::new("rs-who-a", "a").policy(QUICK.max(1)))
        .target(Target::new("rs-who-b", "b").policy(QUICK))
        .build()
        .unwrap();
    let mut routed = route.stream(|target, _| {
        let name = *target.data();
        async move {
            match name {
                "a" => Err(ChatError::Overloaded),
                _ => Ok(answer("b", &["hi"])),
            }
        }
    });
    assert_eq!(routed.served_by(), None);
    assert_eq!(routed.next().await.unwrap().unwrap(), Item::Start("b"));
    assert_eq!(routed.served_by(), Some("rs-who-b"));
    assert_eq!(routed.tried().len(), 1);
    assert_eq!(routed.tried()[0].target(), "rs-who-a");
    assert_eq!(routed.tried()[0].attempts(), 1);
    assert_eq!(routed.tried()[0].then(), Then::Next);
}

#[tokio::test(start_paused = true)]
async fn a_target_that_never_answers_is_left_after_one_attempt_at_its_first_item_limit() {
    let route = Route::builder("rs-silent")
        .target(Target::new("rs-silent-a", "a").policy(QUICK.max(3)))
        .target(Target::new("rs-silent-b", "b").policy(QUICK))
        .build()
        .unwrap();
    let opens = AtomicU32::new(0);
    let start = Instant::now();
    let routed = route.stream(|target, _| {
        let name = *target.data();
        if name == "a" {
            opens.fetch_add(1, Ordering::Relaxed);
        }
        async move {
            if name == "a" {
                // No headers, ever.
                std::future::pending::<()>().await;
            }
            Ok(answer("b", &["ok"]))
        }
    });
    let (items, failure) = drain(routed).await;
    assert!(failure.is_none());
    assert_eq!(text(&items), "ok");
    assert_eq!(opens.load(Ordering::Relaxed), 1, "left after one attempt");
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(30),
        "the written 30 s limit"
    );
}

#[tokio::test(start_paused = true)]
async fn a_target_that_only_pings_is_silent_too() {
    let route = Route::builder("rs-pings")
        .target(Target::new("rs-pings-a", "a").policy(QUICK.max(3)))
        .target(Target::new("rs-pings-b", "b").policy(QUICK))
        .build()
        .unwrap();
    let start = Instant::now();
    let routed = route.stream(|target, _| {
        let name = *target.data();
        async move {
            Ok(match name {
                "a" => stream::repeat_with(|| Ok(Item::Ping))
                    .then(|ping| async {
                        tokio::time::sleep(Duration::from_secs(5)).await;
                        ping
                    })
                    .boxed(),
                _ => answer("b", &["ok"]),
            })
        }
    });
    let (items, failure) = drain(routed).await;
    assert!(failure.is_none());
    assert_eq!(text(&items), "ok");
    assert_eq!(start.elapsed(), Duration::from_secs(30));
}

#[tokio::test(start_paused = true)]
async fn cut_after_commit_with_no_target_that_continues_ends_with_the_cut_and_never_opens_another()
{
    let route = Route::builder("rs-cut")
        .target(Target::new("rs-cut-a", "a").policy(QUICK))
        .target(Target::new("rs-cut-b", "b").policy(QUICK))
        .build()
        .unwrap();
    let opens = RefCell::new(Vec::new());
    let routed = route.stream(|target, _| {
        opens.borrow_mut().push(*target.data());
        async move { Ok(cut("a", &["one", "two"], ChatError::Cut)) }
    });
    let (items, failure) = drain(routed).await;
    assert_eq!(text(&items), "onetwo");
    let failure = failure.expect("the stream ends in error");
    assert_eq!(failure.reason(), RouteStop::PartialOutput);
    assert_eq!(failure.delivered(), 3);
    let cause = failure.cause().unwrap();
    assert_eq!(cause.target(), "rs-cut-a");
    assert_eq!(cause.stop_reason(), StopReason::PartialOutput);
    assert!(matches!(cause.error(), TargetError::Answer(ChatError::Cut)));
    assert!(matches!(
        failure.tried()[1].error(),
        TargetError::CannotContinue
    ));
    assert_eq!(
        *opens.borrow(),
        vec!["a"],
        "a target that cannot continue is never opened"
    );
    assert_eq!(failure.classify(), ErrorClass::Transient);
}

#[tokio::test(start_paused = true)]
async fn a_cut_stream_continues_at_a_target_that_declares_it_from_the_items_delivered() {
    let route = Route::builder("rs-continue")
        .target(Target::new("rs-continue-a", "a").policy(QUICK))
        .target(Target::new("rs-continue-b", "b").policy(QUICK))
        .target(
            Target::new("rs-continue-c", "c")
                .policy(QUICK)
                .continues(true),
        )
        .build()
        .unwrap();
    let prefills = RefCell::new(Vec::new());
    let routed = route.stream(|target, resume| {
        let name = *target.data();
        prefills.borrow_mut().push((name, text(resume.items())));
        async move {
            Ok(match name {
                "a" => cut("a", &["The ", "answer "], ChatError::Cut),
                _ => answer("c", &["is ", "42."]),
            })
        }
    });
    let (items, failure) = drain(routed).await;
    assert!(failure.is_none(), "{failure:?}");
    assert_eq!(text(&items), "The answer is 42.");
    // One preamble: the continuation's is dropped.
    assert_eq!(
        items
            .iter()
            .filter(|item| matches!(item, Item::Start(_)))
            .count(),
        1
    );
    assert_eq!(
        *prefills.borrow(),
        vec![("a", String::new()), ("c", "The answer ".to_owned())],
        "b cannot continue and is skipped; c is given what the consumer has"
    );
}

#[tokio::test(start_paused = true)]
async fn a_continuation_that_rejects_the_prefill_does_not_mask_the_original_failure() {
    let route = Route::builder("rs-mask")
        .target(Target::new("rs-mask-a", "a").policy(QUICK))
        .target(Target::new("rs-mask-b", "b").policy(QUICK).continues(true))
        .build()
        .unwrap();
    let routed = route.stream(|target, _| {
        let name = *target.data();
        async move {
            match name {
                "a" => Ok(cut("a", &["partial"], ChatError::Cut)),
                _ => Err(ChatError::PrefillRejected),
            }
        }
    });
    let (items, failure) = drain(routed).await;
    assert_eq!(text(&items), "partial");
    let failure = failure.unwrap();
    assert_eq!(failure.reason(), RouteStop::PartialOutput);
    assert!(matches!(
        failure.cause().unwrap().error(),
        TargetError::Answer(ChatError::Cut)
    ));
    assert!(matches!(
        failure.last().unwrap().error(),
        TargetError::Answer(ChatError::PrefillRejected)
    ));
    // The route's error is the cut, not the 400.
    assert_eq!(failure.classify(), ErrorClass::Transient);
}

#[tokio::test(start_paused = true)]
async fn a_content_filter_mid_answer_stops_the_route_even_with_a_target_that_continues() {
    let route = Route::builder("rs-filter")
        .target(Target::new("rs-filter-a", "a").policy(QUICK))
        .target(
            Target::new("rs-filter-b", "b")
                .policy(QUICK)
                .continues(true),
        )
        .build()
        .unwrap();
    let opens = AtomicU32::new(0);
    let routed = route.stream(|_, _| {
        opens.fetch_add(1, Ordering::Relaxed);
        async move { Ok(cut("a", &["bad"], ChatError::ContentFilter)) }
    });
    let (_, failure) = drain(routed).await;
    let failure = failure.unwrap();
    assert_eq!(failure.reason(), RouteStop::PartialOutput);
    assert_eq!(failure.tried().len(), 1);
    assert_eq!(failure.tried()[0].then(), Then::Stop);
    assert_eq!(opens.load(Ordering::Relaxed), 1);
}

#[tokio::test(start_paused = true)]
async fn a_context_length_error_before_content_goes_to_the_next_larger_window() {
    let route = Route::builder("rs-context")
        .target(
            Target::new("rs-context-a", "a")
                .policy(QUICK)
                .context(8_000),
        )
        .target(
            Target::new("rs-context-b", "b")
                .policy(QUICK)
                .context(8_000),
        )
        .target(
            Target::new("rs-context-c", "c")
                .policy(QUICK)
                .context(200_000),
        )
        .build()
        .unwrap();
    let routed = route.stream(|target, _| {
        let name = *target.data();
        async move {
            match name {
                "c" => Ok(answer("c", &["long"])),
                _ => Err(ChatError::ContextLength),
            }
        }
    });
    let (items, failure) = drain(routed).await;
    assert!(failure.is_none());
    assert_eq!(text(&items), "long");
}

#[tokio::test(start_paused = true)]
async fn a_content_filter_before_content_stops_the_route() {
    let route = Route::builder("rs-filter-early")
        .target(Target::new("rs-filter-early-a", "a").policy(QUICK))
        .target(Target::new("rs-filter-early-b", "b").policy(QUICK))
        .build()
        .unwrap();
    let opens = AtomicU32::new(0);
    let routed = route.stream(|_, _| {
        opens.fetch_add(1, Ordering::Relaxed);
        async { Err::<Source, _>(ChatError::ContentFilter) }
    });
    let (items, failure) = drain(routed).await;
    assert!(items.is_empty());
    assert_eq!(failure.unwrap().reason(), RouteStop::Stopped);
    assert_eq!(opens.load(Ordering::Relaxed), 1);
}

#[tokio::test(start_paused = true)]
async fn an_open_breaker_skips_its_target_without_an_attempt() {
    let route = Route::builder("rs-breaker")
        .target(
            Target::new("rs-breaker-a", "a")
                .policy(QUICK.max(1))
                .breaker(
                    Breaker::new()
                        .min_throughput(1)
                        .open_for(Duration::from_secs(60)),
                ),
        )
        .target(Target::new("rs-breaker-b", "b").policy(QUICK))
        .build()
        .unwrap();
    let opens = RefCell::new(Vec::new());
    for round in 0..2 {
        let routed = route.stream(|target, _| {
            let name = *target.data();
            opens.borrow_mut().push(name);
            async move {
                match name {
                    "a" => Err(ChatError::Overloaded),
                    _ => Ok(answer("b", &["ok"])),
                }
            }
        });
        let mut routed = std::pin::pin!(routed);
        let mut got = Vec::new();
        while let Some(item) = routed.next().await {
            got.push(item.unwrap());
        }
        assert_eq!(text(&got), "ok");
        if round == 1 {
            assert_eq!(routed.tried()[0].attempts(), 0, "skipped while open");
            assert_eq!(routed.tried()[0].stop_reason(), StopReason::CircuitOpen);
        }
    }
    assert_eq!(*opens.borrow(), vec!["a", "b", "b"]);
}

#[tokio::test(start_paused = true)]
async fn the_route_deadline_ends_a_stream_that_stalls_mid_answer_whatever_its_timers() {
    let route = Route::builder("rs-deadline")
        .target(
            Target::new("rs-deadline-a", "a").policy(
                QUICK
                    .idle(Duration::from_secs(3_600))
                    .first_item(Duration::from_secs(3_600)),
            ),
        )
        .deadline(Duration::from_secs(45))
        .build()
        .unwrap();
    let start = Instant::now();
    let routed = route.stream(|_, _| async {
        Ok(stream::iter(tokens(&["a", "b"]))
            .chain(stream::pending())
            .boxed())
    });
    let (items, failure) = drain(routed).await;
    assert_eq!(text(&items), "ab");
    let failure = failure.unwrap();
    assert_eq!(failure.reason(), RouteStop::Deadline);
    assert_eq!(failure.delivered(), 2);
    assert_eq!(start.elapsed(), Duration::from_secs(45));
}

#[tokio::test(start_paused = true)]
async fn a_stall_after_commit_continues_at_a_target_that_can() {
    let route = Route::builder("rs-stall")
        .target(Target::new("rs-stall-a", "a").policy(QUICK.idle(Duration::from_secs(30))))
        .target(Target::new("rs-stall-b", "b").policy(QUICK).continues(true))
        .build()
        .unwrap();
    let start = Instant::now();
    let routed = route.stream(|target, _| {
        let name = *target.data();
        async move {
            Ok(match name {
                "a" => stream::iter(tokens(&["40 tokens "]))
                    .chain(stream::pending())
                    .boxed(),
                _ => answer("b", &["and the rest"]),
            })
        }
    });
    let (items, failure) = drain(routed).await;
    assert!(failure.is_none());
    assert_eq!(text(&items), "40 tokens and the rest");
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(30),
        "the idle limit a user sets"
    );
}

/// A target that answers its first token after `ttft`, or never.
fn timed(ttft: Option<Duration>) -> Source {
    stream::once(async move {
        match ttft {
            Some(ttft) => tokio::time::sleep(ttft).await,
            None => std::future::pending().await,
        }
    })
    .flat_map(|()| stream::iter(tokens(&["token"])))
    .boxed()
}

#[tokio::test(start_paused = true)]
async fn a_stream_target_that_learns_its_silence_is_left_within_seconds_and_a_slow_one_is_not_cut()
{
    let learns = |name: &'static str| {
        Target::new(name, name)
            .policy(QUICK.max(1))
            .learn_silence(Duration::from_millis(500))
    };
    let route = Route::builder("rs-learn")
        .target(learns("rs-learn-fast"))
        .target(learns("rs-learn-slow"))
        .target(Target::new("rs-learn-spare", "spare").policy(QUICK))
        .build()
        .unwrap();
    // 20 answers of the fast target: 0.8 s ± 0.2 s to its first token.
    for i in 0..20_u64 {
        let ttft = Duration::from_millis(600 + (i * 137) % 400);
        let routed = route.stream(|_, _| async move { Ok(timed(Some(ttft))) });
        let (items, failure) = drain(routed).await;
        assert!(failure.is_none());
        assert_eq!(items.len(), 1);
    }
    let fast = route.targets()[0].smoothed_answer().unwrap();
    assert!(
        fast > Duration::from_millis(600) && fast < Duration::from_secs(1),
        "{fast:?}"
    );
    // Then it goes silent: left after a second or two, not 30 s.
    let start = Instant::now();
    let routed = route.stream(|target, _| {
        let name = *target.data();
        async move {
            match name {
                "rs-learn-fast" => Ok(timed(None)),
                "rs-learn-slow" => Err(ChatError::Overloaded),
                _ => Ok(timed(Some(Duration::from_secs(5)))),
            }
        }
    });
    let (items, failure) = drain(routed).await;
    assert!(failure.is_none());
    assert_eq!(items.len(), 1);
    let left_after = start.elapsed() - Duration::from_secs(5);
    assert!(
        left_after < Duration::from_secs(3),
        "left after {left_after:?}"
    );
    // The slow target (5 s to its first token, every time) has no history
    // of its own: it starts from the fast one's limit, which doubles at
    // each silence until it has waited long enough to hear one answer;
    // from then on its own answers set its limit, and it is never cut.
    let mut served = Vec::new();
    for _ in 0..20 {
        let routed = route.stream(|target, _| {
            let name = *target.data();
            async move {
                match name {
                    "rs-learn-slow" => Ok(timed(Some(Duration::from_secs(5)))),
                    "spare" => Ok(answer("spare", &["spare"])),
                    _ => Err(ChatError::Overloaded),
                }
            }
        });
        let mut routed = std::pin::pin!(routed);
        assert!(routed.next().await.unwrap().is_ok());
        served.push(routed.served_by().unwrap());
    }
    let first = served
        .iter()
        .position(|name| *name == "rs-learn-slow")
        .unwrap();
    assert!(
        first <= 3,
        "cut {first} times before it was heard: {served:?}"
    );
    assert!(
        served[first..].iter().all(|name| *name == "rs-learn-slow"),
        "{served:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn hostile_limits_never_hang_a_routed_stream() {
    // A zero first-item limit leaves each target before its first token
    // can come; no target serves.
    let route = Route::builder("rs-hostile")
        .target(Target::new("rs-hostile-a", "a").silence(Duration::ZERO))
        .target(Target::new("rs-hostile-b", "b").silence(Duration::ZERO))
        .deadline(Duration::MAX)
        .build()
        .unwrap();
    let routed = route.stream(|_, _| async { Ok(timed(Some(Duration::from_millis(1)))) });
    let (items, failure) = drain(routed).await;
    assert!(items.is_empty());
    let failure = failure.unwrap();
    assert_eq!(failure.reason(), RouteStop::NoTargetLeft);
    assert!(
        matches!(failure.tried()[0].error(), TargetError::Silent(e) if e.which() == Limit::FirstItem)
    );
    // A zero deadline tries nothing past it.
    let route = Route::builder("rs-hostile-zero")
        .target(Target::new("rs-hostile-zero-a", "a"))
        .deadline(Duration::ZERO)
        .build()
        .unwrap();
    let routed = route.stream(|_, _| async { Ok(answer("x", &["late"])) });
    let (items, failure) = drain(routed).await;
    assert!(items.is_empty());
    assert_eq!(failure.unwrap().reason(), RouteStop::Deadline);
}

#[tokio::test(start_paused = true)]
async fn a_routed_call_and_a_routed_stream_can_be_spawned() {
    // A route's futures are `Send`: an axum handler or `tokio::spawn` can
    // hold them (the call's attempt count was a `Cell` held across awaits).
    let route = std::sync::Arc::new(
        Route::builder("rs-send")
            .target(Target::new("rs-send-a", "a").policy(QUICK))
            .build()
            .unwrap(),
    );
    let by_call = std::sync::Arc::clone(&route);
    let call = tokio::spawn(async move {
        let answer = by_call
            .call(|target| async move { Ok::<_, ChatError>(*target.data()) })
            .await
            .unwrap();
        answer.value
    });
    let by_stream = std::sync::Arc::clone(&route);
    let streamed = tokio::spawn(async move {
        drain(by_stream.stream(|_, _| async { Ok(answer("a", &["sent"])) }))
            .await
            .0
    });
    assert_eq!(call.await.unwrap(), "a");
    assert_eq!(text(&streamed.await.unwrap()), "sent");
}

#[tokio::test(start_paused = true)]
async fn a_target_with_no_history_starts_from_its_routes_estimate() {
    let learns = |name: &'static str| {
        Target::new(name, name)
            .policy(QUICK.max(1))
            .learn_silence(Duration::from_millis(500))
    };
    let route = Route::builder("rs-peer")
        .target(learns("rs-peer-known"))
        .target(learns("rs-peer-new"))
        .target(Target::new("rs-peer-spare", "spare").policy(QUICK))
        .build()
        .unwrap();
    for _ in 0..10 {
        let routed = route.stream(|_, _| async { Ok(timed(Some(Duration::from_millis(800)))) });
        assert!(drain(routed).await.1.is_none());
    }
    // The known target is down; the new one never answers: it is left
    // after about the known one's limit (about a second), not its 30 s.
    let start = Instant::now();
    let routed = route.stream(|target, _| {
        let name = *target.data();
        async move {
            match name {
                "rs-peer-known" => Err(ChatError::Overloaded),
                "rs-peer-new" => Ok(timed(None)),
                _ => Ok(answer("spare", &["ok"])),
            }
        }
    });
    let (items, failure) = drain(routed).await;
    assert!(failure.is_none());
    assert_eq!(text(&items), "ok");
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "left after {:?}",
        start.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn the_models_observation_of_a_cut_route_names_the_cut_and_every_target() {
    use tenacious::agent::{Observation, Status};
    let route = Route::builder("rs-observe")
        .target(Target::new("rs-observe-a", "a").policy(QUICK))
        .target(
            Target::new("rs-observe-b", "b")
                .policy(QUICK)
                .continues(true),
        )
        .build()
        .unwrap();
    let routed = route.stream(|target, _| {
        let name = *target.data();
        async move {
            match name {
                "a" => Ok(cut("a", &["half"], ChatError::Cut)),
                _ => Err(ChatError::PrefillRejected),
            }
        }
    });
    let failure = drain(routed).await.1.unwrap();
    let obs = Observation::from_route("call_1", &failure);
    assert_eq!(obs.status, Status::PartialOutput);
    assert_eq!(obs.delivered, Some(2));
    assert_eq!(obs.error, "Cut", "the cut, not the continuation's 400");
    let route = obs.route.unwrap();
    assert_eq!(route.len(), 2);
    assert_eq!(
        (route[1].target.as_str(), route[1].error.as_str()),
        ("rs-observe-b", "PrefillRejected")
    );
}

#[tokio::test(start_paused = true)]
async fn a_continuation_keeps_what_follows_its_content_and_the_usage_is_summed() {
    let route = Route::builder("rs-usage")
        .target(Target::new("rs-usage-a", "a").policy(QUICK))
        .target(Target::new("rs-usage-b", "b").policy(QUICK).continues(true))
        .build()
        .unwrap();
    let mut routed = route.stream(|target, _| {
        let name = *target.data();
        async move {
            Ok(match name {
                "a" => cut("a", &["one "], ChatError::Cut),
                _ => stream::iter(vec![
                    Ok(Item::Start("b")),
                    Ok(Item::Usage(40, 0)),
                    Ok(Item::Token("two".into())),
                    Ok(Item::Usage(0, 7)),
                ])
                .boxed(),
            })
        }
    });
    let mut items = Vec::new();
    while let Some(item) = routed.next().await {
        items.push(item.unwrap());
    }
    assert_eq!(
        items,
        vec![
            Item::Start("a"),
            Item::Token("one ".into()),
            Item::Token("two".into()),
            Item::Usage(0, 7)
        ],
        "the continuation's preamble is dropped, its usage after content is not"
    );
    assert_eq!(routed.usage(), tenacious::stream::Usage::new(40, 7));
    assert_eq!(routed.served_by(), Some("rs-usage-b"));
}

/// A route whose primary's breaker was opened by one failure and whose
/// break has ended: its next attempt is the half-open probe.
async fn half_open(name: &str) -> Route<&'static str> {
    let open_for = Duration::from_secs(10);
    let route = Route::builder(name)
        .target(
            Target::new(format!("{name}-a"), "a")
                .policy(QUICK.max(1))
                .breaker(Breaker::new().min_throughput(1).open_for(open_for)),
        )
        .target(Target::new(format!("{name}-b"), "b").policy(QUICK))
        .build()
        .unwrap();
    let first = route
        .call(|target| {
            let name = *target.data();
            async move {
                match name {
                    "a" => Err(ChatError::Overloaded),
                    _ => Ok(()),
                }
            }
        })
        .await
        .unwrap();
    assert_eq!(first.served_by(), format!("{name}-b"));
    tokio::time::sleep(open_for + Duration::from_secs(1)).await;
    route
}

#[tokio::test(start_paused = true)]
async fn a_routed_stream_dropped_during_a_half_open_probe_leaves_the_breaker_able_to_probe_again() {
    let route = half_open("rs-drop").await;
    // Half-open: this stream's open is the probe, and it is dropped
    // while the primary has not answered.
    let opened = AtomicU32::new(0);
    {
        let routed = route.stream(|_, _| {
            opened.fetch_add(1, Ordering::Relaxed);
            async { std::future::pending::<Result<Source, ChatError>>().await }
        });
        let mut routed = std::pin::pin!(routed);
        let polled = tokio::time::timeout(Duration::from_secs(1), routed.next()).await;
        assert!(polled.is_err(), "still waiting on the probe");
    }
    assert_eq!(opened.load(Ordering::Relaxed), 1);
    // The dropped probe gave its slot back: the next stream probes the
    // primary again (it is not skipped as if a probe were in flight).
    let asked = RefCell::new(Vec::new());
    let routed = route.stream(|target, _| {
        asked.borrow_mut().push(*target.data());
        async { Ok(answer("a", &["back"])) }
    });
    let (items, failure) = drain(routed).await;
    assert!(failure.is_none());
    assert_eq!(text(&items), "back");
    assert_eq!(*asked.borrow(), vec!["a"]);
}

#[tokio::test(start_paused = true)]
async fn a_routed_call_dropped_during_a_half_open_probe_leaves_the_breaker_able_to_probe_again() {
    let route = half_open("rc-drop").await;
    // The probe's call is dropped mid-attempt.
    let probe = route.call(|_| std::future::pending::<Result<&str, ChatError>>());
    assert!(
        tokio::time::timeout(Duration::from_secs(1), probe)
            .await
            .is_err()
    );
    // Its slot came back: the next call probes the primary again.
    let asked = RefCell::new(Vec::new());
    let answer = route
        .call(|target| {
            asked.borrow_mut().push(*target.data());
            async { Ok::<_, ChatError>("back") }
        })
        .await
        .unwrap();
    assert_eq!((answer.value, answer.served_by()), ("back", "rc-drop-a"));
    assert_eq!(*asked.borrow(), vec!["a"]);
}

#[tokio::test(start_paused = true)]
async fn a_thousand_routed_streams_at_once_each_fall_back_once_and_deliver_each_item_once() {
    let route = std::sync::Arc::new(
        Route::builder("rs-load")
            .target(Target::new("rs-load-a", "a").policy(QUICK.max(2)))
            .target(Target::new("rs-load-b", "b").policy(QUICK).continues(true))
            .build()
            .unwrap(),
    );
    let opens = std::sync::Arc::new(AtomicU32::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..1_000_u32 {
        let (route, opens) = (std::sync::Arc::clone(&route), std::sync::Arc::clone(&opens));
        tasks.spawn(async move {
            let routed = route.stream(|target, resume| {
                opens.fetch_add(1, Ordering::Relaxed);
                let (name, had) = (*target.data(), resume.items().len());
                async move {
                    Ok(match (name, i % 2) {
                        // Half are cut after content, half fail before it.
                        ("a", 0) => cut("a", &["x "], ChatError::Cut),
                        ("a", _) => cut("a", &[], ChatError::Overloaded),
                        _ => {
                            let rest: &[&str] = if had == 1 { &["y"] } else { &["x ", "y"] };
                            answer("b", rest)
                        }
                    })
                }
            });
            let (items, failure) = drain(routed).await;
            assert!(failure.is_none(), "{failure:?}");
            text(&items)
        });
    }
    let mut done = 0;
    while let Some(text) = tasks.join_next().await {
        assert_eq!(text.unwrap(), "x y");
        done += 1;
    }
    assert_eq!(done, 1_000);
    // Cut after content: 1 open at a, then b. Failed before: 2 at a, then b.
    assert_eq!(opens.load(Ordering::Relaxed), 500 * 2 + 500 * 3);
}

#[test]
fn a_routed_stream_is_built_without_a_runtime_and_its_deadline_runs_from_its_first_poll() {
    let route = Route::builder("rs-lazy")
        .target(Target::new("rs-lazy-a", "a").policy(QUICK.first_item(Duration::from_secs(3_600))))
        .deadline(Duration::from_secs(45))
        .build()
        .unwrap();
    // Built in sync code: no timer is armed yet (it panicked before).
    let routed =
        route.stream(|_, _| async { Ok(stream::pending::<Result<Item, ChatError>>().boxed()) });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async move {
        tokio::time::sleep(Duration::from_secs(30)).await;
        let start = Instant::now();
        let (items, failure) = drain(routed).await;
        assert!(items.is_empty());
        assert_eq!(failure.unwrap().reason(), RouteStop::Deadline);
        assert_eq!(
            start.elapsed(),
            Duration::from_secs(45),
            "from the first poll"
        );
    });
}
