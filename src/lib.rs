//! # tenacious
//!
//! Declarative, classified retries for LLM agents and tool executors.
//!
//! Each retry decision is declared next to the error variant it belongs to,
//! with [`derive@Classify`], and the retry loop is generated at compile time
//! by [`macro@retry`] against a small runtime:
//!
//! - [`ErrorClass::Transient`] errors back off and retry,
//! - [`ErrorClass::RateLimited`] errors wait the server's hint (bounded by
//!   `max_retry_after`), else back off,
//! - [`ErrorClass::Invalid`] and [`ErrorClass::Fatal`] errors are returned
//!   after one attempt: retrying them unchanged cannot help.
//!
//! ```
//! use std::time::Duration;
//! use tenacious::{Classify, ErrorClass, retry};
//!
//! #[derive(Debug, Classify)]
//! enum ToolError {
//!     #[classify(transient)]
//!     Timeout,
//!     #[classify(rate_limited)]
//!     TooManyRequests { #[classify(retry_after)] wait: Option<Duration> },
//!     #[classify(invalid, hint = "fix the arguments: {0}")]
//!     BadArguments(String),
//!     #[classify(fatal, hint = "credentials are wrong; a human must fix them")]
//!     Unauthorized,
//! }
//!
//! #[retry(max = 3, base = "200ms", jitter = "full", on = Transient | RateLimited)]
//! async fn search(query: &str, calls: &mut u32) -> Result<String, ToolError> {
//!     *calls += 1;
//!     match *calls {
//!         1 => Err(ToolError::Timeout),
//!         2 => Err(ToolError::TooManyRequests { wait: Some(Duration::from_secs(1)) }),
//!         _ => Ok(format!("results for {query}")),
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let mut calls = 0;
//! assert_eq!(search("rust", &mut calls).await.unwrap(), "results for rust");
//! assert_eq!(calls, 3);
//!
//! let bad = ToolError::BadArguments("`limit` must be positive".into());
//! assert_eq!(bad.classify(), ErrorClass::Invalid);
//! assert_eq!(bad.hint().as_deref(), Some("fix the arguments: `limit` must be positive"));
//! # }
//! ```
//!
//! # A retry never makes things worse
//!
//! A per-attempt `timeout` and a whole-call `deadline` keep a hostile server
//! from hanging the call; [`Attempt::current`] gives each attempt the
//! [`IdempotencyKey`] its call shares, so a server can deduplicate a retried
//! side effect; a shared [`RetryBudget`] stops a fleet from amplifying an
//! outage; a retried call nested in another makes one attempt (see
//! [`Nested`]); and [`Failure<E>`](Failure) says why the call stopped.
//!
//! ```
//! use std::time::Duration;
//! use tenacious::{Attempt, Classify, Elapsed, Failure, RetryBudget, StopReason, retry};
//!
//! #[derive(Debug, Classify)]
//! enum ToolError {
//!     #[classify(transient)]
//!     Timeout(Elapsed),
//!     #[classify(invalid)]
//!     BadArguments,
//! }
//!
//! impl From<Elapsed> for ToolError {
//!     fn from(elapsed: Elapsed) -> Self {
//!         ToolError::Timeout(elapsed)
//!     }
//! }
//!
//! static TOOL_BUDGET: RetryBudget = RetryBudget::new();
//!
//! #[retry(max = 3, timeout = "2s", deadline = "10s", budget = TOOL_BUDGET)]
//! async fn create(sent: &mut Vec<String>) -> Result<u32, Failure<ToolError>> {
//!     let attempt = Attempt::current().unwrap();
//!     sent.push(attempt.idempotency_key().to_string()); // the Idempotency-Key header
//!     if attempt.number() == 1 {
//!         std::future::pending::<()>().await; // a server that never answers
//!     }
//!     Ok(attempt.number())
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let mut sent = Vec::new();
//! assert_eq!(create(&mut sent).await.unwrap(), 2);
//! assert_eq!(sent[0], sent[1]); // the retry resent the same key
//! assert_eq!(TOOL_BUDGET.balance(), 500); // the retry took 10 (after a timeout); the success gave them back
//!
//! #[retry(max = 3)]
//! async fn wrong() -> Result<(), Failure<ToolError>> {
//!     Err(ToolError::BadArguments)
//! }
//! let failure = wrong().await.unwrap_err();
//! assert_eq!(failure.stop_reason(), StopReason::NotRetryable);
//! assert_eq!(failure.to_string(), "gave up after 1 attempt (not retryable): invalid BadArguments");
//! # }
//! ```
//!
//! The same settings run closures by hand through [`Policy`], with the same
//! decision engine, so both behave identically.
//!
//! # Is retrying fixing faults or hiding them?
//!
//! Every `#[retry]` fn counts its calls in a `static` record of its own (no
//! lookup, no lock, no allocation), and [`stats::snapshot`] gives each fn's
//! retry rate, retry success rate, mean attempts per call and error
//! distribution, printable as a table. With the features `tracing` and
//! `metrics`, the same records emit one event per retry and per give-up and
//! feed counters and a histogram through the `metrics` facade.
//!
//! # One fleet, many processes
//!
//! The provider guards ([`Cooldown`], [`Throttle`], [`Breaker`]) and
//! [`RetryBudget`] are shared by the calls of one process. With the
//! feature `redis`, `tenacious::redis::Store` binds each to a name in a
//! Redis, and every process bound to the same name shares one state: one
//! script per decision on the server's clock, the common case decided in
//! process, and the local state again, within 50 ms, when Redis fails.
//!
//! # Read on
//!
//! The long form is the [`docs`] module, one chapter a module: the demo,
//! what a retry never does, HTTP, streams, fleets, policies from config,
//! errors from other crates, statistics and tracing, performance. Each
//! integration crate's README holds its own chapter.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use tenacious_macros::{Classify, retry};
// A glob, as for the runtime, so that `agent` is here whenever
// tenacious-agent has its feature, including when only this package's
// dev-dependencies turn it on (its tests and examples/agent.rs).
pub use tenacious_agent::*;
pub use tenacious_runtime::*;

