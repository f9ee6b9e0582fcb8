//! What a retried fn's arguments may carry: `#[cfg]` and `#[cfg_attr]`
//! (an argument configured out is gone from every attempt and from the
//! fingerprint of a nested call's key), and what a spawned call takes
//! (every attempt borrows the arguments: a `Send` but not `Sync` one goes
//! in an `Arc<Mutex<_>>`). Tests build with `cfg(test)`: an
//! argument under `#[cfg(not(test))]` is configured out.
use std::cell::Cell;
use std::io;
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};

use tenacious::{Attempt, IdempotencyKey, retry};

thread_local! {
    static ATTEMPTS: Cell<u32> = const { Cell::new(0) };
}

/// Fails with a transient error until the third attempt.
fn flaky() -> Result<(), io::Error> {
    let attempt = Attempt::current().unwrap().number();
    ATTEMPTS.with(|attempts| attempts.set(attempts.get() + 1));
    if attempt < 3 {
        return Err(io::Error::from(io::ErrorKind::TimedOut));
    }
    Ok(())
}

#[retry(base = "1ns", jitter = "none")]
fn configured(
    #[cfg(not(test))] removed: u32,
    #[cfg(test)] kept: u32,
    #[cfg_attr(test, allow(unused_variables))] unused: &str,
) -> Result<u32, io::Error> {
    flaky()?;
    Ok(kept * 2)
}

#[test]
fn an_argument_configured_out_is_gone_and_the_others_are_retried() {
    ATTEMPTS.with(|attempts| attempts.set(0));
    assert_eq!(configured(21, "x").unwrap(), 42);
    assert_eq!(ATTEMPTS.with(Cell::get), 3);
}

#[retry(max = 1)]
fn nested(
    #[cfg(not(test))] removed: u32,
    #[cfg(test)] kept: u32,
) -> Result<IdempotencyKey, io::Error> {
    let _ = kept;
    Ok(Attempt::current().unwrap().idempotency_key())
}

#[retry(max = 1)]
fn outer() -> Result<[IdempotencyKey; 3], io::Error> {
    Ok([nested(1)?, nested(1)?, nested(2)?])
}

#[test]
fn a_nested_call_is_keyed_by_the_arguments_configured_in() {
    let [one, again, two] = outer().unwrap();
    assert_eq!(one, again);
    assert_ne!(one, two);
}

#[retry(base = "1ns", jitter = "none")]
async fn configured_async(
    #[cfg(not(test))] removed: u32,
    #[cfg(test)] kept: u32,
) -> Result<u32, io::Error> {
    flaky()?;
    Ok(kept + 1)
}

#[tokio::test(start_paused = true)]
async fn an_async_fn_takes_configured_arguments_too() {
    ATTEMPTS.with(|attempts| attempts.set(0));
    assert_eq!(configured_async(1).await.unwrap(), 2);
    assert_eq!(ATTEMPTS.with(Cell::get), 3);
}

/// Every attempt borrows the arguments, so a spawned call takes the
/// `Receiver` (`Send`, not `Sync`) shared, and locks it in each attempt.
#[retry(max = 20, base = "1ms", jitter = "none")]
async fn next(rx: Arc<Mutex<Receiver<u32>>>) -> Result<u32, io::Error> {
    let received = rx.lock().unwrap().try_recv();
    received.map_err(|_| io::Error::from(io::ErrorKind::WouldBlock))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_taken_shared_is_spawned_and_retried_until_a_value_comes() {
    let (tx, rx) = mpsc::channel();
    let task = tokio::spawn(next(Arc::new(Mutex::new(rx))));
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    tx.send(7).unwrap();
    assert_eq!(task.await.unwrap().unwrap(), 7);
}
