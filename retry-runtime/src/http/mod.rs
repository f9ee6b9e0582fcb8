//! What HTTP says about a failure: the classes of status codes and
//! [`HttpError`](crate::HttpError) (feature `http`), the `Classify` impls
//! for reqwest's errors (features `reqwest`, `reqwest-middleware`), the
//! server's wait headers (`retry_after`) and rate-limit headers
//! (`rate_limits`), and server-sent events (feature `sse`).
#[cfg(feature = "http")]
pub(crate) mod class;
#[cfg(feature = "http")]
pub mod rate_limits;
#[cfg(feature = "reqwest")]
pub(crate) mod reqwest_class;
#[cfg(feature = "reqwest-middleware")]
pub(crate) mod reqwest_middleware_class;
pub mod retry_after;
#[cfg(feature = "sse")]
pub mod sse;