/// Provider guards shared across processes through Redis: the
/// `tenacious-redis` crate (feature `redis`).
#[cfg(feature = "redis")]
#[doc(inline)]
pub use tenacious_redis as redis;

/// Named policies and their shared guards from TOML, JSON or environment
/// variables: the `tenacious-config` crate (feature `config`).
#[cfg(feature = "config")]
#[doc(inline)]
pub use tenacious_config as config;
// One crate per integration, on the runtime's public API; re-exported here
// under the path and feature it always had.
#[cfg(feature = "reqwest-middleware")]
#[doc(inline)]
pub use tenacious_reqwest as reqwest_middleware;
#[cfg(feature = "tower")]
#[doc(inline)]
pub use tenacious_tower as tower;

pub mod docs;

// The README's Rust blocks are doctests: it is compiled as the docs of
// this item, which exists only while doctests are collected.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

// So are the integration crates' READMEs, whose chapters use the crates
// through this facade, as users do. Outside doctests these items do not
// exist, so nothing is read from beyond this package when it is built.
#[cfg(all(doctest, feature = "redis"))]
#[doc = include_str!("../tenacious-redis/README.md")]
pub struct RedisReadmeDoctests;
#[cfg(all(doctest, feature = "tower"))]
#[doc = include_str!("../tenacious-tower/README.md")]
pub struct TowerReadmeDoctests;
#[cfg(all(doctest, feature = "reqwest-middleware"))]
#[doc = include_str!("../tenacious-reqwest/README.md")]
pub struct ReqwestReadmeDoctests;
// `tenacious::agent` is in every test build: the dev-dependency on
// tenacious-agent turns its feature on.
#[cfg(doctest)]
#[doc = include_str!("../tenacious-agent/README.md")]
pub struct AgentReadmeDoctests;

/// Not a stable API: the paths the code generated by `#[retry]` and
/// `#[derive(Classify)]` uses.
#[doc(hidden)]
pub mod __private {
    pub use tenacious_runtime::__private::*;
    // Over the runtime's, which refuses a `policy = "name"`: with feature
    // `config`, a name is looked up in the set `tenacious::config` loads.
    #[cfg(feature = "config")]
    pub use tenacious_config::__private::policy_name;
}
