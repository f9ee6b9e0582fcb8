//! [`Observation::from_route`]: a route that no target served, as the
//! model reads it, and [`TriedTarget`], each target it tried.
use std::fmt;

use serde::{Deserialize, Serialize};
use tenacious_runtime::route::RouteFailure;
use tenacious_runtime::{Classify, StopReason};

use super::Observation;

/// One target a failed route tried, as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TriedTarget {
    /// The target's name (a model, a deployment, a provider).
    pub target: String,
    /// Attempts made there: 0 when it was skipped (an open breaker, a
    /// context window too small, a cut stream it cannot continue).
    pub attempts: u32,
    /// Why its policy gave up: a [`StopReason`] as one snake_case word.
    pub stop: String,
    /// Its last error, as its `Display` writes it.
    pub error: String,
}

impl Observation {
    /// The observation of a routed call or stream that no target served:
    /// the error that decided it — the last target's, or the one that cut
    /// a stream after it delivered items ([`RouteFailure::cause`]) — read
    /// as [`from_failure`](Observation::from_failure) reads a give-up,
    /// `attempts` summed over the targets, and `route` listing each target
    /// tried with its attempts, stop and error.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// use std::io;
    /// use tenacious::agent::{Observation, Status};
    /// use tenacious::route::{Route, Target};
    /// use tenacious::Policy;
    ///
    /// let route = Route::builder("docs-observe")
    ///     .target(Target::new("docs-observe-a", ()).policy(Policy::new().max(2)))
    ///     .target(Target::new("docs-observe-b", ()).policy(Policy::new().max(1)))
    ///     .build()
    ///     .unwrap();
    /// let failure = route
    ///     .call(|_| async { Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused)) })
    ///     .await
    ///     .unwrap_err();
    /// let obs = Observation::from_route("call_9", &failure);
    /// assert_eq!((obs.status, obs.attempts), (Status::RetryLater, 3));
    /// let route = obs.route.unwrap();
    /// assert_eq!((route[0].target.as_str(), route[0].attempts), ("docs-observe-a", 2));
    /// assert_eq!(route[1].stop, "exhausted");
    /// # }
    /// ```
    #[must_use]
    pub fn from_route<E>(tool_call_id: impl Into<String>, failure: &RouteFailure<E>) -> Self
    where
        E: Classify + fmt::Display,
    {
        let attempts = failure
            .tried()
            .iter()
            .fold(0_u32, |sum, tried| sum.saturating_add(tried.attempts()));
        let mut observation = match failure.cause() {
            Some(cause) => Self::build(
                tool_call_id.into(),
                cause.error(),
                attempts,
                Some(cause.stop_reason()),
                failure.delivered(),
                cause.error().retry_after(),
            ),
            // The route's deadline passed before any target was tried.
            None => Self::build(
                tool_call_id.into(),
                failure,
                attempts,
                Some(StopReason::Deadline),
                failure.delivered(),
                None,
            ),
        };
        observation.route = Some(
            failure
                .tried()
                .iter()
                .map(|tried| TriedTarget {
                    target: tried.target().to_owned(),
                    attempts: tried.attempts(),
                    stop: tried.stop_reason().as_str().to_owned(),
                    error: tried.error().to_string(),
                })
                .collect(),
        );
        observation
    }
}
