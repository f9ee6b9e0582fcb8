//! What the Redis tests share.
pub mod redis_server;
