//! `Observation`: a failed tool call as the model should read it.
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use tenacious_runtime::{Classify, ErrorClass, Failure, StopReason};

use super::status::Status;

mod route;
pub use route::TriedTarget;

/// A failed tool call, structured for the model: the tool message an agent
/// loop appends so the model can decide its next step.
///
/// Build it with [`from_failure`](Observation::from_failure) from what a
/// retried call returned, or [`from_error`](Observation::from_error) from a
/// bare error. Serialises (with serde) as exactly these fields:
///
/// | field | value |
/// |---|---|
/// | `tool_call_id` | the id of the call the model made |
/// | `status` | what to do next, see [`Status`] |
/// | `error` | the error's `Display` |
/// | `class` | `"transient"`, `"rate_limited"`, `"invalid"` or `"fatal"` |
/// | `attempts` | attempts the call layer made (1 for a bare error) |
/// | `retry_after_ms` | how long to wait before calling again, in whole milliseconds, rounded up: the server's wait hint; for a call a guard refused, the wait until that guard admits again ([`Refused::retry_in`](tenacious_runtime::Refused::retry_in), [`Failure::retry_in`](tenacious_runtime::Failure::retry_in)); or a wait set with [`with_retry_after`](Observation::with_retry_after); `null` without one |
/// | `system_hint` | for a stream cut off after delivering items, [`Observation::partial_hint`]; for a call stopped by a shared guard, [`Observation::stop_hint`]; else the error's [`Classify::hint`], else [`Observation::default_hint`] for its class |
/// | `delivered` | only for a stream cut off after delivering items: how many reached the user (absent otherwise) |
///
/// ```
/// use std::time::Duration;
/// use tenacious::agent::{Observation, Status};
/// use tenacious::{Classify, ErrorClass};
///
/// #[derive(Debug)]
/// struct TooManyRequests;
/// impl std::fmt::Display for TooManyRequests {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str("429 Too Many Requests")
///     }
/// }
/// impl Classify for TooManyRequests {
///     fn classify(&self) -> ErrorClass { ErrorClass::RateLimited }
///     fn retry_after(&self) -> Option<Duration> { Some(Duration::from_secs(2)) }
/// }
///
/// let obs = Observation::from_error("call_7", &TooManyRequests);
/// assert_eq!(obs.status, Status::WaitAndRetry);
/// assert_eq!(obs.retry_after_ms, Some(2000));
/// assert_eq!(obs.system_hint, "rate limited: wait 2000 ms before calling this tool again, or do other work meanwhile");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Observation {
    /// The id of the tool call this answers, as the model sent it.
    pub tool_call_id: String,
    /// What the model should do next.
    pub status: Status,
    /// The error, as its `Display` writes it.
    pub error: String,
    /// The error's class.
    #[serde(with = "class_name")]
    pub class: ErrorClass,
    /// Attempts the call layer made before giving up (1 for a bare error).
    pub attempts: u32,
    /// How long to wait before calling again, in milliseconds (rounded up,
    /// so waiting this long is never too short): the server's hint, or
    /// the wait set by [`with_retry_after`](Observation::with_retry_after);
    /// `None` without one.
    pub retry_after_ms: Option<u64>,
    /// Advice for the model: the error's own hint, else one per class.
    pub system_hint: String,
    /// For a retried stream that failed after part of its output reached
    /// the user, how many items had: absent (`None`) otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered: Option<u64>,
    /// For a give-up a fallback answered, its answer: absent (`None`)
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// For a routed call or stream that no target served
    /// ([`from_route`](Observation::from_route)): each target tried, in
    /// order; absent (`None`) otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Vec<TriedTarget>>,
}

