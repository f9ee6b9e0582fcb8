//! What `#[retry]` adds to the size of an `async fn`'s future: at most one
//! tokio `Sleep` (the backoff) and 64 bytes, whatever the body holds across
//! its awaits.
//!
//! A future is stored inline wherever it is awaited, spawned or boxed, so
//! every byte the retry loop adds is paid by every caller up the chain. The
//! attempt's future and the backoff's `Sleep` are never alive at the same
//! time, so the state machine overlaps them; what stays for the whole call
//! is the engine (56 bytes on 64-bit targets, 64 with feature `tracing`,
//! whose spans it points at) and, for a body that never
//! awaits, rustc's second copy of the arguments (an `async fn` keeps its
//! arguments twice once its body awaits, which the plain fn of such a body
//! never does). The trivial case, one `u64` argument, is thus exactly at
//! the allowance (with a `&str` it would be 8 bytes over); a body that
//! awaits, as a tool call does, has room to spare. The sizes are the same
//! in debug and release builds.
use std::mem::size_of_val;
use std::time::Duration;

use tenacious::{
    Admit, AttemptRecord, Classify, Elapsed, Failure, Guard, NextAttempt, Outcome, RetryBudget,
    retry,
};
use tokio::time::Sleep;

/// `#[retry]`'s allowance over the plain future, besides the `Sleep`.
const SLACK: usize = 64;

#[derive(Debug, Classify)]
enum ToolError {
    #[classify(transient)]
    Timeout,
    #[classify(fatal)]
    Unauthorized,
    #[classify(refused)]
    Refused(tenacious::Refused),
}

impl From<Elapsed> for ToolError {
    fn from(_: Elapsed) -> Self {
        ToolError::Timeout
    }
}

/// A body that holds nothing across an await.
macro_rules! trivial_body {
    ($id:expr) => {{
        let id = std::hint::black_box($id);
        if id == u64::MAX {
            return Err(ToolError::Unauthorized);
        }
        Ok(id.wrapping_mul(31))
    }};
}

/// A body that holds a 4 KiB buffer across an await, as one reading a
/// response into a stack buffer would.
macro_rules! big_local_body {
    ($id:expr) => {{
        let mut buffer = [0u8; 4096];
        buffer[0] = std::hint::black_box(1);
        tokio::task::yield_now().await;
        let sum: u64 = buffer.iter().map(|&b| u64::from(b)).sum();
        if sum == 0 {
            return Err(ToolError::Timeout);
        }
        Ok(sum.wrapping_add($id))
    }};
}

/// A body that awaits another future which itself keeps a timer: its state
/// is nested inside the attempt's.
macro_rules! timer_body {
    ($id:expr) => {{
        tokio::time::sleep(Duration::from_millis(1)).await;
        Ok::<u64, ToolError>($id)
    }};
}

async fn trivial(id: u64) -> Result<u64, ToolError> {
    trivial_body!(id)
}

#[retry]
async fn trivial_retried(id: u64) -> Result<u64, ToolError> {
    trivial_body!(id)
}

async fn big_local(id: u64) -> Result<u64, ToolError> {
    big_local_body!(id)
}

#[retry(max = 5, base = "10ms", jitter = "decorrelated")]
async fn big_local_retried(id: u64) -> Result<u64, ToolError> {
    big_local_body!(id)
}

async fn timer(id: u64) -> Result<u64, ToolError> {
    timer_body!(id)
}

#[retry]
async fn timer_retried(id: u64) -> Result<u64, ToolError> {
    timer_body!(id)
}

/// A tool call as most are: borrowed arguments, an await on the network.
macro_rules! tool_call_body {
    ($query:expr, $limit:expr) => {{
        tokio::task::yield_now().await;
        if $query.is_empty() {
            return Err(ToolError::Unauthorized);
        }
        Ok($query.len().min($limit) as u64)
    }};
}

async fn tool_call(query: &str, limit: usize) -> Result<u64, ToolError> {
    tool_call_body!(query, limit)
}

