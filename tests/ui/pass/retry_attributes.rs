// Doc comments, other attributes (before and after `#[retry]`), inner
// attributes and visibilities are kept.
#![deny(missing_docs)]
//! Crate docs.

use tenacious::{Classify, ErrorClass, retry};

/// The error.
#[derive(Debug)]
pub struct Flaky;

impl Classify for Flaky {
    fn classify(&self) -> ErrorClass {
        ErrorClass::Transient
    }
}

/// Documented, and must be used.
#[must_use = "the result says whether the call worked"]
#[retry(max = 2)]
#[inline]
pub fn documented() -> Result<u8, Flaky> {
    Ok(1)
}

#[cfg_attr(all(), allow(dead_code))]
#[retry]
pub(crate) fn crate_visible() -> Result<u8, Flaky> {
    #![allow(unused_variables)]
    let unused = 1;
    Ok(2)
}

mod inner {
    use super::Flaky;

    #[tenacious::retry]
    pub(super) async fn parent_visible() -> Result<(), Flaky> {
        Ok(())
    }
}

#[doc(hidden)]
#[retry]
pub unsafe fn unsafe_is_fine(pointer: *const u8) -> Result<u8, Flaky> {
    // SAFETY: the caller passes a valid pointer.
    Ok(unsafe { *pointer })
}

fn main() {
    let _ = documented();
    let _ = crate_visible();
    let _ = inner::parent_visible();
    let byte = 3u8;
    // SAFETY: `byte` is alive.
    assert_eq!(unsafe { unsafe_is_fine(&byte) }.unwrap(), 3);
}
