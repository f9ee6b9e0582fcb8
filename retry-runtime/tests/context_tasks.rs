//! The attempt context stays with the attempt's own task: a task spawned
//! inside an attempt, on a `LocalSet` or on a runtime a sync attempt drives,
//! sees no attempt, is not nested, and counts toward no key.
use std::cell::Cell;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use tenacious_runtime::{Attempt, IdempotencyKey, Policy};

const POLICY: Policy = Policy::new().max(3).base(Duration::from_millis(1));

/// What a task spawned inside an attempt sees: whether it is in an attempt,
/// and how many attempts its own `max = 3` policy makes.
async fn spawned_view() -> (bool, u32) {
    let seen = Attempt::current().is_some();
    let attempts = std::sync::atomic::AtomicU32::new(0);
    let _ = POLICY
        .retry(|| {
            attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async { Err::<(), _>(io::Error::from(io::ErrorKind::TimedOut)) }
        })
        .await;
    (seen, attempts.into_inner())
}

#[tokio::test(start_paused = true)]
async fn a_local_set_task_spawned_in_an_attempt_sees_no_attempt() {
    let views = Rc::new(Cell::new(None));
    let outer_key = Rc::new(Cell::new(None::<IdempotencyKey>));
    let result = POLICY
        .retry(|| {
            let views = Rc::clone(&views);
            let outer_key = Rc::clone(&outer_key);
            async move {
                outer_key.set(Attempt::current().map(|a| a.idempotency_key()));
                let local = tokio::task::LocalSet::new();
                let view = local
                    .run_until(async { tokio::task::spawn_local(spawned_view()).await.unwrap() })
                    .await;
                views.set(Some(view));
                // The attempt's own context is intact after the task ran.
                assert_eq!(
                    Attempt::current().map(|a| a.idempotency_key()),
                    outer_key.get()
                );
                Ok::<(), io::Error>(())
            }
        })
        .await;
    assert!(result.is_ok());
    assert_eq!(
        views.get(),
        Some((false, 3)),
        "the spawned task saw the attempt, or was held to one attempt as if nested"
    );
}

#[test]
fn a_task_of_a_runtime_driven_in_a_sync_attempt_sees_no_attempt() {
    let mut view = None;
    let result = POLICY.retry_blocking(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        view = Some(runtime.block_on(async { tokio::spawn(spawned_view()).await.unwrap() }));
        Ok::<(), io::Error>(())
    });
    assert!(result.is_ok());
    assert_eq!(view, Some((false, 3)));
}

#[test]
fn a_spawned_task_does_not_shift_the_keys_of_the_attempts_own_nested_calls() {
    // Attempt 1 drives a runtime whose task makes a retried call, then makes
    // a nested call of its own and fails; attempt 2 makes only the nested
    // call. Had the spawned task counted as nested, it would have taken the
    // nested call's place in attempt 1, and the two keys would differ.
    let mut keys = Vec::new();
    let result = POLICY.retry_blocking(|| {
        let attempt = Attempt::current().unwrap().number();
        if attempt == 1 {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            let _ = runtime.block_on(async { tokio::spawn(spawned_view()).await.unwrap() });
        }
        let _ = POLICY.retry_blocking(|| {
            keys.push(Attempt::current().unwrap().idempotency_key());
            Ok::<(), io::Error>(())
        });
        if attempt == 1 {
            Err(io::Error::from(io::ErrorKind::TimedOut))
        } else {
            Ok(())
        }
    });
    assert!(result.is_ok());
    assert_eq!(keys.len(), 2);
    assert_eq!(
        keys[0], keys[1],
        "the nested call's key moved between attempts"
    );
}
