//! The agent layers above `#[retry]` (feature `agent`).
//!
//! Retrying happens at four layers: the link (HTTP), the call (`#[retry]`,
//! [`Policy`](tenacious_runtime::Policy)), the task and the decision. The call layer
//! absorbs short faults; this module holds the two layers above it, which
//! keep an agent from the ways it fails that no backoff can fix:
//! flip-flopping between failing approaches until the budget is gone,
//! repeating a side effect, and "self-healing" that hides a fault a human
//! must fix.
//!
//! - [`Observation`]: a failed tool call as the model should read it —
//!   class, attempts, the server's wait, and what to do next.
//! - [`TaskGuard`]: a [`Verdict`] after every round of the Thought → Action
//!   → Observation loop — continue, reflect, switch direction, escalate, or
//!   out of budget — each with its reason.
//! - [`DecisionRetry`]: generate → validate → re-ask with the latest
//!   validation error only, at most twice by default, then a [`Degraded`]
//!   result that says why.
//!
//! ```
//! use tenacious::agent::{TaskGuardConfig, Observation, TaskGuard, Verdict};
//!
//! let mut guard = TaskGuard::new(TaskGuardConfig::new().max_rounds(5));
//! let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
//!
//! // One round: the model called `read_file`, the call layer gave up.
//! let observation = Observation::from_error("call_1", &denied);
//! let verdict = guard.failed("read_file", r#"{"path":"/etc/shadow"}"#, &denied);
//! assert!(matches!(verdict, Verdict::Escalate { .. }));
//! assert_eq!(observation.status.as_str(), "escalate");
//! ```
mod config;
mod cost;
mod decision;
mod fingerprint;
mod guard;
mod observation;
mod status;
mod verdict;

pub use config::TaskGuardConfig;
pub use cost::Cost;
pub use decision::{Decision, DecisionRetry, Degraded, Reask};
pub use fingerprint::{CanonicalJson, Fingerprint};
pub use guard::TaskGuard;
pub use observation::{Observation, TriedTarget};
pub use status::Status;
pub use verdict::{Repeat, TaskLimit, Verdict};
