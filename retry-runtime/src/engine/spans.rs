//! The call's `tracing` spans as the engine holds them: [`CallSpans`], one
//! type whether feature `tracing` is on or off, so the engine's body says
//! what it tells the spans without a `cfg` at each place.
//!
//! With the feature, it is the pointer to the call's span state
//! ([`observe::Spans`](crate::observe::Spans): `None` unless a subscriber
//! wants the spans, one word in the engine, which
//! `__private::SPANS_BYTES` counts). Without it, it is zero-sized and
//! every method is an empty `#[inline]` fn, so the engine is what it would
//! be without the calls.
use std::time::Duration;

use crate::{ErrorClass, Policy, StopReason};

/// The span state of one call (see the module's docs).
#[derive(Debug)]
pub(crate) struct CallSpans {
    #[cfg(feature = "tracing")]
    spans: crate::observe::Spans,
}

/// The span of a running attempt, entered around each of its polls:
/// `tracing`'s `Span` with the feature; without it, a type with no value,
/// so the code that enters one compiles and is never reached.
#[cfg(feature = "tracing")]
pub(crate) type AttemptSpan = tracing::Span;

/// The span of a running attempt: with feature `tracing` off, no attempt
/// has one.
#[cfg(not(feature = "tracing"))]
#[derive(Debug)]
pub(crate) enum AttemptSpan {}

#[cfg(not(feature = "tracing"))]
impl AttemptSpan {
    /// Enters the span: never called, there is no span to enter.
    pub(crate) fn enter(&self) {
        match *self {}
    }
}

impl CallSpans {
    /// The spans of a call under `policy`: made only for a call with a
    /// statistics record, and only when a subscriber wants them.
    #[inline]
    pub(crate) fn new(policy: &Policy) -> Self {
        #[cfg(feature = "tracing")]
        {
            Self {
                spans: match policy.get_stats() {
                    Some(stats) => crate::observe::Spans::new(stats.name(), policy.get_max()),
                    None => crate::observe::Spans::NONE,
                },
            }
        }
        #[cfg(not(feature = "tracing"))]
        {
            let _ = policy;
            Self {}
        }
    }

    /// Whether a subscriber wants the call's spans (never, without the
    /// feature: a constant the compiler folds).
    #[inline]
    pub(crate) const fn is_on(&self) -> bool {
        #[cfg(feature = "tracing")]
        {
            self.spans.is_on()
        }
        #[cfg(not(feature = "tracing"))]
        {
            false
        }
    }

    /// Runs `report` (the events of an attempt's outcome) inside the
    /// call's span, if a subscriber wants it: the events are the call's.
    #[inline]
    pub(crate) fn in_call<R>(&self, report: impl FnOnce() -> R) -> R {
        #[cfg(feature = "tracing")]
        {
            let call = self.spans.call();
            let _entered = call.as_ref().map(tracing::Span::enter);
            report()
        }
        #[cfg(not(feature = "tracing"))]
        {
            report()
        }
    }

    /// The call succeeded at attempt `attempts`.
    #[inline]
    pub(crate) fn succeeded(&mut self, attempts: u32) {
        #[cfg(feature = "tracing")]
        if self.spans.is_on() {
            self.spans.succeeded(attempts);
        }
        #[cfg(not(feature = "tracing"))]
        let _ = attempts;
    }

    /// Attempt `number` failed with an error of `class`, `variant`; the
    /// call retries after the wait (`Ok`), or stops (`Err`).
    #[inline]
    pub(crate) fn failed(
        &mut self,
        number: u32,
        class: ErrorClass,
        variant: &'static str,
        next: Result<Duration, StopReason>,
    ) {
        #[cfg(feature = "tracing")]
        if self.spans.is_on() {
            self.spans.failed(number, class, variant, next);
        }
        #[cfg(not(feature = "tracing"))]
        let _ = (number, class, variant, next);
    }

    /// A retry's wait is being decided: `backoff` and the server's `hint`,
    /// in nanoseconds.
    #[inline]
    pub(crate) fn deciding(&mut self, backoff: u64, hint: u64) {
        #[cfg(feature = "tracing")]
        self.spans.deciding(backoff, hint);
        #[cfg(not(feature = "tracing"))]
        let _ = (backoff, hint);
    }

    /// The guard at place `at` of `Policy::chain` lengthened the retry's
    /// wait by `more` nanoseconds.
    #[inline]
    pub(crate) fn lengthened(&mut self, at: usize, more: u64) {
        #[cfg(feature = "tracing")]
        self.spans.lengthened(crate::observe::FROM_GUARD[at], more);
        #[cfg(not(feature = "tracing"))]
        let _ = (at, more);
    }

    /// The call stopped for `reason` after `attempts`, before an attempt
    /// it had decided on.
    #[inline]
    pub(crate) fn stopped_before_attempt(&mut self, attempts: u32, reason: StopReason) {
        #[cfg(feature = "tracing")]
        self.spans.stopped_before_attempt(attempts, reason);
        #[cfg(not(feature = "tracing"))]
        let _ = (attempts, reason);
    }

    /// The span of attempt `number`, if a subscriber wants it;
    /// `budget_left` gives the policy's budget's balance, asked only then.
    #[inline]
    pub(crate) fn attempt(
        &mut self,
        number: u32,
        budget_left: impl FnOnce() -> Option<u32>,
    ) -> Option<AttemptSpan> {
        #[cfg(feature = "tracing")]
        {
            if !self.spans.is_on() {
                return None;
            }
            self.spans.attempt(number, budget_left())
        }
        #[cfg(not(feature = "tracing"))]
        {
            let _ = (number, budget_left);
            None
        }
    }
}
