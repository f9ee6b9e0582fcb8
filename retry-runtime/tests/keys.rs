//! Random idempotency keys come from the OS, not from the jitter RNG: they
//! cannot be repeated by seeding, by threads or processes seeded alike, or
//! by a forked child; and drawing one shifts no delay.
use std::collections::HashSet;
use std::io;
use std::time::Duration;

use tenacious_runtime::{Attempt, IdempotencyKey, Policy, seed_jitter};

/// The key of one logical call, read by its first attempt.
fn one_call_key() -> IdempotencyKey {
    let mut key = None;
    let _ = Policy::new().max(1).retry_blocking(|| {
        key = Attempt::current().map(|a| a.idempotency_key());
        Ok::<(), io::Error>(())
    });
    key.expect("the attempt saw its key")
}

#[test]
fn seeding_the_jitter_twice_does_not_repeat_a_key() {
    seed_jitter(7);
    let first = one_call_key();
    seed_jitter(7);
    let second = one_call_key();
    assert_ne!(first, second, "two calls after the same seed share a key");
}

#[test]
fn sixteen_threads_draw_distinct_keys() {
    let threads: Vec<_> = (0..16)
        .map(|_| {
            std::thread::spawn(|| {
                // Seeded alike, as tests and simulations do.
                seed_jitter(1);
                (0..2_000).map(|_| one_call_key()).collect::<Vec<_>>()
            })
        })
        .collect();
    let mut all = HashSet::new();
    for thread in threads {
        for key in thread.join().unwrap() {
            assert!(all.insert(key), "{key} drawn twice");
        }
    }
    assert_eq!(all.len(), 32_000);
}

/// The delays a call makes, with or without its body reading its key.
fn delays(read_key: bool) -> Vec<Duration> {
    let mut seen = Vec::new();
    let _ = Policy::new()
        .max(5)
        .base(Duration::from_nanos(1))
        .retry_blocking_with(
            || {
                if read_key {
                    let _ = Attempt::current().map(|a| a.idempotency_key());
                }
                Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut))
            },
            |_| true,
            |_, event| seen.push(event.delay),
        );
    seen
}

#[test]
fn drawing_a_key_does_not_shift_the_jitter() {
    for seed in 0..10 {
        seed_jitter(seed);
        let without = delays(false);
        seed_jitter(seed);
        let with = delays(true);
        assert_eq!(without, with, "seed {seed}");
        assert_eq!(with.len(), 4);
    }
}

#[cfg(unix)]
#[test]
fn a_forked_child_draws_keys_of_its_own() {
    let _ = one_call_key();
    let mut fds = [0; 2];
    // SAFETY: `pipe` writes two descriptors into the array it is given.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let [read_end, write_end] = fds;
    // SAFETY: the child only draws a key (a system call and thread-locals
    // of this thread), writes it to the pipe and exits at once, without
    // running destructors or touching locks another thread may hold.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let bytes = one_call_key().as_u128().to_be_bytes();
        // SAFETY: writing 16 bytes from a live buffer to our pipe, then
        // ending the child.
        unsafe {
            let _ = libc::write(write_end, bytes.as_ptr().cast(), bytes.len());
            libc::_exit(0);
        }
    }
    let parent_key = one_call_key();
    let mut bytes = [0u8; 16];
    // SAFETY: reading at most 16 bytes into a live buffer; waiting for our
    // own child.
    let read = unsafe {
        let read = libc::read(read_end, bytes.as_mut_ptr().cast(), bytes.len());
        let mut status = 0;
        let _ = libc::waitpid(pid, &raw mut status, 0);
        libc::close(read_end);
        libc::close(write_end);
        read
    };
    assert_eq!(read, 16, "the child wrote no key");
    let child_key = IdempotencyKey::from_u128(u128::from_be_bytes(bytes));
    assert_ne!(
        child_key, parent_key,
        "the child repeated its parent's next key"
    );
}
