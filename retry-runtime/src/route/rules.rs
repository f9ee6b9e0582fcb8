//! What a route does when a target gives up: [`Then`] and [`Rules`].
use crate::{ErrorClass, Reject, StopReason};

/// What a route does after a target gave up on a request.
///
/// Retrying the same target is the target's policy's to do, before it
/// gives up (its backoff, as for any call); waiting out a rate limit too,
/// up to the policy's `max_retry_after` — a longer hint gives up with
/// [`StopReason::HintTooLong`], which moves on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Then {
    /// Try the next target.
    Next,
    /// Try the next target that declares a larger context window than
    /// this one (see [`Target::context`](super::Target::context)),
    /// skipping the others.
    Larger,
    /// Stop the route: every target would answer the same (the request
    /// must change, or it may have been applied already).
    Stop,
}

/// How a route decides, for each way a target gives up, whether to move
/// on or stop: the defaults below, each of which can be overridden.
///
/// | the target gave up | default | why |
/// |---|---|---|
/// | it was silent: no answer within its [`silence`](super::Target::silence) limit | `Next`, after that one attempt | a target that does not answer is not retried |
/// | its breaker is open ([`CircuitOpen`](StopReason::CircuitOpen)), its cooldown, its concurrency limit or a guard refused ([`Cooldown`](StopReason::Cooldown), [`Concurrency`](StopReason::Concurrency), [`Guard`](StopReason::Guard)), the route's budget is spent ([`Budget`](StopReason::Budget)) | `Next` | skipped without an attempt; the others may serve |
/// | its attempts are spent ([`Exhausted`](StopReason::Exhausted)), or a rate limit's hint is longer than it waits ([`HintTooLong`](StopReason::HintTooLong)) | `Next` | transient at this target |
/// | its own deadline ([`Deadline`](StopReason::Deadline)) | `Next`, unless the route's deadline is spent too | |
/// | [`Invalid`](ErrorClass::Invalid), too long for its context window ([`Reject::ContextLength`]) | `Larger` | a larger window may serve it unchanged |
/// | `Invalid` otherwise: a content filter ([`Reject::ContentFilter`]), a request the caller must fix | `Stop` | every target would refuse it |
/// | [`Fatal`](ErrorClass::Fatal) (a revoked key, a spent quota) | `Next`, reported in the result | the fault is this target's account, not the request's |
/// | `Transient` or `RateLimited` that its policy does not retry | `Next` | |
/// | not idempotent and maybe applied ([`NotIdempotent`](StopReason::NotIdempotent)), output already delivered ([`PartialOutput`](StopReason::PartialOutput)), nested in another retried call ([`Nested`](StopReason::Nested)) | `Stop` | another target would apply it, or repeat the output, again |
///
/// An override by stop reason wins over one by class, which wins over
/// the defaults; `Reject` is read only when no override applies.
///
/// ```
/// use tenacious::route::{Rules, Then};
/// use tenacious::{ErrorClass, StopReason};
///
/// // A revoked key is a page for a human, not a reason to spend the fallback.
/// let rules = Rules::new().on_class(ErrorClass::Fatal, Then::Stop);
/// assert_eq!(rules.decide(StopReason::NotRetryable, ErrorClass::Fatal, None, false), Then::Stop);
/// assert_eq!(Rules::new().decide(StopReason::NotRetryable, ErrorClass::Fatal, None, false), Then::Next);
/// assert_eq!(Rules::new().decide(StopReason::CircuitOpen, ErrorClass::Transient, None, false), Then::Next);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Rules {
    classes: [Option<Then>; 4],
    stops: [Option<Then>; StopReason::ALL.len()],
    silent: Option<Then>,
}

impl Rules {
    /// The defaults of the table above.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            classes: [None; 4],
            stops: [None; StopReason::ALL.len()],
            silent: None,
        }
    }

    /// What to do when a target gives up with an error of `class`.
    #[must_use]
    pub const fn on_class(mut self, class: ErrorClass, then: Then) -> Self {
        self.classes[class.index()] = Some(then);
        self
    }

    /// What to do when a target gives up for `reason`; wins over
    /// [`on_class`](Rules::on_class).
    #[must_use]
    pub const fn on_stop(mut self, reason: StopReason, then: Then) -> Self {
        self.stops[reason.index()] = Some(then);
        self
    }

    /// What to do when a target was silent. Default: [`Then::Next`].
    #[must_use]
    pub const fn on_silence(mut self, then: Then) -> Self {
        self.silent = Some(then);
        self
    }

    /// What the route does after a target gave up for `reason` with an
    /// error of `class` (which said `rejected`); `silent`: the target
    /// did not answer within its silence limit.
    #[must_use]
    pub const fn decide(
        &self,
        reason: StopReason,
        class: ErrorClass,
        rejected: Option<Reject>,
        silent: bool,
    ) -> Then {
        if silent {
            return match self.silent {
                Some(then) => then,
                None => Then::Next,
            };
        }
        if let Some(then) = self.stops[reason.index()] {
            return then;
        }
        if let Some(then) = self.classes[class.index()] {
            return then;
        }
        match reason {
            StopReason::NotIdempotent | StopReason::PartialOutput | StopReason::Nested => {
                Then::Stop
            }
            StopReason::NotRetryable => match (class, rejected) {
                (ErrorClass::Invalid, Some(Reject::ContextLength)) => Then::Larger,
                (ErrorClass::Invalid, _) => Then::Stop,
                _ => Then::Next,
            },
            _ => Then::Next,
        }
    }

    /// What a routed stream does when a target fails after the consumer
    /// has content from it: an override for
    /// [`PartialOutput`](StopReason::PartialOutput) wins; else the error
    /// decides as if its target had not retried it — a content filter or
    /// a request to fix stops the route, a target that is down moves on
    /// (to a target that continues).
    pub(super) const fn after_commit(
        &self,
        class: ErrorClass,
        rejected: Option<Reject>,
        silent: bool,
    ) -> Then {
        if let Some(then) = self.stops[StopReason::PartialOutput.index()] {
            return then;
        }
        self.decide(StopReason::NotRetryable, class, rejected, silent)
    }
}
