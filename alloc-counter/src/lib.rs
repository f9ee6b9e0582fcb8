//! A global allocator that counts each thread's heap allocations: the
//! harness of the tests that check the retry loop allocates nothing
//! (`tests/alloc.rs` of the root package and of `retry-runtime`).
//!
//! A test binary installs it, then counts around the code under test, on
//! its own thread only, so the test harness's threads add no noise:
//!
//! ```
//! use tenacious_alloc_counter::{Counting, allocations_in};
//!
//! #[global_allocator]
//! static GLOBAL: Counting = Counting;
//!
//! let (_, counted) = allocations_in(|| std::hint::black_box(vec![1u8; 16]));
//! assert_eq!(counted, 1);
//! let (_, counted) = allocations_in(|| std::hint::black_box(1 + 1));
//! assert_eq!(counted, 0);
//! ```
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards every call to [`System`], counting the allocations
/// (`alloc`, `alloc_zeroed`, `realloc`) the calling thread makes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

thread_local! {
    // A `Cell` of a type without drop glue, const-initialised: touching it
    // never allocates, so counting cannot recurse.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: allocations during the thread's teardown are nobody's.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is forwarded to `System` unchanged; counting touches
// only a const-initialised thread-local, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as `alloc`; `ptr` came from this allocator, so from `System`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// The heap allocations this thread has made so far (with [`Counting`]
/// installed as the global allocator; always 0 otherwise). Read it before
/// and after an `await` to count across one.
#[must_use]
pub fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Runs `f`, returning its value and the heap allocations this thread made
/// meanwhile.
pub fn allocations_in<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = allocations();
    let value = f();
    (value, allocations() - before)
}

/// Awaits `future`, returning its output and the heap allocations this
/// thread made meanwhile (across its awaits too: on a current-thread
/// runtime nothing else runs on this thread in between but the runtime).
pub async fn allocations_awaiting<F: Future>(future: F) -> (F::Output, u64) {
    let before = allocations();
    let value = future.await;
    (value, allocations() - before)
}
