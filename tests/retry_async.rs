//! `#[retry]` on async fns, observed on tokio's paused clock: attempt
//! counters, the delays `notify` reports, and the paused-clock time between
//! attempts. Nothing sleeps for real.
use std::cell::{Cell, RefCell};
use std::time::Duration;

use tenacious::{Classify, ErrorClass, Jitter, Policy, RetryEvent, RetryOn, retry, seed_jitter};
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum ApiError {
    Timeout,
    Busy(Option<Duration>),
    BadRequest,
    Unauthorized,
}

impl Classify for ApiError {
    fn classify(&self) -> ErrorClass {
        match self {
            ApiError::Timeout => ErrorClass::Transient,
            ApiError::Busy(_) => ErrorClass::RateLimited,
            ApiError::BadRequest => ErrorClass::Invalid,
            ApiError::Unauthorized => ErrorClass::Fatal,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            ApiError::Busy(hint) => *hint,
            _ => None,
        }
    }
}

const MS: Duration = Duration::from_millis(1);

thread_local! {
    /// When each attempt started, on the paused clock.
    static STARTS: RefCell<Vec<Instant>> = const { RefCell::new(Vec::new()) };
    /// What `notify` was told.
    static EVENTS: RefCell<Vec<(ApiError, RetryEvent)>> = const { RefCell::new(Vec::new()) };
    /// The errors the next attempts return, front first; then `Ok`.
    static SCRIPT: RefCell<Vec<ApiError>> = const { RefCell::new(Vec::new()) };
}

/// Resets the recorders and scripts the next attempts' errors.
fn script(errors: &[ApiError]) {
    STARTS.with_borrow_mut(Vec::clear);
    EVENTS.with_borrow_mut(Vec::clear);
    SCRIPT.with_borrow_mut(|s| {
        s.clear();
        s.extend(errors.iter().rev().copied());
    });
}

/// One attempt: records its start, then fails as scripted or succeeds with
/// its 1-based number.
fn attempt() -> Result<usize, ApiError> {
    let n = STARTS.with_borrow_mut(|s| {
        s.push(Instant::now());
        s.len()
    });
    match SCRIPT.with_borrow_mut(Vec::pop) {
        Some(error) => Err(error),
        None => Ok(n),
    }
}

fn attempts() -> usize {
    STARTS.with_borrow(Vec::len)
}

/// The paused-clock time between consecutive attempts.
fn gaps() -> Vec<Duration> {
    STARTS.with_borrow(|s| s.windows(2).map(|w| w[1] - w[0]).collect())
}

fn record(error: &ApiError, event: &RetryEvent) {
    EVENTS.with_borrow_mut(|e| e.push((*error, *event)));
}

fn events() -> Vec<(ApiError, RetryEvent)> {
    EVENTS.with_borrow(Clone::clone)
}

fn notified_delays() -> Vec<Duration> {
    EVENTS.with_borrow(|e| e.iter().map(|(_, event)| event.delay).collect())
}

#[retry(max = 4, base = "100ms", jitter = "none", notify = record)]
async fn call() -> Result<usize, ApiError> {
    attempt()
}

#[tokio::test(start_paused = true)]
async fn transient_errors_are_retried_until_max() {
    script(&[ApiError::Timeout; 10]);
    let started = Instant::now();
    assert_eq!(call().await, Err(ApiError::Timeout));
    assert_eq!(attempts(), 4);
    // jitter "none": each wait is the ceiling, base * 2^(n-1).
    assert_eq!(gaps(), [100 * MS, 200 * MS, 400 * MS]);
    assert_eq!(started.elapsed(), 700 * MS);
}

#[tokio::test(start_paused = true)]
async fn rate_limited_errors_without_a_hint_back_off_like_transient_ones() {
    script(&[ApiError::Busy(None); 10]);
    assert_eq!(call().await, Err(ApiError::Busy(None)));
    assert_eq!(attempts(), 4);
    assert_eq!(gaps(), [100 * MS, 200 * MS, 400 * MS]);
}

#[tokio::test(start_paused = true)]
async fn a_success_ends_the_retries() {
    script(&[ApiError::Timeout, ApiError::Busy(None)]);
    assert_eq!(call().await, Ok(3));
    assert_eq!(attempts(), 3);
}

#[tokio::test(start_paused = true)]
async fn invalid_and_fatal_errors_return_after_one_attempt() {
    for error in [ApiError::BadRequest, ApiError::Unauthorized] {
        script(&[error]);
        let started = Instant::now();
        assert_eq!(call().await, Err(error));
        assert_eq!(attempts(), 1);
        assert_eq!(started.elapsed(), Duration::ZERO);
        assert!(events().is_empty());
    }
}

