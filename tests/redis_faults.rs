//! Redis failing under the shared guards (feature `redis`).
#![cfg(feature = "redis")]
