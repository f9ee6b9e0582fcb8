//! Tests and benches of `tenacious` built with its `tracing` and `metrics`
//! features; the code is under `tests/` (and the bench is the root
//! package's `benches/stats.rs`). This library is empty.