impl Observation {
    /// The observation of one failed attempt (`attempts` is 1).
    ///
    /// ```
    /// use tenacious::agent::{Observation, Status};
    ///
    /// let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
    /// let obs = Observation::from_error("call_1", &denied);
    /// assert_eq!(obs.status, Status::Escalate);
    /// assert_eq!(obs.attempts, 1);
    /// assert_eq!(obs.error, "permission denied");
    /// ```
    #[must_use]
    pub fn from_error<E>(tool_call_id: impl Into<String>, error: &E) -> Self
    where
        E: Classify + fmt::Display + ?Sized,
    {
        Self::build(tool_call_id.into(), error, 1, None, 0, error.retry_after())
    }

    /// The observation of a call that gave up after retries: the last
    /// attempt's error, and `attempts` as many as the call layer made.
    ///
    /// Prefer it to [`from_error`](Observation::from_error) on the
    /// `Failure` itself, whose `Display` is the retry story rather than the
    /// error the model should read, and which does not say why the call
    /// stopped: a call stopped by an open circuit breaker reads
    /// `"switch_direction"`, one stopped by a shared cooldown
    /// `"wait_and_retry"`, each with its [`stop_hint`](Observation::stop_hint).
    /// A retried stream that failed after delivering items reads
    /// `"partial_output"`, with `delivered` set and a hint that says not
    /// to call again for what the user already has, whatever stopped it.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::agent::{Observation, Status};
    /// use tenacious::Policy;
    ///
    /// let policy = Policy::new().max(4).base(Duration::ZERO);
    /// let failure = policy
    ///     .retry_blocking_failure(|| Err::<(), _>(io::Error::new(io::ErrorKind::TimedOut, "search timed out")))
    ///     .unwrap_err();
    /// let obs = Observation::from_failure("call_3", &failure);
    /// assert_eq!((obs.status, obs.attempts), (Status::RetryLater, 4));
    /// assert_eq!(obs.error, "search timed out");
    /// ```
    #[must_use]
    pub fn from_failure<E>(tool_call_id: impl Into<String>, failure: &Failure<E>) -> Self
    where
        E: Classify + fmt::Display,
    {
        let attempts = u32::try_from(failure.attempts().len()).unwrap_or(u32::MAX);
        Self::build(
            tool_call_id.into(),
            failure.last(),
            attempts,
            Some(failure.stop_reason()),
            failure.delivered(),
            // The refusing guard's wait when one stopped it, else the
            // last error's (`Failure::retry_in`).
            failure.retry_after(),
        )
    }

    fn build<E>(
        tool_call_id: String,
        error: &E,
        attempts: u32,
        stop: Option<StopReason>,
        delivered: u64,
        retry_after: Option<Duration>,
    ) -> Self
    where
        E: Classify + fmt::Display + ?Sized,
    {
        let class = error.classify();
        if delivered > 0 {
            // Whatever stopped it, the user has part of the answer: that
            // says more than the class or the stop.
            return Self {
                tool_call_id,
                status: Status::PartialOutput,
                error: error.to_string(),
                class,
                attempts,
                retry_after_ms: retry_after.map(ceil_millis),
                system_hint: Self::partial_hint(delivered),
                delivered: Some(delivered),
                fallback: None,
                route: None,
            };
        }
        let system_hint = match stop.and_then(|stop| Self::stop_hint(stop, retry_after)) {
            Some(hint) => hint.into_owned(),
            None => match error.hint() {
                Some(hint) => hint.into_owned(),
                None => Self::default_hint(class, retry_after).into_owned(),
            },
        };
        Self {
            tool_call_id,
            status: stop.map_or(Status::for_class(class), |stop| {
                Status::for_stop(stop, class)
            }),
            error: error.to_string(),
            class,
            attempts,
            retry_after_ms: retry_after.map(ceil_millis),
            system_hint,
            delivered: None,
            fallback: None,
            route: None,
        }
    }

