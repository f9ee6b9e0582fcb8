//! Redis failing under the shared guards (feature `redis`): down at
//! start-up, killed mid-run, restarted empty, slowed (paused, or busy in
//! `DEBUG SLEEP`), and keys holding what no script wrote. Each test runs
//! its own `redis-server`, on tokio's real clock; two `static`s bound to
//! one name stand for two processes.
//!
//! No assertion is on speed: each test is bounded by [`HANG`] only so a
//! hang fails it, and asserts with counts (the store's, the attempts, the
//! guards' state). Where a count depends on who talks to Redis first, the
//! store's refresh is long ([`QUIET`]) and the test syncs it by hand.
#![cfg(feature = "redis")]

#[path = "support/failing.rs"]
mod failing;
#[path = "support/redis_server.rs"]
mod redis_server;

use failing::{down, failing};
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::Once;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

use http::StatusCode;
use redis_server::{RedisServer, free_port};
use tenacious::redis::{Store, StoreConfig};
use tenacious::{
    Breaker, BreakerState, Cooldown, Failure, HttpError, Policy, RetryBudget, StopReason, Throttle,
};
use tokio::sync::Barrier;

/// Longer than any test takes on a loaded machine: past it, the test hung.
const HANG: Duration = Duration::from_secs(20);

/// A refresh that never comes within a test: only the calls,
/// [`Store::sync`] and the loop's first refresh (as it starts, before or
/// after the guards are bound) talk to Redis, so the store's counts are
/// known.
const QUIET: Duration = Duration::from_secs(3600);

/// Runs a test's body, failing it when it hangs.
async fn bounded<F: Future>(body: F) -> F::Output {
    match tokio::time::timeout(HANG, body).await {
        Ok(output) => output,
        Err(_) => panic!("the test hung: not done within {HANG:?}"),
    }
}

/// Waits until `done` holds (the test's [`bounded`] fails it if never).
async fn until(mut done: impl FnMut() -> bool) {
    while !done() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Timeouts generous enough that a loaded machine never times out a
/// server that answers; the refresh short, so the loop notices soon.
fn config(refresh: Duration) -> StoreConfig {
    StoreConfig::new()
        .timeout(Duration::from_millis(500))
        .refresh(refresh)
}

fn limited() -> HttpError {
    HttpError::new(StatusCode::TOO_MANY_REQUESTS).with_retry_after(Some(Duration::from_secs(30)))
}

/// The attempts of one blocking call whose every attempt fails, made on
/// tokio's blocking pool.
async fn failing_blocking(policy: Policy) -> u32 {
    tokio::task::spawn_blocking(move || {
        let mut attempts = 0;
        let result = policy.retry_blocking(|| {
            attempts += 1;
            Err::<(), _>(down())
        });
        assert!(result.is_err());
        attempts
    })
    .await
    .expect("the blocking call does not panic")
}

/// The store went down on a round trip that timed out, and only on
/// timeouts. (Its refresh loop syncs once as it starts, maybe after the
/// pause: then two round trips may have timed out.)
fn down_on_timeouts(store: &Store) {
    let stats = store.stats();
    assert!(!stats.up, "{stats:?}");
    assert_eq!((stats.downs, stats.ups), (1, 0), "{stats:?}");
    assert!(stats.timeouts >= 1, "{stats:?}");
    assert_eq!(stats.failures, stats.timeouts, "{stats:?}");
}

/// The key of `name`'s guard of `kind`, as the store builds it.
fn key(name: &str, kind: &str) -> String {
    format!("tenacious:{{{name}}}:{kind}")
}

/// An integer reply's value (`:N\r\n`), or a bulk string's (`$n\r\nN\r\n`).
fn integer(reply: Option<String>) -> Option<i64> {
    let reply = reply?;
    let value = match reply.as_bytes().first()? {
        b':' => reply[1..].trim_end(),
        b'$' => reply.split("\r\n").nth(1)?,
        _ => return None,
    };
    value.parse().ok()
}

/// Counts the panics on tokio's worker threads from now on: a panic in a
/// task the store spawned (a script's round trip) would otherwise pass
/// for a failed round trip, the guard deciding in process.
struct WorkerPanics(usize);

static WORKER_PANICS: AtomicUsize = AtomicUsize::new(0);

fn worker_panics() -> WorkerPanics {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() == Some("tokio-runtime-worker") {
                WORKER_PANICS.fetch_add(1, Ordering::SeqCst);
            }
            default(info);
        }));
    });
    WorkerPanics(WORKER_PANICS.load(Ordering::SeqCst))
}

impl WorkerPanics {
    /// The panics since this was made (in any test: one failing in a task
    /// of its own counts too).
    fn count(&self) -> usize {
        WORKER_PANICS.load(Ordering::SeqCst) - self.0
    }
}

