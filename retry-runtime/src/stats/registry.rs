//! Every record that has counted something, in a list threaded through the
//! records themselves: joining it allocates nothing and takes no lock on
//! the call path.
//!
//! The list grows at its tail. Each link is a `OnceLock` set once, by the
//! one thread that won the record's `registered` flag, so a record joins
//! exactly once and the list can never form a cycle. Safe code throughout:
//! a thread only waits if another is setting the very same link at that
//! moment, and then for one pointer store.
use std::sync::OnceLock;

use super::CallStats;

/// The first record that joined.
static HEAD: OnceLock<&'static CallStats> = OnceLock::new();

/// Appends `record` (the caller has won its `registered` flag, so it is not
/// in the list yet).
pub(super) fn push(record: &'static CallStats) {
    let mut link = &HEAD;
    loop {
        if link.set(record).is_ok() {
            return;
        }
        // Taken: `get` sees the record that took it (`set` returns only
        // once the link is initialised), so walk on from there.
        if let Some(taken) = link.get() {
            link = taken.next_link();
        }
    }
}

/// The records in the order they joined.
pub(super) fn records() -> impl Iterator<Item = &'static CallStats> {
    std::iter::successors(HEAD.get().copied(), |record| {
        record.next_link().get().copied()
    })
}
