//! A key written beside a policy overrides it, whatever its value: `idempotent
//! = true` beside a policy that is not idempotent, `resume = false` beside
//! one that resumes, for `policy = CONST` and `policy = "name"` alike (on
//! tokio's paused clock, over in-memory sources).
use std::sync::atomic::{AtomicU32, Ordering};

use futures_util::stream::{self, BoxStream, Stream, StreamExt};
use tenacious::config::{self, Policies};
use tenacious::stream::ResumePoint;
use tenacious::{Classify, Elapsed, Failure, Policy, StopReason, retry};

#[derive(Debug, Clone, Copy, PartialEq, Classify)]
enum ApiError {
    /// Sent, and lost: not proof that the request never reached the server.
    #[classify(transient)]
    Reset,
}

impl From<Elapsed> for ApiError {
    fn from(_: Elapsed) -> Self {
        ApiError::Reset
    }
}

const NOT_IDEMPOTENT: Policy = Policy::new().idempotent(false);

static SENDS: AtomicU32 = AtomicU32::new(0);

/// The policy says a sent request may not be sent again; the fn says it
/// may (it carries an idempotency key the server honours, say).
#[retry(policy = NOT_IDEMPOTENT, idempotent = true, base = "1ms")]
async fn send() -> Result<(), Failure<ApiError>> {
    SENDS.fetch_add(1, Ordering::Relaxed);
    Err(ApiError::Reset)
}

#[tokio::test(start_paused = true)]
async fn idempotent_true_beside_a_policy_that_is_not_retries_a_sent_request() {
    let failure = send().await.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Exhausted);
    assert_eq!(failure.attempts().len(), 3);
    assert_eq!(SENDS.load(Ordering::Relaxed), 3);
}

const RESUMING: Policy = Policy::new().resume(true);

/// Three items, then a failure after the commit, on the first open; the
/// rest from where the resume point says on any later one.
fn items(opens: &AtomicU32) -> BoxStream<'static, Result<u32, ApiError>> {
    opens.fetch_add(1, Ordering::Relaxed);
    let from = ResumePoint::current().map_or(0, |resume| resume.delivered());
    let from = u32::try_from(from).unwrap();
    let mut items: Vec<Result<u32, ApiError>> = (from..6).map(Ok).collect();
    if from == 0 {
        items.truncate(3);
        items.push(Err(ApiError::Reset));
    }
    stream::iter(items).boxed()
}

#[retry(policy = RESUMING, resume = false, base = "1ms")]
async fn numbers(opens: &AtomicU32) -> Result<impl Stream<Item = Result<u32, ApiError>>, ApiError> {
    Ok(items(opens))
}

#[retry(policy = "resuming", resume = false, base = "1ms")]
async fn numbers_by_name(
    opens: &AtomicU32,
) -> Result<impl Stream<Item = Result<u32, ApiError>>, ApiError> {
    Ok(items(opens))
}

/// What a consumer reads: the items, and the error the stream ended with.
async fn read(
    stream: impl Stream<Item = Result<u32, Failure<ApiError>>>,
) -> (Vec<u32>, Option<StopReason>) {
    let mut got = Vec::new();
    let mut stop = None;
    let mut stream = std::pin::pin!(stream);
    while let Some(item) = stream.next().await {
        match item {
            Ok(item) => got.push(item),
            Err(failure) => stop = Some(failure.stop_reason()),
        }
    }
    (got, stop)
}

#[tokio::test(start_paused = true)]
async fn resume_false_beside_a_policy_that_resumes_ends_the_stream_with_partial_output() {
    let opens = AtomicU32::new(0);
    let (got, stop) = read(numbers(&opens)).await;
    assert_eq!(got, [0, 1, 2]);
    assert_eq!(stop, Some(StopReason::PartialOutput));
    assert_eq!(opens.load(Ordering::Relaxed), 1, "not reopened");

    // The policy by name, loaded with `resume = true`, the same.
    config::load(Policies::from_toml_str("[policies.resuming]\nresume = true\n").unwrap()).unwrap();
    let opens = AtomicU32::new(0);
    let (got, stop) = read(numbers_by_name(&opens)).await;
    assert_eq!(got, [0, 1, 2]);
    assert_eq!(stop, Some(StopReason::PartialOutput));
    assert_eq!(opens.load(Ordering::Relaxed), 1, "not reopened");
}

/// And the policy itself, unoverridden, resumes: the override is what
/// stopped it above.
#[retry(policy = RESUMING, base = "1ms")]
async fn numbers_resumed(
    opens: &AtomicU32,
) -> Result<impl Stream<Item = Result<u32, ApiError>>, ApiError> {
    Ok(items(opens))
}

#[tokio::test(start_paused = true)]
async fn the_policy_alone_resumes() {
    let opens = AtomicU32::new(0);
    let (got, stop) = read(numbers_resumed(&opens)).await;
    assert_eq!(got, [0, 1, 2, 3, 4, 5]);
    assert_eq!(stop, None);
    assert_eq!(opens.load(Ordering::Relaxed), 2);
}
