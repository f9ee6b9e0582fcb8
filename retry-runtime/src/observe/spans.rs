//! The `tracing` spans (feature `tracing`), the OpenTelemetry way: one
//! span per call with a statistics record, and one child span per attempt,
//! entered while the attempt runs, so the spans of the client it calls
//! (reqwest's, hyper's) nest under the attempt that sent them.
//!
//! Field names follow OpenTelemetry's semantic conventions where one
//! exists (`http.request.resend_count`, `error.type`, `otel.name`,
//! `otel.status_code`, read by `tracing-opentelemetry`), spelled here, not
//! taken from the semantic-conventions crate; the rest are `tenacious.*`.
//! No `gen_ai.*` name is used: the retry layer does not know the model
//! call's operation, which the caller's own span says.
//!
//! Integers are recorded signed: OpenTelemetry's are, and an unsigned
//! one is exported as a string.
//!
//! Nothing here runs unless a subscriber is interested in the call's span:
//! the engine then holds one box of span state, and otherwise `None`.
use std::time::Duration;

use tracing::Span;
use tracing::field::Empty;

use crate::{ErrorClass, StopReason};

/// The span state of one call; `None` when nobody listens.
#[derive(Debug, Default)]
pub(crate) struct Spans(Option<Box<State>>);

#[derive(Debug)]
struct State {
    call: Span,
    /// The attempt running, by number, until its outcome is known.
    attempt: Option<(u32, Span)>,
    /// What the wait before the next attempt came from, and how long.
    wait: Option<(&'static str, Duration)>,
    /// While a retry is decided: the largest share of its wait so far, and
    /// where it came from.
    from: (&'static str, u64),
}

/// What a retry's wait came from: the backoff, the server's hint, or a
/// guard that lengthened it (by its place in `Policy::chain`).
const FROM_BACKOFF: &str = "backoff";
const FROM_HINT: &str = "hint";
pub(crate) const FROM_GUARD: [&str; 4] = ["breaker", "cooldown", "throttle", "guard"];

impl Spans {
    pub(crate) const NONE: Self = Self(None);

    /// The call's span, if a subscriber wants it: named `retry`, with
    /// `otel.name` the record's name. A process that never set a
    /// subscriber pays one atomic load for it.
    #[inline]
    pub(crate) fn new(name: &'static str, max: u32) -> Self {
        if tracing::dispatcher::has_been_set() {
            Self::start(name, max)
        } else {
            Self::NONE
        }
    }

    #[cold]
    fn start(name: &'static str, max: u32) -> Self {
        let call = tracing::info_span!(
            target: "tenacious",
            "retry",
            otel.name = name,
            "otel.status_code" = Empty,
            "tenacious.fn" = name,
            tenacious.max = i64::from(max),
            tenacious.attempts = Empty,
            tenacious.outcome = Empty,
            tenacious.stop_reason = Empty,
            "error.type" = Empty,
        );
        if call.is_disabled() {
            return Self::NONE;
        }
        Self(Some(Box::new(State {
            call,
            attempt: None,
            wait: None,
            from: (FROM_BACKOFF, 0),
        })))
    }

    /// The call's span, to enter around its events, if a subscriber
    /// listens.
    #[inline]
    pub(crate) fn call(&self) -> Option<Span> {
        self.0.as_ref().map(|state| state.call.clone())
    }

    /// Whether a subscriber listens.
    #[inline]
    pub(crate) const fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// The span of attempt `number`, made as it is first polled (a child
    /// of the call's), to be entered around each poll; `budget_left` is
    /// the policy's budget's balance, if it has one.
    #[cold]
    pub(crate) fn attempt(&mut self, number: u32, budget_left: Option<u32>) -> Option<Span> {
        let state = self.0.as_mut()?;
        if let Some((running, span)) = &state.attempt
            && *running == number
        {
            return Some(span.clone());
        }
        let span = tracing::info_span!(
            target: "tenacious",
            parent: &state.call,
            "attempt",
            otel.name = "attempt",
            "otel.status_code" = Empty,
            tenacious.attempt = i64::from(number),
            "http.request.resend_count" = Empty,
            "error.type" = Empty,
            tenacious.class = Empty,
            tenacious.variant = Empty,
            tenacious.wait = Empty,
            tenacious.wait_ms = Empty,
            tenacious.budget_left = Empty,
        );
        if number > 1 {
            span.record("http.request.resend_count", i64::from(number - 1));
        }
        if let Some((from, wait)) = state.wait.take() {
            span.record("tenacious.wait", from);
            span.record("tenacious.wait_ms", millis(wait));
        }
        if let Some(left) = budget_left {
            span.record("tenacious.budget_left", i64::from(left));
        }
        state.attempt = Some((number, span.clone()));
        Some(span)
    }

    /// A retry's wait is decided: `backoff` and the server's `hint`, in
    /// nanoseconds; the larger share is where it came from, unless a guard
    /// lengthens it by more ([`lengthened`](Spans::lengthened)).
    #[inline]
    pub(crate) fn deciding(&mut self, backoff: u64, hint: u64) {
        if let Some(state) = self.0.as_mut() {
            state.from = if hint > 0 && hint >= backoff {
                (FROM_HINT, hint)
            } else {
                (FROM_BACKOFF, backoff)
            };
        }
    }

    /// The guard `guard` lengthened the retry's wait by `more` nanoseconds.
    #[inline]
    pub(crate) fn lengthened(&mut self, guard: &'static str, more: u64) {
        if let Some(state) = self.0.as_mut()
            && more > state.from.1
        {
            state.from = (guard, more);
        }
    }

    /// Attempt `number` failed with an error of `class`, `variant`; the
    /// call retries after the wait, or stops.
    #[cold]
    pub(crate) fn failed(
        &mut self,
        number: u32,
        class: ErrorClass,
        variant: &'static str,
        next: Result<Duration, StopReason>,
    ) {
        let Some(state) = self.0.as_mut() else {
            return;
        };
        if let Some((_, span)) = state.attempt.take() {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", variant);
            span.record("tenacious.class", class.as_str());
            span.record("tenacious.variant", variant);
        }
        match next {
            Ok(wait) => state.wait = Some((state.from.0, wait)),
            Err(reason) => {
                let call = &state.call;
                call.record("otel.status_code", "ERROR");
                call.record("error.type", variant);
                call.record("tenacious.attempts", i64::from(number));
                call.record("tenacious.outcome", "gave_up");
                call.record("tenacious.stop_reason", reason.label());
            }
        }
    }

    /// The call stopped for `reason` after `attempts`, before an attempt
    /// it had decided on (a late wake-up, a guard's refusal).
    #[cold]
    pub(crate) fn stopped_before_attempt(&mut self, attempts: u32, reason: StopReason) {
        let Some(state) = self.0.as_mut() else {
            return;
        };
        state.wait = None;
        let call = &state.call;
        call.record("otel.status_code", "ERROR");
        call.record("tenacious.attempts", i64::from(attempts));
        call.record("tenacious.outcome", "gave_up");
        call.record("tenacious.stop_reason", reason.label());
    }

    /// The call succeeded at attempt `attempts`.
    #[cold]
    pub(crate) fn succeeded(&mut self, attempts: u32) {
        let Some(state) = self.0.as_mut() else {
            return;
        };
        if let Some((_, span)) = state.attempt.take() {
            span.record("otel.status_code", "OK");
        }
        let call = &state.call;
        call.record("otel.status_code", "OK");
        call.record("tenacious.attempts", i64::from(attempts));
        call.record(
            "tenacious.outcome",
            if attempts > 1 { "recovered" } else { "success" },
        );
    }
}

/// Whole milliseconds, saturating; signed, as OpenTelemetry's integers
/// are (an unsigned one is exported as a string).
fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}