#[retry(max = 3, base = "10ms", on = Transient)]
async fn transient_only() -> Result<usize, ApiError> {
    attempt()
}

#[retry(max = 3, base = "10ms", on = RateLimited)]
async fn rate_limited_only() -> Result<usize, ApiError> {
    attempt()
}

#[tokio::test(start_paused = true)]
async fn on_selects_the_retried_classes() {
    script(&[ApiError::Busy(None)]);
    assert_eq!(transient_only().await, Err(ApiError::Busy(None)));
    assert_eq!(attempts(), 1);

    script(&[ApiError::Timeout]);
    assert_eq!(transient_only().await, Ok(2));

    script(&[ApiError::Timeout]);
    assert_eq!(rate_limited_only().await, Err(ApiError::Timeout));
    assert_eq!(attempts(), 1);

    script(&[ApiError::Busy(None)]);
    assert_eq!(rate_limited_only().await, Ok(2));
}

#[tokio::test(start_paused = true)]
async fn notify_sees_the_attempt_delay_and_error_before_each_sleep() {
    script(&[ApiError::Timeout, ApiError::Busy(None), ApiError::Timeout]);
    assert_eq!(call().await, Ok(4));
    let events = events();
    let seen: Vec<_> = events
        .iter()
        .map(|(error, event)| (*error, event.attempt, event.max, event.delay, event.class))
        .collect();
    assert_eq!(
        seen,
        [
            (ApiError::Timeout, 1, 4, 100 * MS, ErrorClass::Transient),
            (
                ApiError::Busy(None),
                2,
                4,
                200 * MS,
                ErrorClass::RateLimited
            ),
            (ApiError::Timeout, 3, 4, 400 * MS, ErrorClass::Transient),
        ]
    );
    // The delay notify is told is the one slept.
    assert_eq!(gaps(), notified_delays());
}

#[retry(max = 6, base = "100ms", cap = "250ms", jitter = "none", notify = record)]
async fn capped() -> Result<usize, ApiError> {
    attempt()
}

#[tokio::test(start_paused = true)]
async fn no_wait_exceeds_cap() {
    script(&[ApiError::Timeout; 10]);
    assert!(capped().await.is_err());
    assert_eq!(gaps(), [100 * MS, 200 * MS, 250 * MS, 250 * MS, 250 * MS]);
}

#[retry(max = 4, base = "100ms", cap = "10s", jitter = "full", notify = record)]
async fn full_jitter() -> Result<usize, ApiError> {
    attempt()
}

#[retry(max = 4, base = "100ms", cap = "10s", jitter = "equal", notify = record)]
async fn equal_jitter() -> Result<usize, ApiError> {
    attempt()
}

#[retry(max = 4, base = "100ms", cap = "500ms", jitter = "decorrelated", notify = record)]
async fn decorrelated_jitter() -> Result<usize, ApiError> {
    attempt()
}

/// Runs `call` with every attempt failing, for many seeds; checks that each
/// delay notified lies in `bounds(retry, previous delay)` and is the one slept.
async fn check_jitter<F, Fut>(call: F, bounds: impl Fn(u32, Duration) -> (Duration, Duration))
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<usize, ApiError>>,
{
    let mut distinct = std::collections::HashSet::new();
    for seed in 0..50 {
        seed_jitter(seed);
        script(&[ApiError::Timeout; 4]);
        assert!(call().await.is_err());
        let delays = notified_delays();
        assert_eq!(delays.len(), 3);
        for (delay, gap) in delays.iter().zip(gaps()) {
            assert!(slept(*delay, gap), "slept {gap:?} for {delay:?}");
        }
        let mut previous = 100 * MS;
        for (retry, delay) in (1..).zip(&delays) {
            let (low, high) = bounds(retry, previous);
            assert!(
                low <= *delay && *delay <= high,
                "seed {seed}, retry {retry}: {delay:?} outside [{low:?}, {high:?}]"
            );
            previous = *delay;
        }
        distinct.insert(delays);
    }
    // Jitter that never varies is not jitter.
    assert!(distinct.len() > 40, "only {} distinct runs", distinct.len());
}

/// Whether `gap` on the paused clock is a sleep of `delay`: tokio's timer
/// wakes on the next whole millisecond.
fn slept(delay: Duration, gap: Duration) -> bool {
    delay <= gap && gap < delay + MS
}