// 1. Down at start-up.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn down_at_start_up_the_guards_decide_in_process_then_share_once_redis_answers() {
    static A: RetryBudget = RetryBudget::with_capacity(10);
    static B: RetryBudget = RetryBudget::with_capacity(10);
    static CA: Cooldown = Cooldown::new();
    static CB: Cooldown = Cooldown::new();
    const PA: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&A);
    const PB: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&B);
    const CLOSE_A: Policy = Policy::new().max(1).cooldown(&CA);
    const WAIT_A: Policy = Policy::new()
        .max(1)
        .max_retry_after(Duration::from_secs(1))
        .cooldown(&CA);
    bounded(async {
        let port = free_port();
        let url = format!("redis://127.0.0.1:{port}");
        let store = Store::connect_with(&url, config(Duration::from_millis(20)))
            .await
            .expect("an unreachable server is no error");
        assert!(!store.is_up());
        let stats = store.stats();
        assert_eq!(
            (stats.up, stats.downs, stats.ups),
            (false, 1, 0),
            "{stats:?}"
        );
        store.bind(&A, "start").unwrap();
        store.bind(&B, "start").unwrap();
        store.bind(&CA, "start").unwrap();
        store.bind(&CB, "start").unwrap();

        // Each "process" keeps to its own bucket: 10 tokens, 5 a retry.
        assert_eq!(failing(PA).await, 1 + 2);
        assert_eq!(failing(PB).await, 1 + 2);
        assert_eq!(failing(PA).await, 1, "A's own bucket is spent");
        // Three retries asked of each of the first two calls, one of the
        // third: every one decided in process.
        assert_eq!(store.stats().local_decisions, 3 + 3 + 1);

        // A 429 closes A's cooldown in process only: B's "process" never
        // heard of it. A's next call would wait 30 s, past its 1 s.
        let _ = CLOSE_A.retry(|| async { Err::<(), _>(limited()) }).await;
        assert!(CA.is_closed());
        assert!(!CB.is_closed());
        let mut attempts = 0;
        let refused: Result<(), Failure<HttpError>> = WAIT_A
            .retry_failure(|| {
                attempts += 1;
                async { Ok(()) }
            })
            .await;
        assert_eq!(refused.unwrap_err().stop_reason(), StopReason::Cooldown);
        assert_eq!(attempts, 0);
        assert_eq!(store.stats().local_decisions, 3 + 3 + 1 + 1);
        assert_eq!(store.stats().round_trips, 0);

        // Redis comes up on that port: the refresh loop's PING finds it.
        let redis = RedisServer::start_on(port);
        until(|| store.is_up()).await;
        let stats = store.stats();
        assert_eq!((stats.downs, stats.ups), (1, 1), "{stats:?}");

        // A's closing was pushed when it came up: B mirrors it.
        while !CB.is_closed() {
            store.sync().await;
        }
        let until_us = integer(redis.command(&["HGET", &key("start", "cooldown"), "u"]));
        assert!(until_us.is_some_and(|us| us > 0), "{until_us:?}");

        // One bucket for both again, full (nobody spent it in Redis): 10
        // tokens, 2 retries in all.
        let local = store.stats().local_decisions;
        assert_eq!(failing(PA).await, 1 + 2);
        assert_eq!(failing(PB).await, 1, "B draws on the bucket A spent");
        assert_eq!(A.balance(), 0);
        assert_eq!(B.balance(), 0);
        assert_eq!(
            integer(redis.command(&["GET", &key("start", "budget")])),
            Some(0)
        );
        let stats = store.stats();
        assert_eq!(stats.local_decisions, local, "{stats:?}");
        assert_eq!(
            (stats.downs, stats.ups, stats.failures),
            (1, 1, 0),
            "{stats:?}"
        );
    })
    .await;
}