#[retry]
async fn tool_call_retried(query: &str, limit: usize) -> Result<u64, ToolError> {
    tool_call_body!(query, limit)
}

static BUDGET: RetryBudget = RetryBudget::new();

/// Every key that adds state: the timeout's own timer is part of the
/// attempt, not of the allowance, so it is compared with a plain fn that
/// runs its body under `tokio::time::timeout`.
#[retry(timeout = "1s", deadline = "10s", budget = BUDGET)]
async fn guarded_retried(id: u64) -> Result<u64, ToolError> {
    trivial_body!(id)
}

async fn guarded(id: u64) -> Result<u64, ToolError> {
    match tokio::time::timeout(Duration::from_secs(1), async { trivial_body!(id) }).await {
        Ok(result) => result,
        Err(_) => Err(ToolError::Timeout),
    }
}

/// Checks the allowance and reports the figures, so `--nocapture` shows them.
fn assert_within_allowance(name: &str, plain: usize, retried: usize) {
    // A workspace build unifies feature `tracing` into the runtime (the
    // feature tests enable it): its engine then holds its spans' pointer.
    let allowed = plain + size_of::<Sleep>() + SLACK + tenacious::__private::SPANS_BYTES;
    println!(
        "{name}: plain {plain} B, #[retry] {retried} B (+{} B), allowed {allowed} B",
        retried.saturating_sub(plain)
    );
    assert!(
        retried <= allowed,
        "{name}: the #[retry] future is {retried} B, over the plain {plain} B \
         + Sleep {} B + {SLACK} B",
        size_of::<Sleep>()
    );
}

#[test]
fn a_trivial_body() {
    assert_within_allowance(
        "trivial",
        size_of_val(&trivial(1)),
        size_of_val(&trivial_retried(1)),
    );
}

#[test]
fn a_body_holding_a_big_local_across_an_await() {
    let plain = size_of_val(&big_local(1));
    assert!(plain > 4096, "the buffer is held across the await");
    assert_within_allowance("big local", plain, size_of_val(&big_local_retried(1)));
}

#[test]
fn a_body_awaiting_a_timer() {
    assert_within_allowance(
        "timer",
        size_of_val(&timer(1)),
        size_of_val(&timer_retried(1)),
    );
}

#[test]
fn a_body_awaiting_with_borrowed_arguments() {
    assert_within_allowance(
        "tool call",
        size_of_val(&tool_call("rust", 10)),
        size_of_val(&tool_call_retried("rust", 10)),
    );
}

#[test]
fn a_body_under_timeout_deadline_and_budget() {
    assert_within_allowance(
        "timeout, deadline, budget",
        size_of_val(&guarded(1)),
        size_of_val(&guarded_retried(1)),
    );
}

/// A guard that lets every attempt go.
#[derive(Debug)]
struct Open;

impl Guard for Open {
    fn admit(&self, _: &NextAttempt) -> Admit {
        Admit::Go
    }
    fn observe(&self, _: &Outcome) {}
}

static OPEN: Open = Open;

/// A guard adds the pacing before the first attempt and after each wait,
/// whose state shares space with the attempt and the backoff.
#[retry(guard = OPEN, budget = BUDGET)]
async fn paced_retried(id: u64) -> Result<u64, ToolError> {
    timer_body!(id)
}

#[test]
fn a_body_under_a_guard() {
    assert_within_allowance(
        "guard",
        size_of_val(&timer(1)),
        size_of_val(&paced_retried(1)),
    );
}

#[retry]
async fn failure_retried(id: u64) -> Result<u64, Failure<ToolError>> {
    trivial_body!(id)
}

#[test]
fn a_body_returning_failure() {
    // Declaring `Failure<E>` asks for the attempts' records: a `Vec` held
    // for the whole call, on top of the allowance.
    assert_within_allowance(
        "Failure<E>",
        size_of_val(&trivial(1)) + size_of::<Vec<AttemptRecord>>(),
        size_of_val(&failure_retried(1)),
    );
}