#[tokio::test(start_paused = true)]
async fn full_jitter_waits_between_zero_and_the_ceiling() {
    check_jitter(full_jitter, |retry, _| {
        (Duration::ZERO, 100 * MS * 2u32.pow(retry - 1))
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn equal_jitter_waits_between_half_the_ceiling_and_the_ceiling() {
    check_jitter(equal_jitter, |retry, _| {
        let ceiling = 100 * MS * 2u32.pow(retry - 1);
        (ceiling / 2, ceiling)
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn decorrelated_jitter_waits_between_base_and_three_times_the_previous_wait() {
    check_jitter(decorrelated_jitter, |_, previous| {
        (100 * MS, (previous * 3).min(500 * MS))
    })
    .await;
}

#[retry(max = 3, base = "10ms", jitter = "full", max_retry_after = "10s", notify = record)]
async fn hinted() -> Result<usize, ApiError> {
    attempt()
}

#[retry(max = 3, base = "10ms", jitter = "none", notify = record)]
async fn hinted_without_jitter() -> Result<usize, ApiError> {
    attempt()
}

#[tokio::test(start_paused = true)]
async fn a_rate_limit_hint_is_waited_at_least_and_at_most_a_little_more() {
    for seed in 0..20 {
        seed_jitter(seed);
        script(&[ApiError::Busy(Some(Duration::from_secs(5)))]);
        assert_eq!(hinted().await, Ok(2));
        let delay = notified_delays()[0];
        assert!(slept(delay, gaps()[0]));
        assert!(delay >= Duration::from_secs(5), "{delay:?}");
        // On top of the hint comes the backoff: at most `base` (10 ms) here.
        assert!(delay <= Duration::from_millis(5_010), "{delay:?}");
    }

    script(&[ApiError::Busy(Some(Duration::from_secs(5)))]);
    assert_eq!(hinted_without_jitter().await, Ok(2));
    assert_eq!(gaps(), [Duration::from_millis(5_010)]);
}

#[tokio::test(start_paused = true)]
async fn a_hint_longer_than_max_retry_after_returns_the_error_at_once() {
    let too_long = ApiError::Busy(Some(Duration::from_secs(11)));
    script(&[too_long]);
    let started = Instant::now();
    assert_eq!(hinted().await, Err(too_long));
    assert_eq!(attempts(), 1);
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert!(events().is_empty());

    // The limit itself is still honoured.
    script(&[ApiError::Busy(Some(Duration::from_secs(10)))]);
    assert_eq!(hinted().await, Ok(2));
}

fn not_busy(error: &ApiError) -> bool {
    !matches!(error, ApiError::Busy(_))
}

fn everything(_: &ApiError) -> bool {
    true
}

#[retry(max = 3, base = "10ms", when = not_busy)]
async fn narrowed() -> Result<usize, ApiError> {
    attempt()
}

#[retry(max = 3, base = "10ms", on = Transient, when = everything)]
async fn cannot_widen() -> Result<usize, ApiError> {
    attempt()
}

#[tokio::test(start_paused = true)]
async fn when_is_anded_with_on() {
    // `on` allows RateLimited, `when` says no: not retried.
    script(&[ApiError::Busy(None)]);
    assert_eq!(narrowed().await, Err(ApiError::Busy(None)));
    assert_eq!(attempts(), 1);
    // Both allow Transient: retried.
    script(&[ApiError::Timeout]);
    assert_eq!(narrowed().await, Ok(2));
    // `when` says yes to everything, `on` still limits it.
    for error in [
        ApiError::Busy(None),
        ApiError::BadRequest,
        ApiError::Unauthorized,
    ] {
        script(&[error]);
        assert_eq!(cannot_widen().await, Err(error));
        assert_eq!(attempts(), 1);
    }
}

#[tokio::test(start_paused = true)]
async fn dropping_the_future_during_a_backoff_makes_no_further_attempt() {
    script(&[ApiError::Timeout; 10]);
    // Attempt 1 at 0 ms, attempt 2 at 100 ms, then a 200 ms backoff that the
    // timeout cuts at 150 ms.
    let cut = tokio::time::timeout(150 * MS, call()).await;
    assert!(cut.is_err());
    assert_eq!(attempts(), 2);
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(attempts(), 2);
}

struct Session {
    calls: u32,
    log: Vec<String>,
    token: Cell<u32>,
}

impl Session {
    #[retry(max = 5, base = "10ms")]
    async fn send(&mut self, message: &str) -> Result<usize, ApiError> {
        self.calls += 1;
        self.log.push(format!("{message} #{}", self.calls));
        if self.calls < 3 {
            return Err(ApiError::Timeout);
        }
        Ok(self.log.len())
    }

    #[retry(max = 5, base = "10ms")]
    async fn refresh(&self) -> Result<u32, ApiError> {
        self.token.set(self.token.get() + 1);
        if self.token.get() < 2 {
            Err(ApiError::Busy(None))
        } else {
            Ok(self.token.get())
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_mut_self_method_keeps_its_changes_across_attempts() {
    let mut session = Session {
        calls: 0,
        log: Vec::new(),
        token: Cell::new(0),
    };
    assert_eq!(session.send("hi").await, Ok(3));
    assert_eq!(session.calls, 3);
    assert_eq!(session.log, ["hi #1", "hi #2", "hi #3"]);
    assert_eq!(session.refresh().await, Ok(2));
}

#[retry(max = 3, base = "10ms")]
async fn borrows_its_arguments(
    name: &str,
    tags: Vec<String>,
    seen: &mut Vec<String>,
) -> Result<usize, ApiError> {
    seen.push(format!("{name}:{}", tags.join(",")));
    attempt()
}

#[tokio::test(start_paused = true)]
async fn every_attempt_sees_the_same_arguments() {
    script(&[ApiError::Timeout, ApiError::Timeout]);
    let mut seen = Vec::new();
    let tags = vec![String::from("a"), String::from("b")];
    assert_eq!(borrows_its_arguments("n", tags, &mut seen).await, Ok(3));
    assert_eq!(seen, ["n:a,b", "n:a,b", "n:a,b"]);
}

#[derive(Debug, PartialEq)]
struct Parse;

impl From<Parse> for ApiError {
    fn from(_: Parse) -> Self {
        ApiError::BadRequest
    }
}

fn parse(text: &str) -> Result<u32, Parse> {
    text.parse().map_err(|_| Parse)
}

#[retry(max = 3, base = "10ms")]
async fn question_mark_and_return_end_the_attempt(text: &str) -> Result<u32, ApiError> {
    attempt()?;
    if text.is_empty() {
        return Err(ApiError::Timeout);
    }
    let n = parse(text)?;
    Ok(n)
}

#[tokio::test(start_paused = true)]
async fn question_mark_converts_and_return_ends_only_the_attempt() {
    script(&[ApiError::Timeout]);
    assert_eq!(question_mark_and_return_end_the_attempt("7").await, Ok(7));
    assert_eq!(attempts(), 2);

    script(&[]);
    assert_eq!(
        question_mark_and_return_end_the_attempt("").await,
        Err(ApiError::Timeout)
    );
    assert_eq!(attempts(), 3);

    script(&[]);
    assert_eq!(
        question_mark_and_return_end_the_attempt("x").await,
        Err(ApiError::BadRequest)
    );
    assert_eq!(attempts(), 1);
}

#[retry(max = 5, base = "50ms", cap = "2s", jitter = "full", on = Transient | RateLimited, notify = record)]
async fn seeded_full() -> Result<usize, ApiError> {
    attempt()
}

#[retry(max = 5, base = "50ms", cap = "2s", jitter = "equal", notify = record)]
async fn seeded_equal() -> Result<usize, ApiError> {
    attempt()
}

#[retry(max = 5, base = "50ms", cap = "2s", jitter = "decorrelated", notify = record)]
async fn seeded_decorrelated() -> Result<usize, ApiError> {
    attempt()
}

#[retry(max = 5, base = "50ms", cap = "2s", jitter = "none", notify = record)]
async fn seeded_none() -> Result<usize, ApiError> {
    attempt()
}

#[tokio::test(start_paused = true)]
async fn the_policy_api_and_the_macro_wait_the_same_for_the_same_seed() {
    let errors = [
        ApiError::Timeout,
        ApiError::Busy(None),
        ApiError::Busy(Some(Duration::from_millis(300))),
        ApiError::Timeout,
    ];
    for jitter in [
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::None,
    ] {
        let policy = Policy::new()
            .max(5)
            .base(50 * MS)
            .cap(Duration::from_secs(2))
            .jitter(jitter)
            .on(RetryOn::TRANSIENT.union(RetryOn::RATE_LIMITED));
        for seed in [1, 7, 42] {
            seed_jitter(seed);
            script(&errors);
            let by_macro = match jitter {
                Jitter::Full => seeded_full().await,
                Jitter::Equal => seeded_equal().await,
                Jitter::Decorrelated => seeded_decorrelated().await,
                _ => seeded_none().await,
            };
            let macro_gaps = gaps();
            let macro_events = events();

            seed_jitter(seed);
            script(&errors);
            let by_policy = policy
                .retry_with(|| async { attempt() }, |_: &ApiError| true, record)
                .await;
            assert_eq!(by_macro, by_policy);
            assert_eq!(macro_gaps, gaps(), "{jitter:?}, seed {seed}");
            assert_eq!(macro_events, events(), "{jitter:?}, seed {seed}");
            assert_eq!(macro_gaps.len(), 4);
        }
    }
}