// 2. Killed mid-run.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_run_every_call_completes_and_a_closing_heard_meanwhile_is_pushed_back() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(100_000);
    static CA: Cooldown = Cooldown::new();
    static CB: Cooldown = Cooldown::new();
    const POLICY: Policy = Policy::new()
        .max(3)
        .base(Duration::from_millis(1))
        .budget(&BUDGET);
    const CLOSE_A: Policy = Policy::new().max(1).cooldown(&CA);
    const TASKS: usize = 4;
    const CALLS: u32 = 10;
    const ROUNDS: u32 = 4;
    let panics = worker_panics();
    bounded(async {
        let mut redis = RedisServer::start();
        let store = Store::connect_with(&redis.url(), config(Duration::from_millis(20)))
            .await
            .unwrap();
        assert!(store.is_up());
        store.bind(&BUDGET, "kill").unwrap();
        store.bind(&CA, "kill").unwrap();
        store.bind(&CB, "kill").unwrap();

        let attempts = Arc::new(AtomicU32::new(0));
        let phase = Arc::new(Barrier::new(TASKS + 1));
        let tasks: Vec<_> = (0..TASKS)
            .map(|_| {
                let (attempts, phase, store) = (attempts.clone(), phase.clone(), store.clone());
                tokio::spawn(async move {
                    for round in 0..ROUNDS {
                        for _ in 0..CALLS {
                            // Fails once, then succeeds: one retry a call.
                            let mut failed = false;
                            let result = POLICY
                                .retry(|| {
                                    attempts.fetch_add(1, Ordering::Relaxed);
                                    let fail = !std::mem::replace(&mut failed, true);
                                    async move { if fail { Err(down()) } else { Ok(()) } }
                                })
                                .await;
                            assert!(result.is_ok(), "round {round}: {result:?}");
                        }
                        match round {
                            // Round 1 runs while the server is killed.
                            0 => {
                                phase.wait().await;
                            }
                            // Round 2 runs once the store knows it is down.
                            1 => until(|| !store.is_up()).await,
                            // Round 3 once it is back.
                            2 => {
                                phase.wait().await;
                                phase.wait().await;
                            }
                            _ => {}
                        }
                    }
                })
            })
            .collect();

        phase.wait().await;
        redis.kill();
        // Round 2 is done: its retries were decided in process.
        phase.wait().await;
        assert!(!store.is_up());
        let stats = store.stats();
        assert_eq!((stats.downs, stats.ups), (1, 0), "{stats:?}");
        assert!(
            stats.local_decisions >= TASKS as u64 * u64::from(CALLS),
            "{stats:?}"
        );

        // A 429 while down closes A's cooldown in process only.
        let _ = CLOSE_A.retry(|| async { Err::<(), _>(limited()) }).await;
        assert!(CA.is_closed());
        assert!(!CB.is_closed());

        // Restarted (empty): A's closing is pushed, B mirrors it.
        redis.restart();
        until(|| store.is_up()).await;
        while !CB.is_closed() {
            store.sync().await;
        }
        let until_us = integer(redis.command(&["HGET", &key("kill", "cooldown"), "u"]));
        assert!(until_us.is_some_and(|us| us > 0), "{until_us:?}");
        let before = store.stats();
        phase.wait().await;

        for task in tasks {
            task.await.expect("no call panics");
        }
        assert_eq!(
            attempts.load(Ordering::Relaxed),
            2 * TASKS as u32 * CALLS * ROUNDS
        );
        let stats = store.stats();
        assert_eq!((stats.downs, stats.ups), (1, 1), "{stats:?}");
        // Round 3 shared the bucket again: a round trip per retry.
        assert!(
            stats.round_trips >= before.round_trips + TASKS as u64 * u64::from(CALLS),
            "{before:?} {stats:?}"
        );
        assert_eq!(stats.local_decisions, before.local_decisions, "{stats:?}");
    })
    .await;
    assert_eq!(panics.count(), 0, "a task of the store panicked");
}

// 3. Restarted empty.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarted_empty_a_budget_starts_full_again_and_its_script_is_loaded_again() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(50);
    const POLICY: Policy = Policy::new().max(3).base(Duration::ZERO).budget(&BUDGET);
    const GREEDY: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&BUDGET);
    bounded(async {
        let mut redis = RedisServer::start();
        let store = Store::connect_with(&redis.url(), config(Duration::from_millis(20)))
            .await
            .unwrap();
        store.bind(&BUDGET, "empty").unwrap();
        // Two retries: 10 of the 50 tokens.
        assert_eq!(failing(POLICY).await, 3);
        assert_eq!(BUDGET.balance(), 40);
        assert_eq!(
            integer(redis.command(&["GET", &key("empty", "budget")])),
            Some(40)
        );

        redis.restart();
        // Whether the store noticed (a refresh on the dead connection) or
        // its connection came back first, the bucket read is full. The
        // first EVALSHA after the restart met NOSCRIPT: had it not loaded
        // the script, the store would be down for good.
        loop {
            store.sync().await;
            if store.is_up() && BUDGET.balance() == 50 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let before = store.stats();
        assert!(
            before.downs <= 1 && before.ups == before.downs,
            "{before:?}"
        );
        // All 50 tokens: 10 retries.
        assert_eq!(failing(GREEDY).await, 1 + 10);
        assert_eq!(BUDGET.balance(), 0);
        let stats = store.stats();
        assert_eq!(stats.failures, before.failures, "{stats:?}");
        assert_eq!(stats.local_decisions, before.local_decisions, "{stats:?}");
        assert_eq!(stats.downs, before.downs, "{stats:?}");
    })
    .await;
}

