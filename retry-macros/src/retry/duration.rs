//! Duration literals (`"200ms"`, `"1.5s"`, `"1m30s"`), parsed at compile
//! time into whole nanoseconds so the generated code holds only an
//! integer: the grammar `tenacious::config` reads files with too
//! (`tenacious-syntax`).
pub(crate) use tenacious_syntax::duration::{FORMAT, display, parse};