    /// The observation of a call whose retries gave up and whose
    /// `#[retry(fallback = path)]` answered with `answer` instead: status
    /// `"fallback"`, the answer in `fallback`, the give-up's error and
    /// attempts, and a `system_hint` that says to use the answer as a best
    /// effort. Build it in the fallback, which has the [`Failure`].
    ///
    /// ```
    /// use std::io;
    /// use tenacious::agent::{Observation, Status};
    /// use tenacious::Policy;
    ///
    /// let failure = Policy::new()
    ///     .max(1)
    ///     .retry_blocking_failure(|| Err::<(), _>(io::Error::other("search is down")))
    ///     .unwrap_err();
    /// let obs = Observation::fallback("call_2", &failure, "no results (search is unavailable)");
    /// assert_eq!(obs.status, Status::Fallback);
    /// assert_eq!(obs.fallback.as_deref(), Some("no results (search is unavailable)"));
    /// assert_eq!(
    ///     obs.system_hint,
    ///     "the tool failed (exhausted, after 1 attempt) and a fallback answered instead: \
    ///      use its answer as a best effort, it may be stale, partial or a default"
    /// );
    /// ```
    #[must_use]
    pub fn fallback<E>(
        tool_call_id: impl Into<String>,
        failure: &Failure<E>,
        answer: impl Into<String>,
    ) -> Self
    where
        E: Classify + fmt::Display,
    {
        let mut obs = Self::from_failure(tool_call_id, failure);
        obs.status = Status::Fallback;
        let attempts = failure.attempts().len();
        let plural = if attempts == 1 { "" } else { "s" };
        obs.system_hint = format!(
            "the tool failed ({}, after {attempts} attempt{plural}) and a fallback answered instead: use its answer as a best effort, it may be stale, partial or a default",
            failure.stop_reason()
        );
        obs.fallback = Some(answer.into());
        obs
    }

    /// The `system_hint` of a stream that failed after it had delivered
    /// `delivered` items: "the answer was cut off after N items, which the
    /// user already has: do not call this tool again to repeat them;
    /// continue from where it stopped, or tell the user it was cut off".
    ///
    /// ```
    /// use tenacious::agent::Observation;
    ///
    /// assert!(Observation::partial_hint(3).starts_with("the answer was cut off after 3 items"));
    /// ```
    #[must_use]
    pub fn partial_hint(delivered: u64) -> String {
        let plural = if delivered == 1 { "" } else { "s" };
        format!(
            "the answer was cut off after {delivered} item{plural}, which the user already has: do not call this tool again to repeat them; continue from where it stopped, or tell the user it was cut off"
        )
    }

    /// The observation with `wait` as the time to wait before calling
    /// again (`retry_after_ms`), when the caller knows it better than the
    /// error did: a [`Breaker`](tenacious_runtime::Breaker)'s
    /// [`admits_in`](tenacious_runtime::Breaker::admits_in) for a call it stopped. A
    /// `system_hint` this module wrote is rewritten with the new wait; an
    /// error's own hint is kept.
    ///
    /// ```
    /// use std::io;
    /// use std::time::Duration;
    /// use tenacious::agent::Observation;
    ///
    /// let reset = io::Error::from(io::ErrorKind::ConnectionReset);
    /// // E.g. `PROVIDER.admits_in()` for a call a `Breaker` stopped.
    /// let obs = Observation::from_error("call_4", &reset)
    ///     .with_retry_after(Duration::from_millis(1500));
    /// assert_eq!(obs.retry_after_ms, Some(1500));
    /// assert_eq!(obs.system_hint, "temporary failure: try again in 1500 ms, or reach the goal another way");
    /// ```
    #[must_use]
    pub fn with_retry_after(mut self, wait: Duration) -> Self {
        let before = self.retry_after_ms.map(Duration::from_millis);
        let ours = |retry_after: Option<Duration>| {
            [
                StopReason::CircuitOpen,
                StopReason::Cooldown,
                StopReason::Guard,
            ]
            .into_iter()
            .filter_map(|stop| Self::stop_hint(stop, retry_after))
            .chain([Self::default_hint(self.class, retry_after)])
            .position(|hint| hint == self.system_hint)
        };
        let rewrite = ours(before);
        self.retry_after_ms = Some(ceil_millis(wait));
        if let Some(at) = rewrite {
            let wait = Some(wait);
            self.system_hint = match at {
                0 => Self::stop_hint(StopReason::CircuitOpen, wait),
                1 => Self::stop_hint(StopReason::Cooldown, wait),
                2 => Self::stop_hint(StopReason::Guard, wait),
                _ => None,
            }
            .unwrap_or_else(|| Self::default_hint(self.class, wait))
            .into_owned();
        }
        self
    }

