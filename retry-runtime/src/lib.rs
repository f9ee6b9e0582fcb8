//! The runtime of the `tenacious` retry toolkit: error classes, the
//! [`Classify`] trait, backoff and jitter, [`Policy`], and the one decision
//! engine that `#[retry]` and `Policy` share.
//!
//! Users depend on the `tenacious` facade, which re-exports everything here.
//! The code `#[retry]` and `#[derive(Classify)]` generate reaches this crate only
//! through the hidden `__private` module.
//!
//! # By hand
//!
//! A [`Policy`] holds the settings of `#[retry(...)]`, with the same
//! defaults, and runs closures:
//!
//! ```
//! use std::time::Duration;
//! use tenacious::{Classify, ErrorClass, Jitter, Policy, RetryOn};
//!
//! #[derive(Debug)]
//! enum FetchError { Timeout, NotFound }
//!
//! impl Classify for FetchError {
//!     fn classify(&self) -> ErrorClass {
//!         match self {
//!             FetchError::Timeout => ErrorClass::Transient,
//!             FetchError::NotFound => ErrorClass::Invalid,
//!         }
//!     }
//! }
//!
//! const POLICY: Policy = Policy::new()
//!     .max(4)
//!     .base(Duration::from_millis(50))
//!     .jitter(Jitter::Equal)
//!     .on(RetryOn::TRANSIENT);
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let mut attempts = 0;
//! let page = POLICY
//!     .retry(|| {
//!         attempts += 1;
//!         let attempt = attempts;
//!         async move { if attempt < 3 { Err(FetchError::Timeout) } else { Ok("<html>") } }
//!     })
//!     .await;
//! assert_eq!(page.unwrap(), "<html>");
//!
//! // `Invalid` is never retried: one attempt.
//! attempts = 0;
//! let missing = POLICY.retry_blocking(|| {
//!     attempts += 1;
//!     Err::<(), _>(FetchError::NotFound)
//! });
//! assert!(matches!(missing, Err(FetchError::NotFound)));
//! assert_eq!(attempts, 1);
//! # }
//! ```
//!
//! # What a retried call waits
//!
//! Retry `n` (1 for the first) waits a backoff drawn under `c = min(cap,
//! base * 2^(n-1))` as [`Jitter`] describes, never above `cap`. An error
//! whose [`Classify::retry_after`] gives a server hint waits that hint
//! *plus* the backoff: the hint is a floor, never a replacement, so a zero
//! or past hint behaves like none and callers told the same hint are spread
//! over their backoff window; a hint longer than `max_retry_after` ends
//! retrying at once. With a deadline, no attempt starts with less than
//! [`MIN_ATTEMPT`] (one tick of tokio's timer) left before it.
//! Tests make the jitter repeatable with [`seed_jitter`].
#![deny(missing_docs)]
// One audited block: the attempt context's pointer (see `context.rs`).
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod call;
mod classify;
mod clock;
mod engine;
mod guard;
mod http;
mod observe;
mod policy;
pub mod route;
pub mod stats;
mod stop;
mod task;
/// Not a stable API: the registry of named policies that
/// `#[retry(policy = "name")]` fns are bound by, for the config crate
/// (`tenacious-config`), which parses a set and registers it.
#[doc(hidden)]
pub mod registry {
    pub use crate::policy::bound::{PolicySet, missing, policy, register, registered};
}

/// Not a stable API: what the routes over base URLs of `tenacious-reqwest`
/// and `tenacious-tower` share (the path rule, the error a failed route
/// stands for), written once on the runtime's types and `&str`.
#[cfg(feature = "http")]
#[doc(hidden)]
pub mod __route_http {
    pub use crate::route::http::{Relative, inner, into_last_answer, last, source};
}

// The public modules, each defined in its concept's folder.
pub use call::{poll, stream};
#[doc(hidden)]
pub use guard::store;
#[cfg(feature = "http")]
pub use http::rate_limits;
pub use http::retry_after;
#[cfg(feature = "sse")]
pub use http::sse;
/// The parts of a policy's schedule that [`Explain`] hands out: each
/// retry's [`Window`](explain::Window), runs of equal windows
/// ([`Attempts`](explain::Attempts)) and the
/// [`WorstCase`](explain::WorstCase). `Explain` itself is at the root,
/// `tenacious::Explain`, its one path.
pub mod explain {
    pub use crate::policy::explain::{Attempts, Window, WorstCase};
}

