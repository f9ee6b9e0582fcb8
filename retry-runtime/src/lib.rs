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

mod attempt;
mod backoff;
mod bound;
mod breaker;
mod budget;
mod call_key;
mod classify;
mod classify_derive;
mod clock;
mod context;
mod cooldown;
mod driver;
mod elapsed;
mod engine;
mod event;
pub mod explain;
mod failure;
mod fallback_fn;
mod glue;
mod guard;
mod guard_name;
mod hooks;
#[cfg(feature = "http")]
mod http_class;
mod key;
mod limits;
mod nested;
mod observe;
mod pace;
mod path_policy;
mod policy;
pub mod poll;
#[cfg(feature = "http")]
pub mod rate_limits;
mod refused;
#[cfg(feature = "reqwest")]
mod reqwest_class;
#[cfg(feature = "reqwest-middleware")]
mod reqwest_middleware_class;
pub mod retry_after;
mod retry_on;
mod run;
mod shared_arg;
mod shared_static;
mod signals;
#[cfg(feature = "sse")]
pub mod sse;
mod start;
pub mod stats;
mod stop;
#[doc(hidden)]
pub mod store;
/// Not a stable API: the registry of named policies that
/// `#[retry(policy = "name")]` fns are bound by, for the config crate
/// (`tenacious-config`), which parses a set and registers it.
#[doc(hidden)]
pub mod registry {
    pub use crate::bound::{PolicySet, missing, policy, register, registered};
}
pub mod stream;
mod throttle;
mod when_by_ref;

pub use attempt::Attempt;
pub use backoff::{Jitter, backoff_delay, seed_jitter};
pub use breaker::{Breaker, BreakerState, BreakerStats};
pub use budget::RetryBudget;
pub use call_key::KeySource;
pub use classify::{Classified, Classify, ErrorClass};
pub use clock::MIN_ATTEMPT;
pub use cooldown::Cooldown;
pub use elapsed::{Elapsed, Limit};
pub use event::RetryEvent;
pub use explain::Explain;
pub use failure::{AttemptRecord, Failure};
pub use guard::{Admit, AttemptResult, Guard, NextAttempt, Outcome, PendingAdmit};
#[cfg(feature = "http")]
pub use http_class::HttpError;
pub use key::{IdempotencyKey, ParseKeyError};
pub use limits::Limits;
pub use nested::Nested;
pub use policy::Policy;
pub use refused::{Refusable, Refused};
pub use retry_on::RetryOn;
pub use signals::Signals;
pub use stop::StopReason;
pub use throttle::{Throttle, ThrottleStats};

/// Not a stable API: the paths the generated code uses.
#[doc(hidden)]
pub mod __private {
    pub use crate::bound::{BoundPolicy, policy_name};
    pub use crate::call_key::{ArgHasher, ArgProbe, HashArg, KeySource, SkipArg};
    pub use crate::classify_derive::{RetryAfterField, WithOutput};
    pub use crate::clock::Clock;
    pub use crate::driver::{
        Attempting, AttemptingBounded, AttemptingTimed, attempt, attempt_blocking, attempt_bounded,
        attempt_timed, sleep, sleep_blocking,
    };
    pub use crate::engine::Engine;
    pub use crate::failure::Provenance;
    pub use crate::fallback_fn::{
        Answers, ByError, ByFailure, FallbackSignature, GiveUp, OneArgument, fall_back,
        fall_back_failure,
    };
    pub use crate::glue::{
        ElapsedInto, ElapsedNot, OutputOf, RefusableIf, bounded, pace_first, pace_first_blocking,
        pace_first_blocking_if, pace_first_blocking_refusable, pace_first_if, pace_first_refusable,
        policy_has_guards, policy_has_timeout, resume, resume_failure, step, step_failure,
        step_failure_held, step_held, timed_out, timed_out_as, wants_pace,
    };
    pub use crate::hooks::{
        CheckFn, CheckShape, NotifyFn, RetryResult, WhenFn, always, checked, ignore,
    };
    pub use crate::pace::{pace, pace_blocking};
    pub use crate::path_policy::{ElapsedIf, elapsed_into_if};
    pub use crate::shared_arg::SharedByEveryAttempt;
    pub use crate::shared_static::{
        SharedBreaker, SharedBudget, SharedCooldown, SharedGuard, SharedThrottle, shared_breaker,
        shared_budget, shared_cooldown, shared_guard, shared_throttle,
    };
    pub use crate::stats::CallStats;
    pub use crate::stream::{Captures, RetriedStream, StreamOutput, opened, port as stream_port};
    pub use crate::when_by_ref::{WhenByRef, when};
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
