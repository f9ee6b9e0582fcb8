//! Duration strings (`"200ms"`, `"1.5s"`, `"1m30s"`): the grammar of
//! `#[retry]`'s duration literals (`tenacious-syntax`), read at start-up
//! instead of at compile time, so the two accept the same strings with the
//! same values and say the same about a bad one.
pub(crate) use tenacious_syntax::duration::{FORMAT, parse};