    /// The `system_hint` for a call a shared guard stopped, or that may
    /// have been applied, whatever its last error said; `retry_after` is
    /// the wait, if known. `None` for the other reasons (the error's class
    /// says it better).
    ///
    /// | stop reason | hint |
    /// |---|---|
    /// | `circuit_open` | "this tool's provider is failing and its circuit breaker is open: do not call it again now; take another route (another tool or provider), or try again in N ms" (without a wait: "… or try it again much later") |
    /// | `cooldown` | "the provider asked every caller to wait: wait N ms before calling this tool again, or do other work meanwhile" (without a wait: "wait before calling …") |
    /// | `guard` | "a shared limit on this tool stopped the retries: do other work, or try again in N ms" (without a wait: "… or try again later") |
    /// | `not_idempotent` | "the request may have been applied before it failed: check whether it took effect before calling this tool again, so it is not done twice" |
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::StopReason;
    /// use tenacious::agent::Observation;
    ///
    /// let hint = Observation::stop_hint(StopReason::CircuitOpen, Some(Duration::from_secs(15))).unwrap();
    /// assert!(hint.contains("take another route"));
    /// assert!(hint.ends_with("or try again in 15000 ms"));
    /// assert_eq!(Observation::stop_hint(StopReason::Exhausted, None), None);
    /// ```
    #[must_use]
    pub fn stop_hint(
        reason: StopReason,
        retry_after: Option<Duration>,
    ) -> Option<Cow<'static, str>> {
        let hint = match (reason, retry_after) {
            (StopReason::CircuitOpen, Some(wait)) => format!(
                "this tool's provider is failing and its circuit breaker is open: do not call it again now; take another route (another tool or provider), or try again in {} ms",
                ceil_millis(wait)
            )
            .into(),
            (StopReason::CircuitOpen, None) => {
                "this tool's provider is failing and its circuit breaker is open: do not call it again now; take another route (another tool or provider), or try it again much later"
                    .into()
            }
            (StopReason::Cooldown, Some(wait)) => format!(
                "the provider asked every caller to wait: wait {} ms before calling this tool again, or do other work meanwhile",
                ceil_millis(wait)
            )
            .into(),
            (StopReason::Cooldown, None) => {
                "the provider asked every caller to wait: wait before calling this tool again, or do other work meanwhile"
                    .into()
            }
            (StopReason::Concurrency, _) => {
                "too many calls to this tool's provider are in flight and none finished in time: do other work, then call it again"
                    .into()
            }
            (StopReason::Guard, Some(wait)) => format!(
                "a shared limit on this tool stopped the retries: do other work, or try again in {} ms",
                ceil_millis(wait)
            )
            .into(),
            (StopReason::Guard, None) => {
                "a shared limit on this tool stopped the retries: do other work, or try again later"
                    .into()
            }
            (StopReason::NotIdempotent, _) => {
                "the request may have been applied before it failed: check whether it took effect before calling this tool again, so it is not done twice"
                    .into()
            }
            _ => return None,
        };
        Some(hint)
    }

    /// The `system_hint` for an error of `class` that brings no hint of its
    /// own; `retry_after` is the server's wait hint, if any.
    ///
    /// | class | hint |
    /// |---|---|
    /// | `transient` | "temporary failure: try again later, or reach the goal another way" (with a wait hint: "… try again in N ms, …") |
    /// | `rate_limited` | "rate limited: wait N ms before calling this tool again, or do other work meanwhile" (without a wait hint: "rate limited: wait before calling this tool again, or do other work meanwhile") |
    /// | `invalid` | "the request was rejected: fix the arguments as the error says; the same call will fail again" |
    /// | `fatal` | "a fault a human must fix: stop, do not retry, and tell the user what failed" |
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::ErrorClass;
    /// use tenacious::agent::Observation;
    ///
    /// let hint = Observation::default_hint(ErrorClass::RateLimited, Some(Duration::from_micros(1500)));
    /// assert!(hint.contains("wait 2 ms"));
    /// ```
    #[must_use]
    pub fn default_hint(class: ErrorClass, retry_after: Option<Duration>) -> Cow<'static, str> {
        match (class, retry_after) {
            (ErrorClass::Transient, Some(wait)) => format!(
                "temporary failure: try again in {} ms, or reach the goal another way",
                ceil_millis(wait)
            )
            .into(),
            (ErrorClass::Transient, None) => {
                "temporary failure: try again later, or reach the goal another way".into()
            }
            (ErrorClass::RateLimited, Some(wait)) => format!(
                "rate limited: wait {} ms before calling this tool again, or do other work meanwhile",
                ceil_millis(wait)
            )
            .into(),
            (ErrorClass::RateLimited, None) => {
                "rate limited: wait before calling this tool again, or do other work meanwhile"
                    .into()
            }
            (ErrorClass::Invalid, _) => {
                "the request was rejected: fix the arguments as the error says; the same call will fail again"
                    .into()
            }
            (ErrorClass::Fatal, _) => {
                "a fault a human must fix: stop, do not retry, and tell the user what failed".into()
            }
        }
    }
}

