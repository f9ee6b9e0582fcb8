//! Features `redis`, `tracing`, `metrics`: a store's transitions, down at
//! start-up, up, down (killed), up (restarted), are each logged once on
//! the target `tenacious::redis` (WARN down, INFO up) however many
//! decisions and refreshes fail meanwhile, and counted in
//! `tenacious_store_{down,up}_total`; every decision taken in process in
//! `tenacious_store_local_decisions_total`. A key of the wrong type is no
//! transition: its script's errors are logged once, the store stays up.
//! Another process bound to a name with other settings logs that once
//! (WARN).
//!
//! The store's events come from tokio's worker threads (its refresh loop,
//! its round trips), so the subscriber and the recorder are the process's
//! global ones: one test in this file.
#![cfg(feature = "redis")]

#[path = "../../tests/support/redis_server.rs"]
mod redis_server;

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use redis_server::{RedisServer, free_port};
use tenacious::redis::{Store, StoreConfig};
use tenacious::{Cooldown, Policy, RetryBudget};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// The level and message of every event on the target `tenacious::redis`.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<(Level, String)>>>);

impl Capture {
    fn events(&self) -> Vec<(Level, String)> {
        self.0.lock().unwrap().clone()
    }
}

struct Message<'a>(&'a mut String);

impl Visit for Message<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "tenacious::redis"
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if event.metadata().target() != "tenacious::redis" {
            return;
        }
        let mut message = String::new();
        event.record(&mut Message(&mut message));
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), message));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// The counters named `tenacious_store_*`, by name.
fn store_counters(snapshotter: &Snapshotter) -> BTreeMap<String, u64> {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .filter_map(|(key, _, _, value)| {
            let name = key.key().name().to_owned();
            match value {
                DebugValue::Counter(n) if name.starts_with("tenacious_store_") => Some((name, n)),
                _ => None,
            }
        })
        .collect()
}

/// Waits until `done` holds, making a call under the bound budget every
/// few milliseconds (the test's timeout fails it if never).
async fn calling_until(policy: Policy, mut done: impl FnMut() -> bool) {
    while !done() {
        let _ = policy
            .retry(|| async { Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionReset)) })
            .await;
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_transition_is_logged_once_and_counted() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(1_000_000);
    static COOLDOWN: Cooldown = Cooldown::new();
    const POLICY: Policy = Policy::new().max(2).base(Duration::ZERO).budget(&BUDGET);
    let capture = Capture::default();
    tracing::subscriber::set_global_default(capture.clone()).unwrap();
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder.install().unwrap();

    let test = async {
        let port = free_port();
        let store = Store::connect_with(
            &format!("redis://127.0.0.1:{port}"),
            StoreConfig::new()
                .timeout(Duration::from_millis(500))
                .refresh(Duration::from_millis(10)),
        )
        .await
        .unwrap();
        store.bind(&BUDGET, "transitions").unwrap();
        // Down from the start: every retry decided in process, the store
        // trying Redis every refresh meanwhile.
        let local = store.stats().local_decisions;
        calling_until(POLICY, || store.stats().local_decisions >= local + 20).await;
        tokio::time::sleep(Duration::from_millis(50)).await;

        let mut redis = RedisServer::start_on(port);
        calling_until(POLICY, || store.is_up()).await;
        let round_trips = store.stats().round_trips;
        calling_until(POLICY, || store.stats().round_trips >= round_trips + 20).await;

        // Killed: the calls' round trips and the refreshes fail, again
        // and again, until it is restarted.
        redis.kill();
        calling_until(POLICY, || !store.is_up()).await;
        let local = store.stats().local_decisions;
        calling_until(POLICY, || store.stats().local_decisions >= local + 20).await;
        tokio::time::sleep(Duration::from_millis(50)).await;

        redis.restart();
        calling_until(POLICY, || store.is_up()).await;
        let round_trips = store.stats().round_trips;
        calling_until(POLICY, || store.stats().round_trips >= round_trips + 20).await;

        // A cooldown bound to a key of the wrong type: each refresh's
        // script fails on it, and the store stays up.
        let key = "tenacious:{transitions}:cooldown";
        assert!(redis.command(&["SET", key, "notahash"]).is_some());
        store.bind(&COOLDOWN, "transitions").unwrap();
        let failures = store.stats().failures;
        calling_until(POLICY, || store.stats().failures >= failures + 5).await;
        assert!(store.is_up());

        // Another process binds a budget of other settings to the name:
        // its check finds the fleet's, logged and counted once.
        static SMALL: RetryBudget = RetryBudget::with_capacity(10);
        let other = Store::connect(&redis.url()).await.unwrap();
        other.bind(&SMALL, "transitions").unwrap();
        other.sync().await;
        other.sync().await;
        assert_eq!(other.stats().settings_mismatches, 1);
        store
    };
    let store = tokio::time::timeout(Duration::from_secs(20), test)
        .await
        .expect("the test hung: not done within 20 s");

    let stats = store.stats();
    assert_eq!((stats.downs, stats.ups), (2, 2), "{stats:?}");
    let events = capture.events();
    let levels: Vec<Level> = events.iter().map(|(level, _)| *level).collect();
    assert_eq!(
        levels,
        [
            Level::WARN,
            Level::INFO,
            Level::WARN,
            Level::INFO,
            Level::WARN,
            Level::WARN
        ],
        "{events:#?}"
    );
    assert!(
        events[0].1.contains("unreachable at start-up"),
        "{events:#?}"
    );
    assert!(events[1].1.contains("up again"), "{events:#?}");
    assert!(events[2].1.contains("store down"), "{events:#?}");
    assert!(events[3].1.contains("up again"), "{events:#?}");
    assert!(events[4].1.contains("key holds"), "{events:#?}");
    assert!(
        events[5].1.contains("other settings than the fleet's"),
        "{events:#?}"
    );

    let counters = store_counters(&snapshotter);
    let expected: BTreeMap<String, u64> = [
        ("tenacious_store_down_total", 2),
        ("tenacious_store_up_total", 2),
        (
            "tenacious_store_local_decisions_total",
            stats.local_decisions,
        ),
    ]
    .into_iter()
    .map(|(name, n)| (name.to_owned(), n))
    .collect();
    assert_eq!(counters, expected);
    assert!(stats.local_decisions >= 40, "{stats:?}");
}