pub use call::attempt::Attempt;
pub use classify::elapsed::{Elapsed, Limit};
pub use classify::failure::{AttemptRecord, Failure};
pub use classify::limits::Limits;
pub use classify::reject::Reject;
pub use classify::signals::Signals;
pub use classify::{Classified, Classify, ErrorClass};
pub use clock::MIN_ATTEMPT;
pub use engine::call_key::KeySource;
pub use engine::event::RetryEvent;
pub use engine::key::{IdempotencyKey, ParseKeyError};
pub use guard::breaker::{Breaker, BreakerState, BreakerStats};
pub use guard::budget::RetryBudget;
pub use guard::concurrency::Concurrency;
pub use guard::cooldown::Cooldown;
pub use guard::refused::{Refusable, Refused};
pub use guard::throttle::{Throttle, ThrottleStats};
pub use guard::{AdaptiveLimit, Sample, SampleOutcome};
pub use guard::{Admit, AttemptResult, Guard, NextAttempt, Outcome, PendingAdmit};
#[cfg(feature = "http")]
pub use http::class::HttpError;
pub use policy::Policy;
pub use policy::backoff::{Jitter, backoff_delay, seed_jitter};
pub use policy::explain::Explain;
pub use policy::nested::Nested;
pub use policy::retry_on::RetryOn;
pub use stop::StopReason;
pub use task::{Priority, Task};

/// Not a stable API: the paths the generated code uses.
#[doc(hidden)]
pub mod __private {
    pub use crate::call::driver::{
        Attempting, AttemptingBounded, AttemptingTimed, attempt, attempt_blocking, attempt_bounded,
        attempt_timed, sleep, sleep_blocking,
    };
    pub use crate::call::fallback_fn::{
        Answers, ByError, ByFailure, FallbackSignature, GiveUp, OneArgument, fall_back,
        fall_back_failure,
    };
    pub use crate::call::glue::{
        ElapsedInto, ElapsedNot, OutputOf, RefusableIf, bounded, pace_first, pace_first_blocking,
        pace_first_blocking_if, pace_first_blocking_refusable, pace_first_if, pace_first_refusable,
        policy_has_guards, policy_has_timeout, resume, resume_failure, step, step_failure,
        step_failure_held, step_held, timed_out, timed_out_as, wants_pace,
    };
    pub use crate::call::pace::{pace, pace_blocking};
    pub use crate::call::path_policy::{ElapsedIf, elapsed_into_if};
    pub use crate::call::shared_arg::SharedByEveryAttempt;
    pub use crate::call::when_by_ref::{WhenByRef, when};
    pub use crate::classify::derive::{RetryAfterField, WithOutput};
    pub use crate::classify::failure::Provenance;
    pub use crate::clock::Clock;
    pub use crate::engine::Engine;
    pub use crate::engine::call_key::{ArgHasher, ArgProbe, HashArg, KeySource, SkipArg};
    pub use crate::engine::hooks::{
        CheckFn, CheckShape, NotifyFn, RetryResult, WhenFn, always, checked, ignore,
    };
    pub use crate::guard::shared_static::{
        SharedBreaker, SharedBudget, SharedConcurrency, SharedCooldown, SharedGuard,
        SharedThrottle, shared_breaker, shared_budget, shared_concurrency, shared_cooldown,
        shared_guard, shared_throttle,
    };
    pub use crate::policy::bound::{BoundPolicy, policy_name};
    pub use crate::stats::CallStats;
    pub use crate::stream::{Captures, RetriedStream, StreamOutput, opened, port as stream_port};
    pub use crate::{
        Classify, ErrorClass, Jitter, Limits, Nested, Policy, Refusable, RetryEvent, RetryOn,
        Signals,
    };
    pub use ::core::ops::ControlFlow;
    pub use ::core::option::Option;
    pub use ::core::result::Result;
    pub use ::core::time::Duration;
    pub use ::futures_core::Stream;
    pub use ::std::borrow::Cow;
    pub use ::std::format;

    /// What feature `tracing` adds to every call's engine, and so to every
    /// `#[retry]` future: the pointer to its spans' state (`None` while
    /// nobody listens). `tests/future_size.rs` allows for it.
    pub const SPANS_BYTES: usize = if cfg!(feature = "tracing") {
        ::core::mem::size_of::<usize>()
    } else {
        0
    };
}