/// Whole milliseconds, rounded up and saturating: a model told to wait this
/// long never comes back before the server allows.
pub(super) fn ceil_millis(wait: Duration) -> u64 {
    u64::try_from(wait.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX)
}

/// `ErrorClass` as its `snake_case` name. Kept here, not as impls on
/// `ErrorClass`, so the class type itself carries no serde dependency.
mod class_name {
    use std::borrow::Cow;

    use serde::de::{self, Deserialize, Deserializer};
    use serde::ser::Serializer;

    use tenacious_runtime::ErrorClass;

    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's `with` passes a reference
    pub(super) fn serialize<S: Serializer>(class: &ErrorClass, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(class.as_str())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ErrorClass, D::Error> {
        let name = <Cow<'de, str>>::deserialize(d)?;
        ErrorClass::ALL
            .into_iter()
            .find(|class| class.as_str() == name)
            .ok_or_else(|| {
                de::Error::unknown_variant(
                    &name,
                    &["transient", "rate_limited", "invalid", "fatal"],
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millis_round_up_and_saturate() {
        assert_eq!(ceil_millis(Duration::ZERO), 0);
        assert_eq!(ceil_millis(Duration::from_nanos(1)), 1);
        assert_eq!(ceil_millis(Duration::from_millis(1500)), 1500);
        assert_eq!(ceil_millis(Duration::from_nanos(1_500_001)), 2);
        assert_eq!(ceil_millis(Duration::MAX), u64::MAX);
    }

    #[test]
    fn only_the_shared_guards_stops_override_the_class() {
        for reason in StopReason::ALL {
            for class in ErrorClass::ALL {
                let status = Status::for_stop(reason, class);
                let expected = match reason {
                    StopReason::CircuitOpen => Status::SwitchDirection,
                    StopReason::Cooldown | StopReason::Concurrency => Status::WaitAndRetry,
                    StopReason::PartialOutput => Status::PartialOutput,
                    StopReason::NotIdempotent => Status::VerifyFirst,
                    _ => Status::for_class(class),
                };
                assert_eq!(status, expected, "{reason} {class}");
                let hint = Observation::stop_hint(reason, None);
                let hinted = matches!(
                    reason,
                    StopReason::CircuitOpen
                        | StopReason::Cooldown
                        | StopReason::Concurrency
                        | StopReason::Guard
                        | StopReason::NotIdempotent
                );
                assert_eq!(hint.is_some(), hinted, "{reason}");
            }
        }
    }
}
