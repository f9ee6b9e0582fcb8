//! Many processes sharing guards through one Redis (feature `redis`).
#![cfg(feature = "redis")]