/// The scripts Redis has cached, from `INFO memory`.
fn cached_scripts(redis: &RedisServer) -> Option<u64> {
    let info = redis.command(&["INFO", "memory"])?;
    info.lines()
        .find_map(|line| line.strip_prefix("number_of_cached_scripts:"))
        .and_then(|n| n.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_flush_alone_the_next_decision_loads_the_script_again_without_a_failure() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(50);
    const POLICY: Policy = Policy::new().max(2).base(Duration::ZERO).budget(&BUDGET);
    bounded(async {
        let redis = RedisServer::start();
        let store = Store::connect_with(&redis.url(), config(QUIET))
            .await
            .unwrap();
        store.bind(&BUDGET, "flush").unwrap();
        assert_eq!(failing(POLICY).await, 2);
        assert_eq!(cached_scripts(&redis), Some(1));
        assert!(
            redis
                .command(&["SCRIPT", "FLUSH"])
                .unwrap()
                .starts_with("+OK")
        );
        assert_eq!(cached_scripts(&redis), Some(0));
        let before = store.stats();

        assert_eq!(failing(POLICY).await, 2);
        assert_eq!(BUDGET.balance(), 40);
        assert_eq!(cached_scripts(&redis), Some(1));
        let stats = store.stats();
        assert!(stats.round_trips > before.round_trips, "{stats:?}");
        assert_eq!(
            (stats.failures, stats.downs, stats.local_decisions),
            (0, 0, 0),
            "{stats:?}"
        );
        assert!(stats.up);
    })
    .await;
}

// 4. Slowed.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_a_decision_times_out_the_calls_decide_in_process_and_resumed_it_is_up() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    static OTHER: RetryBudget = RetryBudget::with_capacity(10);
    const POLICY: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&BUDGET);
    const OTHERS: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&OTHER);
    bounded(async {
        let redis = RedisServer::start();
        let store = Store::connect_with(&redis.url(), config(QUIET))
            .await
            .unwrap();
        store.bind(&BUDGET, "pause").unwrap();
        store.bind(&OTHER, "pause").unwrap();

        redis.pause();
        // The first retry's round trip times out; the store is down and
        // the local bucket (untouched, full) pays: 2 retries.
        assert_eq!(failing(POLICY).await, 1 + 2);
        down_on_timeouts(&store);
        let before = store.stats();
        assert_eq!(before.local_decisions, 3, "{before:?}");
        // Down: the others do not wait on Redis either.
        assert_eq!(failing(OTHERS).await, 1 + 2);
        let stats = store.stats();
        assert_eq!(stats.failures, before.failures, "{stats:?}");
        assert_eq!(stats.local_decisions, 3 + 3, "{stats:?}");

        redis.resume();
        store.sync().await;
        let stats = store.stats();
        assert!(stats.up, "{stats:?}");
        assert_eq!((stats.downs, stats.ups), (1, 1), "{stats:?}");
        // Shared again: the fleet's bucket decides, in round trips. Its 10
        // tokens pay 2 retries, or 1 when the retry that timed out was
        // still run once Redis resumed (the fleet paying for it as the
        // local bucket did; the loop's first refresh may have timed out
        // first, and then no retry was sent).
        let before = store.stats();
        let attempts = failing(POLICY).await;
        assert!(attempts == 1 + 1 || attempts == 1 + 2, "{attempts}");
        assert_eq!(
            integer(redis.command(&["GET", &key("pause", "budget")])),
            Some(0)
        );
        let stats = store.stats();
        assert_eq!(stats.local_decisions, before.local_decisions, "{stats:?}");
        assert_eq!(stats.failures, before.failures, "{stats:?}");
        assert!(stats.round_trips > before.round_trips, "{stats:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn busy_in_debug_sleep_a_decision_times_out_then_redis_answers_again() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    const POLICY: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&BUDGET);
    bounded(async {
        let redis = RedisServer::start();
        let store = Store::connect_with(
            &redis.url(),
            StoreConfig::new()
                .timeout(Duration::from_millis(200))
                .refresh(QUIET),
        )
        .await
        .unwrap();
        store.bind(&BUDGET, "sleep").unwrap();

        // Busy for 4 s: once a PING goes unanswered for a second, at
        // least 2 s of it are left.
        let sleeper = redis.send(&["DEBUG", "SLEEP", "4"]);
        while redis.command(&["PING"]).is_some() {}
        assert_eq!(failing(POLICY).await, 1 + 2);
        down_on_timeouts(&store);
        assert_eq!(store.stats().local_decisions, 3);

        // Once it answers again, so does the store.
        drop(sleeper);
        while !store.is_up() {
            store.sync().await;
        }
        assert_eq!(store.stats().ups, 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_a_bound_breaker_keeps_its_own_state_and_sends_its_counts_once_resumed() {
    static A: Breaker = Breaker::new()
        .min_throughput(4)
        .open_for(Duration::from_secs(60));
    static B: Breaker = Breaker::new()
        .min_throughput(4)
        .open_for(Duration::from_secs(60));
    const PA: Policy = Policy::new().max(1).breaker(&A);
    const PB: Policy = Policy::new().max(1).breaker(&B);
    bounded(async {
        let redis = RedisServer::start();
        let store = Store::connect_with(&redis.url(), config(QUIET))
            .await
            .unwrap();
        store.bind(&A, "breaker").unwrap();
        store.bind(&B, "breaker").unwrap();

        redis.pause();
        // The outcomes' batch times out: the store is down.
        store.sync().await;
        down_on_timeouts(&store);
        // A counts its outcomes in process and opens on them.
        for _ in 0..4 {
            assert_eq!(failing(PA).await, 1);
        }
        assert_eq!(A.state(), BreakerState::Open);
        let mut attempts = 0;
        let refused = PA
            .retry_failure(|| {
                attempts += 1;
                async { Ok::<(), io::Error>(()) }
            })
            .await;
        assert_eq!(attempts, 0);
        assert!(refused.is_err());
        assert_eq!(A.stats().stopped, 1);
        assert!(store.stats().local_decisions >= 5);
        // B's "process" saw none of it.
        assert_eq!(B.state(), BreakerState::Closed);
        assert_eq!(failing(PB).await, 1);

        // Resumed: A's pending counts (4 failures) and B's (1) reach the
        // fleet's breaker, which opens; B then refuses too.
        redis.resume();
        store.sync().await;
        assert!(store.is_up());
        assert_eq!(
            integer(redis.command(&["HGET", &key("breaker", "breaker"), "st"])),
            Some(1)
        );
        store.sync().await;
        let mut attempts = 0;
        let refused = PB
            .retry_failure(|| {
                attempts += 1;
                async { Ok::<(), io::Error>(()) }
            })
            .await;
        assert_eq!(attempts, 0, "the fleet's breaker is open");
        assert_eq!(
            refused.map_err(|f| f.stop_reason()),
            Err(StopReason::CircuitOpen)
        );
        let stats = store.stats();
        assert_eq!((stats.downs, stats.ups), (1, 1), "{stats:?}");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_a_refresh_stops_at_its_first_timeout_and_the_other_guards_keep_their_batches() {
    static A: RetryBudget = RetryBudget::new();
    static B: RetryBudget = RetryBudget::new();
    static C: RetryBudget = RetryBudget::new();
    static D: RetryBudget = RetryBudget::new();
    bounded(async {
        let redis = RedisServer::start();
        let store = Store::connect_with(&redis.url(), config(QUIET))
            .await
            .unwrap();
        for (budget, name) in [(&A, "a"), (&B, "b"), (&C, "c"), (&D, "d")] {
            store.bind(budget, name).unwrap();
        }
        redis.pause();
        store.sync().await;
        down_on_timeouts(&store);
        // One timeout took the store down: the other three guards did
        // not wait out one each. (The loop's first refresh, as it
        // starts, may have timed out too.)
        let stats = store.stats();
        assert!(stats.timeouts <= 2, "{stats:?}");
        redis.resume();
        store.sync().await;
        assert!(store.is_up());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paused_a_blocking_call_under_a_bound_budget_completes_in_process() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    const POLICY: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&BUDGET);
    bounded(async {
        let redis = RedisServer::start();
        let store = Store::connect_with(&redis.url(), config(QUIET))
            .await
            .unwrap();
        store.bind(&BUDGET, "blocking").unwrap();
        // Up: the blocking call's retries take the fleet's tokens.
        assert_eq!(failing_blocking(POLICY).await, 1 + 2);
        assert!(store.stats().round_trips >= 3);
        assert_eq!(store.stats().local_decisions, 0);

        redis.pause();
        // Its first retry blocks on a round trip that times out; the
        // local bucket (full) pays then.
        assert_eq!(failing_blocking(POLICY).await, 1 + 2);
        down_on_timeouts(&store);
        assert_eq!(store.stats().local_decisions, 3);

        redis.resume();
        store.sync().await;
        assert!(store.is_up());
        assert_eq!(store.stats().ups, 1);
    })
    .await;
}

// 5. Hostile replies.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_of_the_wrong_type_fails_its_guard_s_scripts_and_the_guard_decides_in_process() {
    static COOLDOWN: Cooldown = Cooldown::new();
    static BUDGET: RetryBudget = RetryBudget::with_capacity(50);
    const CLOSE: Policy = Policy::new().max(1).cooldown(&COOLDOWN);
    const WAIT: Policy = Policy::new()
        .max(1)
        .max_retry_after(Duration::from_secs(1))
        .cooldown(&COOLDOWN);
    const SPEND: Policy = Policy::new().max(2).base(Duration::ZERO).budget(&BUDGET);
    let panics = worker_panics();
    bounded(async {
        let redis = RedisServer::start();
        let cooldown = key("hostile", "cooldown");
        assert!(
            redis
                .command(&["SET", &cooldown, "notahash"])
                .unwrap()
                .starts_with("+OK")
        );
        let store = Store::connect_with(&redis.url(), config(QUIET))
            .await
            .unwrap();
        store.bind(&COOLDOWN, "hostile").unwrap();
        store.bind(&BUDGET, "hostile").unwrap();

        // Its mirror cannot be read (WRONGTYPE): nothing is mirrored.
        store.sync().await;
        assert!(!COOLDOWN.is_closed());
        let after_sync = store.stats();
        assert!(after_sync.failures >= 1, "{after_sync:?}");

        // A 429 closes it in process; the push fails on the server.
        let _ = CLOSE.retry(|| async { Err::<(), _>(limited()) }).await;
        assert!(COOLDOWN.is_closed());
        // The next call: the fleet's turn fails too, so the local
        // cooldown decides (30 s, past the call's 1 s: stopped).
        let mut attempts = 0;
        let refused: Result<(), Failure<HttpError>> = WAIT
            .retry_failure(|| {
                attempts += 1;
                async { Ok(()) }
            })
            .await;
        assert_eq!(refused.unwrap_err().stop_reason(), StopReason::Cooldown);
        assert_eq!(attempts, 0);
        let stats = store.stats();
        assert!(stats.local_decisions >= 1, "{stats:?}");
        assert!(stats.failures > after_sync.failures, "{stats:?}");
        // The key is as it was: nothing overwrote it.
        assert_eq!(
            redis.command(&["GET", &cooldown]).as_deref(),
            Some("$8\r\nnotahash\r\n")
        );

        // One bad key is no outage: the store is up, and the budget bound
        // beside it still shares the fleet's bucket.
        let before = store.stats();
        assert!(before.up, "{before:?}");
        assert_eq!(before.downs, 0, "{before:?}");
        assert_eq!(failing(SPEND).await, 2);
        assert_eq!(
            integer(redis.command(&["GET", &key("hostile", "budget")])),
            Some(45)
        );
        let stats = store.stats();
        assert_eq!(stats.local_decisions, before.local_decisions, "{stats:?}");
        assert_eq!(stats.downs, 0, "{stats:?}");
    })
    .await;
    assert_eq!(panics.count(), 0, "a task of the store panicked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numbers_no_script_writes_read_as_missing_and_each_guard_starts_afresh() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(50);
    static COOLDOWN: Cooldown = Cooldown::new();
    static THROTTLE: Throttle = Throttle::new();
    static BREAKER: Breaker = Breaker::new().min_throughput(2);
    const ALL: Policy = Policy::new()
        .max(3)
        .base(Duration::ZERO)
        .budget(&BUDGET)
        .cooldown(&COOLDOWN)
        .throttle(&THROTTLE)
        .breaker(&BREAKER);
    const SPEND: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&BUDGET);
    const CLOSE: Policy = Policy::new().max(1).cooldown(&COOLDOWN);
    let panics = worker_panics();
    bounded(async {
        let redis = RedisServer::start();
        let garbage: [&[&str]; 7] = [
            &["SET", &key("garbage", "budget"), "nan"],
            &["HSET", &key("garbage", "cooldown"), "u", "abc", "r", "inf"],
            &["HSET", &key("garbage", "throttle"), "rate", "abc"],
            &[
                "HSET",
                &key("garbage", "throttle"),
                "on",
                "1",
                "hdr",
                "1",
                "tok",
                "-inf",
            ],
            &["HSET", &key("garbage", "breaker"), "st", "7", "at", "nan"],
            &[
                "HSET",
                &key("garbage", "breaker"),
                "b0",
                "x",
                "f0",
                "inf",
                "n0",
                "-1",
            ],
            &[
                "HSET",
                &key("garbage", "breaker"),
                "pr",
                "1e999",
                "pt",
                "-inf",
            ],
        ];
        for command in garbage {
            let reply = redis.command(command).unwrap();
            assert!(!reply.starts_with('-'), "{command:?}: {reply}");
        }
        let store = Store::connect_with(&redis.url(), config(QUIET))
            .await
            .unwrap();
        store.bind(&BUDGET, "garbage").unwrap();
        store.bind(&COOLDOWN, "garbage").unwrap();
        store.bind(&THROTTLE, "garbage").unwrap();
        store.bind(&BREAKER, "garbage").unwrap();
        store.sync().await;

        // The breaker (a state 7) is closed, the throttle (paced at no
        // rate) off, the cooldown (an infinite queue) open: a call goes.
        let mut attempts = 0;
        let result = ALL
            .retry(|| {
                attempts += 1;
                async { Ok::<(), io::Error>(()) }
            })
            .await;
        assert!(result.is_ok());
        assert_eq!(attempts, 1);
        assert!(!COOLDOWN.is_closed());
        // The budget (NaN tokens) is full: 50 tokens, 10 retries.
        assert_eq!(failing(SPEND).await, 1 + 10);
        assert_eq!(
            integer(redis.command(&["GET", &key("garbage", "budget")])),
            Some(0)
        );
        // The cooldown closes on the server (its queue no longer infinite).
        let _ = CLOSE.retry(|| async { Err::<(), _>(limited()) }).await;
        store.sync().await;
        let until_us = integer(redis.command(&["HGET", &key("garbage", "cooldown"), "u"]));
        assert!(until_us.is_some_and(|us| us > 0), "{until_us:?}");
        let stats = store.stats();
        assert_eq!(
            (stats.failures, stats.downs, stats.local_decisions),
            (0, 0, 0),
            "{stats:?}"
        );
    })
    .await;
    assert_eq!(panics.count(), 0, "a task of the store panicked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extreme_numbers_in_a_guard_s_fields_never_panic_and_every_call_completes() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(50);
    static COOLDOWN: Cooldown = Cooldown::new();
    static THROTTLE: Throttle = Throttle::new();
    static BREAKER: Breaker = Breaker::new().min_throughput(2);
    const POLICY: Policy = Policy::new()
        .max(3)
        .base(Duration::ZERO)
        .max_retry_after(Duration::from_millis(100))
        .deadline(Duration::from_secs(2))
        .budget(&BUDGET)
        .cooldown(&COOLDOWN)
        .throttle(&THROTTLE)
        .breaker(&BREAKER);
    let panics = worker_panics();
    bounded(async {
        let redis = RedisServer::start();
        let extreme: [&[&str]; 5] = [
            &["SET", &key("extreme", "budget"), "-1e300"],
            &[
                "HSET",
                &key("extreme", "cooldown"),
                "u",
                "-1e300",
                "r",
                "1e300",
            ],
            &[
                "HSET",
                &key("extreme", "throttle"),
                "on",
                "1",
                "rate",
                "1e-300",
                "tok",
                "1e300",
                "cap",
                "-5",
                "t",
                "1e300",
            ],
            &[
                "HSET",
                &key("extreme", "breaker"),
                "st",
                "1",
                "at",
                "-1e300",
            ],
            &[
                "HSET",
                &key("extreme", "breaker"),
                "pr",
                "-3",
                "b1",
                "1e300",
                "n1",
                "1e300",
            ],
        ];
        for command in extreme {
            let reply = redis.command(command).unwrap();
            assert!(!reply.starts_with('-'), "{command:?}: {reply}");
        }
        let store = Store::connect_with(&redis.url(), config(Duration::from_millis(20)))
            .await
            .unwrap();
        store.bind(&BUDGET, "extreme").unwrap();
        store.bind(&COOLDOWN, "extreme").unwrap();
        store.bind(&THROTTLE, "extreme").unwrap();
        store.bind(&BREAKER, "extreme").unwrap();
        let mut calls = 0;
        for i in 0..20_u32 {
            // Whatever the guards answer, each call ends.
            let _ = POLICY
                .retry_failure(|| async move {
                    match i % 3 {
                        0 => Err(HttpError::new(StatusCode::SERVICE_UNAVAILABLE)),
                        1 => Err(HttpError::new(StatusCode::TOO_MANY_REQUESTS)
                            .with_retry_after(Some(Duration::from_millis(5)))),
                        _ => Ok(()),
                    }
                })
                .await;
            calls += 1;
        }
        assert_eq!(calls, 20);
        store.sync().await;
        assert!(store.stats().round_trips > 0);
    })
    .await;
    assert_eq!(panics.count(), 0, "a task of the store panicked");
}

// 6. A store whose runtime has no free worker.
//
// The store's connection runs on the runtime it connected on. When every
// worker of that runtime is busy (blocked in a sync call, or not driven at
// all), a decision that waits on Redis must still end within the store's
// timeout and be taken in process. A call that hangs would hang the test
// run, so each runs on a thread of its own and the test waits for its
// answer at most [`STARVED`] of real time.

/// Far longer than any of these calls takes on a loaded machine (each
/// waits at most one store timeout, 200 ms, once): past it, it hung.
const STARVED: Duration = Duration::from_secs(30);

/// The store's timeout in these tests.
const STARVED_TIMEOUT: Duration = Duration::from_millis(200);

/// `body` on a thread of its own, its answer awaited at most [`STARVED`]:
/// a hang fails the test (the thread is left behind) instead of hanging
/// the run.
fn on_own_thread<T: Send + 'static>(
    what: &'static str,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (sender, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || drop(sender.send(body())));
    match answer.recv_timeout(STARVED) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what} hung: no answer within {STARVED:?}")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}

/// A multi-thread runtime of `workers` workers, the store's.
fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// The attempts of one blocking call under `policy` whose every attempt
/// fails, made on the calling thread.
fn failing_here(policy: Policy) -> u32 {
    let mut attempts = 0;
    let result = policy.retry_blocking(|| {
        attempts += 1;
        Err::<(), _>(down())
    });
    assert!(result.is_err());
    attempts
}

/// Blocks a worker of the current runtime until the returned sender is
/// dropped or sent to, once that worker has picked the task up.
async fn occupy_a_worker() -> std::sync::mpsc::Sender<()> {
    let (release, released) = std::sync::mpsc::channel::<()>();
    let (started, running) = tokio::sync::oneshot::channel();
    drop(tokio::spawn(async move {
        let _ = started.send(());
        // Blocks the worker: no `.await` until released.
        let _ = released.recv();
    }));
    running.await.expect("the task starts");
    release
}

static STARVED_MACRO: RetryBudget = RetryBudget::with_capacity(10);

#[tenacious::retry(max = 100, base = "1ms", cap = "1ms", budget = STARVED_MACRO)]
fn starved_sync(attempts: &AtomicU32) -> Result<(), io::Error> {
    attempts.fetch_add(1, Ordering::Relaxed);
    Err(down())
}

#[test]
fn a_blocking_call_on_the_busy_workers_of_the_store_s_runtime_decides_within_the_timeout() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    const POLICY: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&BUDGET);
    let redis = RedisServer::start();
    let url = redis.url();
    let (attempts, stats) = on_own_thread("Policy::retry_blocking", move || {
        let runtime = runtime(2);
        runtime.block_on(async move {
            let config = config(QUIET).timeout(STARVED_TIMEOUT);
            let store = Store::connect_with(&url, config).await.unwrap();
            assert!(store.is_up());
            store.bind(&BUDGET, "starved").unwrap();
            // One worker blocked by another task, the other by the call.
            let release = occupy_a_worker().await;
            let attempts = tokio::spawn(async { failing_here(POLICY) })
                .await
                .expect("the call does not panic");
            drop(release);
            (attempts, store.stats())
        })
    });
    // Its first retry waited on Redis at most the timeout and was paid by
    // the local bucket (10 tokens: 2 retries); the store counts as down.
    assert_eq!(attempts, 1 + 2);
    assert_eq!(stats.local_decisions, 3, "{stats:?}");
    assert!(!stats.up && stats.timeouts >= 1, "{stats:?}");
    // The decision abandoned never reached Redis: the fleet's bucket was
    // not paid a second time.
    assert_eq!(
        redis
            .command(&["GET", &key("starved", "budget")])
            .as_deref(),
        Some("$-1\r\n")
    );
}

#[test]
fn a_sync_retry_fn_on_the_only_worker_decides_within_the_timeout_with_redis_paused() {
    let redis = Arc::new(RedisServer::start());
    let url = redis.url();
    let paused = Arc::clone(&redis);
    let (attempts, stats) = on_own_thread("a sync #[retry] fn", move || {
        let runtime = runtime(1);
        runtime.block_on(async move {
            let config = config(QUIET).timeout(STARVED_TIMEOUT);
            let store = Store::connect_with(&url, config).await.unwrap();
            assert!(store.is_up());
            store.bind(&STARVED_MACRO, "starved-macro").unwrap();
            paused.pause();
            // The call runs on the runtime's only worker.
            let attempts = tokio::spawn(async {
                let attempts = AtomicU32::new(0);
                assert!(starved_sync(&attempts).is_err());
                attempts.into_inner()
            })
            .await
            .expect("the call does not panic");
            paused.resume();
            (attempts, store.stats())
        })
    });
    assert_eq!(attempts, 1 + 2);
    assert_eq!(stats.local_decisions, 3, "{stats:?}");
    assert!(!stats.up && stats.timeouts >= 1, "{stats:?}");
}

#[test]
fn an_async_call_while_every_worker_of_the_store_s_runtime_is_busy_decides_within_the_timeout() {
    static UP: RetryBudget = RetryBudget::with_capacity(10);
    static PAUSED: RetryBudget = RetryBudget::with_capacity(10);
    const ON_UP: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&UP);
    const ON_PAUSED: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&PAUSED);
    let redis = Arc::new(RedisServer::start());
    let server = Arc::clone(&redis);
    let answers = on_own_thread("an async call", move || {
        let runtime = runtime(1);
        runtime.block_on(async move {
            let config = config(QUIET).timeout(STARVED_TIMEOUT);
            let store = Store::connect_with(&server.url(), config).await.unwrap();
            assert!(store.is_up());
            store.bind(&UP, "starved-async").unwrap();
            store.bind(&PAUSED, "starved-async-paused").unwrap();
            let mut answers = Vec::new();
            for (policy, pause) in [(ON_UP, false), (ON_PAUSED, true)] {
                if pause {
                    server.pause();
                }
                // The only worker is blocked; the call runs here, on the
                // thread of `block_on`, which drives no task of the
                // runtime and none of its timers.
                let release = occupy_a_worker().await;
                let attempts = failing(policy).await;
                drop(release);
                if pause {
                    server.resume();
                }
                answers.push((attempts, store.stats()));
                // Up again before the next one.
                store.sync().await;
            }
            answers
        })
    });
    for (attempts, stats) in &answers {
        assert_eq!(*attempts, 1 + 2, "{stats:?}");
        assert!(stats.timeouts >= 1, "{stats:?}");
    }
    assert_eq!(answers[0].1.local_decisions, 3, "{answers:?}");
    assert_eq!(answers[1].1.local_decisions, 3 + 3, "{answers:?}");
}

#[test]
fn an_async_call_while_a_current_thread_store_runtime_is_not_driven_decides_within_the_timeout() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    const POLICY: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&BUDGET);
    let redis = RedisServer::start();
    let url = redis.url();
    let (attempts, stats) = on_own_thread("an async call", move || {
        let store_runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let store = store_runtime.block_on(async move {
            let config = config(QUIET).timeout(STARVED_TIMEOUT);
            let store = Store::connect_with(&url, config).await.unwrap();
            assert!(store.is_up());
            store.bind(&BUDGET, "undriven").unwrap();
            store
        });
        // The store's runtime is not driven from now on: this thread
        // runs another one.
        let caller = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let attempts = caller.block_on(failing(POLICY));
        (attempts, store.stats())
    });
    assert_eq!(attempts, 1 + 2);
    assert_eq!(stats.local_decisions, 3, "{stats:?}");
    assert!(stats.timeouts >= 1, "{stats:?}");
}
