//! The runtime of the `tenacious` retry toolkit.
//!
//! Users depend on the `tenacious` facade, which re-exports everything here.
//! The code `#[retry]` and `#[derive(Classify)]` generate reaches this crate only
//! through the hidden [`__private`] module.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod backoff;
mod classify;
mod engine;
#[cfg(feature = "http")]
mod http_class;
mod policy;
#[cfg(feature = "reqwest")]
mod reqwest_class;
pub mod retry_after;
mod run;

pub use backoff::{Jitter, seed_jitter};
pub use classify::{Classify, ErrorClass};
pub use engine::{RetryEvent, StopReason};
#[cfg(feature = "http")]
pub use http_class::HttpError;
pub use policy::{Policy, RetryOn};

/// Not a stable API: the paths the generated code uses.
#[doc(hidden)]
pub mod __private {
    pub use crate::engine::{Engine, NotifyFn, RetryResult, WhenFn, always, ignore};
    pub use crate::run::{sleep, sleep_blocking};
    pub use crate::{Classify, ErrorClass, Jitter, Policy, RetryEvent, RetryOn};
    pub use ::core::ops::ControlFlow;
    pub use ::core::option::Option;
    pub use ::core::result::Result;
    pub use ::core::time::Duration;
    pub use ::std::borrow::Cow;
}
