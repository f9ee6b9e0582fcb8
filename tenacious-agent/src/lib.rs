//! The layers of the `tenacious` retry toolkit above the call: what an
//! agent's loop needs that no backoff gives, and faults to test it with.
//!
//! - `agent` (feature `agent`): observations for the model, the task
//!   guard, decision retry, call fingerprints and cost.
//! - [`chaos`]: seeded fault injection, typed failures classified like
//!   real tool errors.
//!
//! Users reach both through the `tenacious` facade, as `tenacious::agent`
//! (its feature `agent`) and `tenacious::chaos` (always there). Everything
//! here is built on the runtime's public API (`Classify`, `ErrorClass`,
//! `Failure`, `StopReason`, …), so the core carries neither these layers
//! nor the serde they bring.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "agent")]
pub mod agent;
pub mod chaos;
