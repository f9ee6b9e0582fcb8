//! The guards shared through a real `redis-server` (feature `redis`): two
//! `static`s bound to one name stand for two processes.
#![cfg(feature = "redis")]

#[path = "support/redis_server.rs"]
mod redis_server;

use std::io;
use std::time::Duration;

use http::StatusCode;
use redis_server::RedisServer;
use tenacious::redis::{BindError, Store, StoreConfig};
use tenacious::{Cooldown, Failure, HttpError, Policy, RetryBudget, StopReason};

fn down() -> io::Error {
    io::Error::from(io::ErrorKind::ConnectionRefused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_budgets_bound_to_one_name_share_one_bucket_exactly() {
    static A: RetryBudget = RetryBudget::with_capacity(50);
    static B: RetryBudget = RetryBudget::with_capacity(50);
    const PA: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&A);
    const PB: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&B);
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    assert!(store.is_up());
    store.bind(&A, "search").unwrap();
    store.bind(&B, "search").unwrap();
    let mut attempts = 0;
    for policy in [PA, PB, PA, PB] {
        let result = policy
            .retry(|| {
                attempts += 1;
                async { Err::<(), _>(down()) }
            })
            .await;
        assert!(result.is_err());
    }
    // 50 tokens, 5 a retry: 10 retries in all, over 4 calls of both.
    assert_eq!(attempts, 4 + 10);
    assert_eq!(A.balance(), 0);
    assert_eq!(B.balance(), 0);
    let stats = store.stats();
    assert!(stats.round_trips >= 10, "{stats:?}");
    assert_eq!(stats.local_decisions, 0, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_closed_by_one_process_holds_the_other() {
    static A: Cooldown = Cooldown::new();
    static B: Cooldown = Cooldown::new();
    const PA: Policy = Policy::new().max(1).cooldown(&A);
    const PB: Policy = Policy::new().max(1).cooldown(&B);
    let redis = RedisServer::start();
    let store = Store::connect_with(
        &redis.url(),
        StoreConfig::new().refresh(Duration::from_millis(10)),
    )
    .await
    .unwrap();
    store.bind(&A, "openai").unwrap();
    store.bind(&B, "openai").unwrap();
    let limited = HttpError::new(StatusCode::TOO_MANY_REQUESTS)
        .with_retry_after(Some(Duration::from_secs(30)));
    let _ = PA.retry(|| async { Err::<(), _>(limited) }).await;
    store.sync().await;
    assert!(B.is_closed(), "B mirrors A's closing");
    let left = B.reopens_in_at(std::time::Instant::now());
    assert!(
        left > Duration::from_secs(29) && left <= Duration::from_secs(30),
        "{left:?}"
    );
    // B's next call would wait 30 s: past `max_retry_after` of 1 s, it
    // stops before its first attempt.
    const SHORT: Policy = PB.max_retry_after(Duration::from_secs(1));
    let mut attempts = 0;
    let result: Result<(), Failure<HttpError>> = SHORT
        .retry(|| {
            attempts += 1;
            async { Ok(()) }
        })
        .await;
    let failure = result.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Cooldown);
    assert_eq!(attempts, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guard_binds_once_and_a_name_is_a_hash_tag() {
    static A: RetryBudget = RetryBudget::new();
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    assert_eq!(store.bind(&A, ""), Err(BindError::BadName(String::new())));
    assert_eq!(
        store.bind(&A, "a{b}"),
        Err(BindError::BadName("a{b}".to_owned()))
    );
    store.bind(&A, "ok").unwrap();
    assert_eq!(store.bind(&A, "ok"), Err(BindError::AlreadyBound));
}
