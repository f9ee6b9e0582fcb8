//! The call drivers: how a retried call starts, runs its attempts with the
//! attempt context set, asks its guards before an attempt, and hands each
//! result to the engine, for the expansion of `#[retry]`, the `Policy`
//! loops, the poll driver and retried streams.
pub(crate) mod attempt;
pub(crate) mod context;
pub(crate) mod driver;
pub(crate) mod fallback_fn;
pub(crate) mod glue;
pub(crate) mod pace;
pub(crate) mod path_policy;
pub mod poll;
pub(crate) mod run;
pub(crate) mod shared_arg;
pub(crate) mod start;
pub mod stream;
pub(crate) mod when_by_ref;
