//! The guards shared through a real `redis-server` (feature `redis`): two
//! `static`s bound to one name stand for two processes.
#![cfg(feature = "redis")]

#[path = "support/failing.rs"]
mod failing;
#[path = "support/redis_server.rs"]
mod redis_server;

use failing::{down, failing};
use std::io;
use std::time::Duration;

use http::StatusCode;
use redis_server::RedisServer;
use tenacious::redis::{BindError, Store, StoreConfig};
use tenacious::{Cooldown, Failure, HttpError, Policy, RetryBudget, StopReason};

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
        attempts += failing(policy).await;
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
    let _ = PA
        .retry(|| {
            let limited = limited.clone(); // `Clone`, not `Copy`: it may hold a body
            async move { Err::<(), _>(limited) }
        })
        .await;
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

static MACRO_A: RetryBudget = RetryBudget::with_capacity(20);
static MACRO_B: RetryBudget = RetryBudget::with_capacity(20);

#[tenacious::retry(max = 50, base = "1ms", cap = "1ms", budget = MACRO_A)]
async fn failing_a(attempts: &std::sync::atomic::AtomicU32) -> Result<(), io::Error> {
    attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Err(down())
}

#[tenacious::retry(max = 50, base = "1ms", cap = "1ms", budget = MACRO_B)]
fn failing_b(attempts: &std::sync::atomic::AtomicU32) -> Result<(), io::Error> {
    attempts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Err(down())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_fn_naming_only_a_bound_budget_takes_its_retries_from_the_store() {
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&MACRO_A, "macro").unwrap();
    store.bind(&MACRO_B, "macro").unwrap();
    let attempts = std::sync::atomic::AtomicU32::new(0);
    assert!(failing_a(&attempts).await.is_err());
    let attempts = tokio::task::block_in_place(|| {
        assert!(failing_b(&attempts).is_err());
        attempts.into_inner()
    });
    // 20 tokens: 4 retries between the async fn and the blocking one.
    assert_eq!(attempts, 2 + 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_failing_half_the_minimum_each_open_the_fleet_s_breaker() {
    use tenacious::{Breaker, BreakerState};
    static A: Breaker = Breaker::new().min_throughput(10);
    static B: Breaker = Breaker::new().min_throughput(10);
    const PA: Policy = Policy::new().max(1).breaker(&A);
    const PB: Policy = Policy::new().max(1).breaker(&B);
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&A, "anthropic").unwrap();
    store.bind(&B, "anthropic").unwrap();
    for _ in 0..5 {
        let _ = PA.retry(|| async { Err::<(), _>(down()) }).await;
        let _ = PB.retry(|| async { Err::<(), _>(down()) }).await;
    }
    // Neither saw its minimum throughput alone: both still closed here.
    assert_eq!(A.state(), BreakerState::Closed);
    assert_eq!(B.state(), BreakerState::Closed);
    // The first sync sends both batches (B's opens it), the second
    // brings A the news (as the next refresh would).
    store.sync().await;
    store.sync().await;
    let state = redis.command(&["HGET", "tenacious:{anthropic}:breaker", "st"]);
    assert!(
        state.as_deref().is_some_and(|s| s.contains("\r\n1\r\n")),
        "{state:?}"
    );
    // Both processes refuse now, with no attempt.
    for policy in [PA, PB] {
        let mut attempts = 0;
        let result: Result<(), Failure<io::Error>> = policy
            .retry(|| {
                attempts += 1;
                async { Ok(()) }
            })
            .await;
        assert_eq!(result.unwrap_err().stop_reason(), StopReason::CircuitOpen);
        assert_eq!(attempts, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_process_s_rate_limit_headers_pace_the_other() {
    use tenacious::{Signals, Throttle};
    static A: Throttle = Throttle::new();
    static B: Throttle = Throttle::new();
    const PA: Policy = Policy::new().max(1).throttle(&A);
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&A, "openai").unwrap();
    store.bind(&B, "openai").unwrap();
    // A hears the provider's bucket: 60 a minute, none left, full in 60 s.
    let signals = Signals::NONE
        .limit(60)
        .remaining(0)
        .reset(Duration::from_secs(60));
    let limited = HttpError::new(StatusCode::TOO_MANY_REQUESTS).with_signals(signals);
    let _ = PA
        .retry(|| {
            let limited = limited.clone(); // `Clone`, not `Copy`: it may hold a body
            async move { Err::<(), _>(limited) }
        })
        .await;
    // The report is sent in the background: wait for it (bounded).
    let mut rate = None;
    for _ in 0..200 {
        rate = redis
            .command(&["HGET", "tenacious:{openai}:throttle", "rate"])
            .and_then(|reply| reply.lines().nth(1).and_then(|n| n.parse::<f64>().ok()));
        if rate.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // `remaining` 0 is a whole count: the bucket refills 59 to 60 a
    // minute, and the fleet paces at the middle.
    let rate = rate.expect("the report reached Redis");
    assert!(
        (59.0 / 60.0..=1.0).contains(&rate),
        "about one a second: {rate}"
    );
    store.sync().await;
    // B takes its tokens from the fleet's bucket: empty, so its first
    // call waits about a second for one.
    const PB: Policy = Policy::new()
        .max(1)
        .deadline(Duration::from_millis(200))
        .throttle(&B);
    let result: Result<(), Failure<io::Error>> = PB.retry(|| async { Ok(()) }).await;
    let failure = result.unwrap_err();
    assert_eq!(failure.stop_reason(), StopReason::Deadline, "{failure:?}");
    assert!(failure.attempts().is_empty());
}

#[tokio::test]
async fn a_blocking_call_on_a_current_thread_runtime_decides_in_process_rather_than_wait_on_itself()
{
    static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    const POLICY: Policy = Policy::new().max(10).base(Duration::ZERO).budget(&BUDGET);
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&BUDGET, "blocking").unwrap();
    let mut attempts = 0;
    // On this runtime's only thread: blocking it on the store's task
    // would never end.
    let result = POLICY.retry_blocking(|| {
        attempts += 1;
        Err::<(), _>(down())
    });
    assert!(result.is_err());
    assert_eq!(attempts, 3, "the local bucket's 2 retries");
    // Two retries taken, the third refused: each decided in process.
    assert_eq!(store.stats().local_decisions, 3);
}

/// The integer of a RESP reply such as `:1234\r\n`.
fn integer(reply: Option<String>) -> i64 {
    let reply = reply.expect("redis answers");
    reply
        .trim_start_matches(':')
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not an integer reply: {reply:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shorter_hint_from_another_process_never_reopens_the_fleet_s_cooldown_early() {
    static A: Cooldown = Cooldown::new();
    static B: Cooldown = Cooldown::new();
    const PA: Policy = Policy::new().max(1).cooldown(&A);
    const PB: Policy = Policy::new().max(1).cooldown(&B);
    let redis = RedisServer::start();
    // No refresh while the test runs: B hears of A's closing only at the
    // `sync` below.
    let config = StoreConfig::new().refresh(Duration::from_secs(3600));
    let store = Store::connect_with(&redis.url(), config).await.unwrap();
    store.bind(&A, "shorter").unwrap();
    store.bind(&B, "shorter").unwrap();
    let hinted = |secs| {
        HttpError::new(StatusCode::TOO_MANY_REQUESTS)
            .with_retry_after(Some(Duration::from_secs(secs)))
    };
    let until = |redis: &RedisServer| {
        let reply = redis.command(&["HGET", "tenacious:{shorter}:cooldown", "u"]);
        reply
            .and_then(|r| r.lines().nth(1).map(str::to_owned))
            .and_then(|n| n.parse::<i64>().ok())
    };
    let _ = PA.retry(|| async { Err::<(), _>(hinted(30)) }).await;
    // A's closing is pushed in the background: wait for it (bounded).
    let mut first = None;
    for _ in 0..200 {
        first = until(&redis);
        if first.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let first = first.expect("A's closing reached Redis");
    // B, still open in its own process, is told 1 s: the fleet's
    // cooldown keeps the later time.
    assert!(!B.is_closed());
    let mut attempts = 0;
    let _ = PB
        .retry(|| {
            attempts += 1;
            async { Err::<(), _>(hinted(1)) }
        })
        .await;
    assert_eq!(attempts, 1);
    store.sync().await;
    assert_eq!(until(&redis), Some(first));
    let left = B.reopens_in_at(std::time::Instant::now());
    assert!(
        left > Duration::from_secs(28),
        "B mirrors the later time: {left:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_guard_s_key_expires_when_idle() {
    use tenacious::{Breaker, Signals, Throttle};
    static BUDGET: RetryBudget = RetryBudget::with_capacity(50);
    static COOLDOWN: Cooldown = Cooldown::new();
    static THROTTLE: Throttle = Throttle::new();
    static BREAKER: Breaker = Breaker::new();
    const POLICY: Policy = Policy::new()
        .max(2)
        .base(Duration::ZERO)
        .budget(&BUDGET)
        .cooldown(&COOLDOWN)
        .throttle(&THROTTLE)
        .breaker(&BREAKER)
        .max_retry_after(Duration::from_secs(1));
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&BUDGET, "idle").unwrap();
    store.bind(&COOLDOWN, "idle").unwrap();
    store.bind(&THROTTLE, "idle").unwrap();
    store.bind(&BREAKER, "idle").unwrap();
    // A transient failure (the budget pays a retry, the breaker counts
    // it), then a 429 with a hint and the bucket's headers (the cooldown
    // closes, the throttle hears the bucket).
    let mut attempt = 0;
    let _ = POLICY
        .retry(|| {
            attempt += 1;
            let error = if attempt == 1 {
                HttpError::new(StatusCode::BAD_GATEWAY)
            } else {
                HttpError::new(StatusCode::TOO_MANY_REQUESTS)
                    .with_retry_after(Some(Duration::from_millis(500)))
                    .with_signals(
                        Signals::NONE
                            .limit(100)
                            .remaining(50)
                            .reset(Duration::from_secs(30)),
                    )
            };
            async move { Err::<(), _>(error) }
        })
        .await;
    store.sync().await;
    let hour = 3_600_000;
    let pttl =
        |kind: &str| integer(redis.command(&["PTTL", &format!("tenacious:{{idle}}:{kind}")]));
    let budget = pttl("budget");
    assert!(
        budget > hour - 60_000 && budget <= hour,
        "an hour: {budget}"
    );
    let cooldown = pttl("cooldown");
    assert!(
        cooldown > 50_000 && cooldown <= 61_000,
        "60 s past its reopening: {cooldown}"
    );
    let throttle = pttl("throttle");
    assert!(
        throttle > 540_000 && throttle <= 600_000,
        "10 minutes: {throttle}"
    );
    let breaker = pttl("breaker");
    assert!(
        breaker > 90_000 && breaker <= 105_000,
        "window 30 s + open 15 s + 60 s: {breaker}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_redis_cluster_each_guard_s_script_runs_on_the_node_of_its_slot() {
    use redis_server::RedisCluster;
    use tenacious::{Breaker, Throttle};
    static A: RetryBudget = RetryBudget::with_capacity(25);
    static B: RetryBudget = RetryBudget::with_capacity(25);
    static C: Cooldown = Cooldown::new();
    static T: Throttle = Throttle::new();
    static K: Breaker = Breaker::new();
    const PA: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&A);
    const PB: Policy = Policy::new().max(100).base(Duration::ZERO).budget(&B);
    let cluster = RedisCluster::start();
    let urls = cluster.urls();
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let store = Store::connect_cluster(&urls[..1]).await.unwrap();
    assert!(store.is_up());
    store.bind(&A, "search").unwrap();
    store.bind(&B, "search").unwrap();
    store.bind(&C, "openai").unwrap();
    store.bind(&T, "openai").unwrap();
    store.bind(&K, "openai").unwrap();
    let mut attempts = 0;
    for policy in [PA, PB] {
        attempts += failing(policy).await;
    }
    // 25 tokens: 5 retries across both, wherever the key's slot is.
    assert_eq!(attempts, 2 + 5);
    let limited = HttpError::new(StatusCode::TOO_MANY_REQUESTS)
        .with_retry_after(Some(Duration::from_secs(30)));
    const PC: Policy = Policy::new().max(1).cooldown(&C).throttle(&T).breaker(&K);
    let _ = PC
        .retry(|| {
            let limited = limited.clone(); // `Clone`, not `Copy`: it may hold a body
            async move { Err::<(), _>(limited) }
        })
        .await;
    // A counted failure, for the breaker's window (the 429 is not one).
    const PK: Policy = Policy::new().max(1).breaker(&K);
    let _ = PK
        .retry(|| async { Err::<(), _>(HttpError::new(StatusCode::BAD_GATEWAY)) })
        .await;
    store.sync().await;
    let stats = store.stats();
    assert_eq!((stats.failures, stats.downs), (0, 0), "{stats:?}");
    // The keys of "openai" share one slot, so one node holds them all.
    let holders: Vec<usize> = cluster
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, node)| {
            node.command(&["EXISTS", "tenacious:{openai}:cooldown"])
                .is_some_and(|r| r.starts_with(":1"))
        })
        .map(|(at, _)| at)
        .collect();
    assert_eq!(holders.len(), 1, "one node holds the cooldown");
    let node = &cluster.nodes[holders[0]];
    for kind in ["throttle", "breaker"] {
        let reply = node.command(&["EXISTS", &format!("tenacious:{{openai}}:{kind}")]);
        assert!(
            reply.is_some_and(|r| r.starts_with(":1")),
            "{kind} beside it"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_that_does_not_answer_is_no_error_and_the_guards_decide_in_process() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    const POLICY: Policy = Policy::new().max(10).base(Duration::ZERO).budget(&BUDGET);
    let nowhere = format!("redis://127.0.0.1:{}", redis_server::free_port());
    let store = Store::connect_cluster(&[&nowhere]).await.unwrap();
    assert!(!store.is_up());
    store.bind(&BUDGET, "nowhere").unwrap();
    assert_eq!(failing(POLICY).await, 3, "the local bucket's 2 retries");
    assert_eq!(store.stats().downs, 1);
}

/// Waits at a retry's decision, then stops the call when asked again.
#[derive(Debug)]
struct StopsAfterItsWait;

impl tenacious::Guard for StopsAfterItsWait {
    fn admit(&self, next: &tenacious::NextAttempt) -> tenacious::Admit {
        match (next.attempt, next.recheck) {
            (1, _) => tenacious::Admit::Go,
            (_, false) => tenacious::Admit::Wait(Duration::from_millis(1)),
            (_, true) => tenacious::Admit::Stop(StopReason::Guard),
        }
    }
    fn observe(&self, _: &tenacious::Outcome) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_budget_whose_answer_a_guard_before_it_forestalled_gives_nothing_back() {
    static BUDGET: RetryBudget = RetryBudget::with_capacity(10);
    static STOPS: StopsAfterItsWait = StopsAfterItsWait;
    const SPEND: Policy = Policy::new().max(10).base(Duration::ZERO).budget(&BUDGET);
    const STOPPED: Policy = Policy::new()
        .max(10)
        .base(Duration::ZERO)
        .guard(&STOPS)
        .budget(&BUDGET);
    let redis = RedisServer::start();
    let config = StoreConfig::new().refresh(Duration::from_secs(3600));
    let store = Store::connect_with(&redis.url(), config).await.unwrap();
    store.bind(&BUDGET, "forestalled").unwrap();
    let _ = SPEND.retry(|| async { Err::<(), _>(down()) }).await;
    store.sync().await;
    assert_eq!(BUDGET.balance(), 0, "two retries spent it");
    let result = STOPPED.retry(|| async { Err::<(), _>(down()) }).await;
    assert!(result.is_err());
    store.sync().await;
    // The guard stopped the retry before the budget answered: the budget
    // took nothing, and refunds nothing.
    assert_eq!(BUDGET.balance(), 0);
}

/// Waits (bounded) until the fleet's throttle of `name` has heard a
/// report: its `hdr` field is 1.
async fn reported(redis: &RedisServer, name: &str) -> bool {
    let key = format!("tenacious:{{{name}}}:throttle");
    for _ in 0..200 {
        let hdr = redis.command(&["HGET", &key, "hdr"]);
        if hdr.as_deref().is_some_and(|reply| reply.ends_with("1\r\n")) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_report_replaces_the_fleet_s_window_and_a_saturated_reset_says_nothing() {
    use tenacious::{Signals, Throttle};
    static A: Throttle = Throttle::new();
    static B: Throttle = Throttle::new();
    static C: Throttle = Throttle::new();
    static D: Throttle = Throttle::new();
    // A call that must start within 200 ms.
    const PB: Policy = Policy::new()
        .max(1)
        .deadline(Duration::from_millis(200))
        .throttle(&B);
    const PD: Policy = Policy::new()
        .max(1)
        .deadline(Duration::from_millis(200))
        .throttle(&D);
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&A, "newer").unwrap();
    store.bind(&B, "newer").unwrap();
    store.bind(&C, "saturated").unwrap();
    store.bind(&D, "saturated").unwrap();

    // None left for an hour, then 50 left over a second: the newer one
    // paces the fleet.
    A.report(Signals::NONE.remaining(0).reset(Duration::from_secs(3600)));
    assert!(reported(&redis, "newer").await);
    A.report(Signals::NONE.remaining(50).reset(Duration::from_secs(1)));
    let mut rate = 0.0;
    for _ in 0..200 {
        rate = redis
            .command(&["HGET", "tenacious:{newer}:throttle", "rate"])
            .and_then(|reply| reply.lines().nth(1).and_then(|n| n.parse::<f64>().ok()))
            .unwrap_or(0.0);
        if rate >= 1.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(rate >= 1.0, "the newer report's rate: {rate}");
    store.sync().await;
    let result: Result<(), Failure<io::Error>> = PB.retry(|| async { Ok(()) }).await;
    assert!(result.is_ok(), "{result:?}");

    // A saturated reset (x-ratelimit-reset-requests of u64::MAX seconds)
    // with none left: no window, fleet-wide either.
    C.report(Signals::NONE.remaining(0).reset(Duration::MAX));
    tokio::time::sleep(Duration::from_millis(50)).await;
    store.sync().await;
    assert_eq!(
        redis
            .command(&["HGET", "tenacious:{saturated}:throttle", "hdr"])
            .as_deref(),
        Some("$-1\r\n"),
        "the saturated report reached the fleet's throttle"
    );
    let result: Result<(), Failure<io::Error>> = PD.retry(|| async { Ok(()) }).await;
    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saturated_hint_stores_no_time_past_a_year_and_a_reopen_by_hand_reopens_the_fleet() {
    static A: Cooldown = Cooldown::new();
    static B: Cooldown = Cooldown::new();
    // No `max_retry_after` to hold the hint to.
    const PA: Policy = Policy::new()
        .max(1)
        .max_retry_after(Duration::MAX)
        .cooldown(&A);
    const PB: Policy = Policy::new()
        .max(1)
        .deadline(Duration::from_secs(1))
        .cooldown(&B);
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&A, "hostile").unwrap();
    store.bind(&B, "hostile").unwrap();
    let hostile =
        HttpError::new(StatusCode::TOO_MANY_REQUESTS).with_retry_after(Some(Duration::MAX));
    let _ = PA
        .retry(|| {
            let hostile = hostile.clone();
            async move { Err::<(), _>(hostile) }
        })
        .await;
    let field = |name: &str| {
        redis
            .command(&["HGET", "tenacious:{hostile}:cooldown", name])
            .and_then(|r| r.lines().nth(1).map(str::to_owned))
            .and_then(|n| n.parse::<i64>().ok())
    };
    let mut until = None;
    for _ in 0..200 {
        until = field("u");
        if until.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Server time in µs, about now: closed for at most a year, written as
    // a time (before: a negative one, `now + i64::MAX` overflowed).
    let until = until.expect("A's closing reached Redis");
    let now_us = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros(),
    )
    .unwrap();
    let year_us = 366 * 86_400 * 1_000_000_i64;
    assert!(
        until > now_us + 86_400 * 1_000_000 && until <= now_us + year_us + 60_000_000,
        "closed until {until} (now {now_us})"
    );
    let ttl = redis
        .command(&["PTTL", "tenacious:{hostile}:cooldown"])
        .and_then(|r| r.trim_start_matches(':').trim().parse::<i64>().ok())
        .unwrap();
    assert!(
        ttl > 0 && ttl <= year_us / 1000 + 86_400_000,
        "ttl {ttl} ms"
    );
    store.sync().await;
    assert!(B.is_closed(), "B mirrors the fleet's closing");
    // An operator reopens it in one process: the fleet's reopens.
    A.reopen();
    for _ in 0..200 {
        if field("u").is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(field("u"), None, "the fleet's cooldown was not reopened");
    store.sync().await;
    assert!(!B.is_closed());
    let answer: Result<(), HttpError> = PB.retry(|| async { Ok(()) }).await;
    assert!(answer.is_ok(), "{answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_breaker_reset_by_hand_closes_the_fleet_s() {
    use tenacious::{Breaker, BreakerState};
    static A: Breaker = Breaker::new().min_throughput(2);
    static B: Breaker = Breaker::new().min_throughput(2);
    const PA: Policy = Policy::new().max(1).breaker(&A);
    const PB: Policy = Policy::new().max(1).breaker(&B);
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&A, "reset").unwrap();
    store.bind(&B, "reset").unwrap();
    for _ in 0..2 {
        let _ = PA.retry(|| async { Err::<(), _>(down()) }).await;
    }
    store.sync().await;
    let refused = PB.retry_failure(|| async { Ok::<(), io::Error>(()) }).await;
    assert_eq!(
        refused.unwrap_err().stop_reason(),
        StopReason::CircuitOpen,
        "the fleet's breaker is open"
    );
    B.reset();
    let mut gone = false;
    for _ in 0..200 {
        if redis
            .command(&["EXISTS", "tenacious:{reset}:breaker"])
            .as_deref()
            == Some(":0\r\n")
        {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(gone, "the fleet's breaker was not reset");
    store.sync().await;
    let answer = PA.retry_failure(|| async { Ok::<(), io::Error>(()) }).await;
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(A.state(), BreakerState::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guards_bound_to_one_name_in_one_store_with_other_settings_are_refused() {
    use tenacious::{Breaker, Throttle};
    static BIG: RetryBudget = RetryBudget::with_capacity(1_000);
    static SMALL: RetryBudget = RetryBudget::with_capacity(10);
    static SAME: RetryBudget = RetryBudget::with_capacity(1_000);
    static C1: Cooldown = Cooldown::new();
    static C2: Cooldown = Cooldown::new().spacing(Duration::from_millis(50));
    static T1: Throttle = Throttle::new();
    static T2: Throttle = Throttle::new().max_rate(20.0);
    // `probe_first`'s wait is each process's own: no shared setting.
    static T3: Throttle = Throttle::new().probe_first(Duration::from_secs(2));
    static B1: Breaker = Breaker::new();
    static B2: Breaker = Breaker::new().open_for(Duration::from_secs(30));
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();

    store.bind(&BIG, "fleet").unwrap();
    let refused = store.bind(&SMALL, "fleet");
    assert_eq!(
        refused,
        Err(BindError::OtherSettings {
            name: "fleet".to_owned(),
            kind: "budget",
            bound: "capacity 1000".to_owned(),
            given: "capacity 10".to_owned(),
        })
    );
    assert_eq!(
        refused.unwrap_err().to_string(),
        "a budget bound to \"fleet\" in this store has other settings (capacity 1000) than \
         this one (capacity 10): the guards bound to one name share one state, so give them \
         the same settings or other names"
    );
    // The same settings share the name; the refused guard was not bound,
    // and binds to a name of its own.
    store.bind(&SAME, "fleet").unwrap();
    store.bind(&SMALL, "small").unwrap();

    store.bind(&C1, "fleet").unwrap();
    let refused = store.bind(&C2, "fleet").unwrap_err();
    assert!(
        matches!(&refused, BindError::OtherSettings { kind: "cooldown", bound, given, .. }
            if bound == "spacing 10ms" && given == "spacing 50ms"),
        "{refused:?}"
    );
    store.bind(&T1, "fleet").unwrap();
    let refused = store.bind(&T2, "fleet").unwrap_err();
    assert!(
        matches!(&refused, BindError::OtherSettings { kind: "throttle", bound, given, .. }
            if bound == "min_rate 0.5, max_rate unbounded" && given == "min_rate 0.5, max_rate 20"),
        "{refused:?}"
    );
    store.bind(&T3, "fleet").unwrap();
    store.bind(&B1, "fleet").unwrap();
    let refused = store.bind(&B2, "fleet").unwrap_err();
    assert!(
        matches!(&refused, BindError::OtherSettings { kind: "breaker", bound, given, .. }
            if bound == "ratio 0.5, window 30s, min_throughput 10, open_for 15s, probes 1"
                && given == "ratio 0.5, window 30s, min_throughput 10, open_for 30s, probes 1"),
        "{refused:?}"
    );
}

/// What a `GET` of `key` answers, as text (`None`: no such key).
fn text(redis: &RedisServer, key: &str) -> Option<String> {
    let reply = redis.command(&["GET", key]).expect("redis answers");
    reply.starts_with('$').then_some(())?;
    let value = reply.split("\r\n").nth(1)?;
    Some(value.to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_binding_one_name_with_other_settings_share_the_settings_written_first() {
    static BIG: RetryBudget = RetryBudget::with_capacity(1_000);
    static SMALL: RetryBudget = RetryBudget::with_capacity(10);
    const BIG_CALL: Policy = Policy::new().max(21).base(Duration::ZERO).budget(&BIG);
    const SMALL_CALL: Policy = Policy::new().max(21).base(Duration::ZERO).budget(&SMALL);
    let redis = RedisServer::start();
    // Two stores connected apart: two processes.
    let first = Store::connect(&redis.url()).await.unwrap();
    let second = Store::connect(&redis.url()).await.unwrap();
    first.bind(&BIG, "fleet").unwrap();
    // Its first check writes its settings.
    first.sync().await;
    assert_eq!(
        text(&redis, "tenacious:{fleet}:budget:settings").as_deref(),
        Some("1000")
    );
    let ttl = integer(redis.command(&["PTTL", "tenacious:{fleet}:budget:settings"]));
    assert!(ttl > 0 && ttl <= 60_000, "{ttl}");
    // The other process binds a budget of 10 to the same name: its check
    // finds the fleet's 1000, and it takes them.
    second.bind(&SMALL, "fleet").unwrap();
    second.sync().await;
    assert_eq!(second.stats().settings_mismatches, 1);
    assert_eq!(first.stats().settings_mismatches, 0);

    // 20 retries for each, 5 tokens a retry, out of the fleet's 1000: not
    // the 2 a bucket clamped to 10 would allow either.
    assert_eq!(failing(SMALL_CALL).await, 21);
    assert_eq!(failing(BIG_CALL).await, 21);
    assert_eq!(
        text(&redis, "tenacious:{fleet}:budget").as_deref(),
        Some("800")
    );
    // The settings key still holds the first's; a later sync counts no
    // second mismatch.
    second.sync().await;
    first.sync().await;
    assert_eq!(
        text(&redis, "tenacious:{fleet}:budget:settings").as_deref(),
        Some("1000")
    );
    assert_eq!(second.stats().settings_mismatches, 1);
    assert_eq!(first.stats().settings_mismatches, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_that_probes_first_sends_one_probe_and_every_process_waits_for_its_answer() {
    use std::sync::atomic::{AtomicU32, Ordering};
    use tenacious::{Signals, Throttle};
    // A wait far longer than the test: a call that goes was let go by the
    // probe's answer, not by the wait running out.
    static A: Throttle = Throttle::new().probe_first(Duration::from_secs(60));
    static B: Throttle = Throttle::new().probe_first(Duration::from_secs(60));
    const PA: Policy = Policy::new().max(1).throttle(&A);
    const PB: Policy = Policy::new().max(1).throttle(&B);
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&A, "probing").unwrap();
    store.bind(&B, "probing").unwrap();

    // A's first call is the fleet's probe; its answer is held back.
    let (answer, answered) = tokio::sync::oneshot::channel::<()>();
    let answered = std::sync::Arc::new(std::sync::Mutex::new(Some(answered)));
    let probe = tokio::spawn(PA.retry(move || {
        let answered = answered.lock().unwrap().take();
        async move {
            if let Some(answered) = answered {
                let _ = answered.await;
            }
            // The provider's bucket: 10, 9 left, full in 100 ms.
            A.report(
                Signals::NONE
                    .limit(10)
                    .remaining(9)
                    .reset(Duration::from_millis(100)),
            );
            Ok::<_, io::Error>(())
        }
    }));
    // Bounded: until A's probe holds the fleet's slot.
    for _ in 0..400 {
        if redis
            .command(&["HGET", "tenacious:{probing}:throttle", "ps"])
            .is_some_and(|reply| reply.lines().nth(1).is_some_and(|ps| ps != "0"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    // B, another process, sends nothing while the probe is out.
    static SENT: AtomicU32 = AtomicU32::new(0);
    let held = tokio::spawn(PB.retry(|| async {
        SENT.fetch_add(1, Ordering::SeqCst);
        Ok::<_, io::Error>(())
    }));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(SENT.load(Ordering::SeqCst), 0, "held for the fleet's probe");

    // The probe's answer tells the fleet the window: B's call goes.
    answer.send(()).unwrap();
    probe.await.unwrap().unwrap();
    tokio::time::timeout(Duration::from_secs(20), held)
        .await
        .expect("the probe's answer lets the held call go")
        .unwrap()
        .unwrap();
    assert_eq!(SENT.load(Ordering::SeqCst), 1);
}

/// Whether the fleet's throttle `name` paces by the provider's headers.
fn paced_by_headers(redis: &RedisServer, name: &str) -> bool {
    redis
        .command(&["HGET", &format!("tenacious:{{{name}}}:throttle"), "hdr"])
        .is_some_and(|reply| reply.ends_with("1\r\n"))
}

/// The provider's bucket as its headers say: 600 a minute, `remaining`
/// left.
fn bucket(remaining: u64) -> tenacious::Signals {
    tenacious::Signals::NONE
        .limit(600)
        .remaining(remaining)
        .reset(Duration::from_secs(10))
}

/// A 529: overloaded, at random (a busy provider answers a share of
/// everyone's calls so).
fn overloaded() -> HttpError {
    use tenacious::Classify;
    let error = HttpError::from_parts(StatusCode::from_u16(529).unwrap(), &http::HeaderMap::new());
    assert!(error.signals().is_overloaded());
    error
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overload_or_two_while_the_headers_pace_the_fleet_cuts_nothing_and_a_run_of_three_cuts()
{
    use tenacious::Throttle;
    static A: Throttle = Throttle::new();
    const PA: Policy = Policy::new().max(1).throttle(&A);
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&A, "noisy").unwrap();
    A.report(bucket(500));
    assert!(reported(&redis, "noisy").await);
    // A 529, then a success, then another 529: no run.
    for fails in [true, false, true] {
        let _ = PA
            .retry(|| {
                let outcome = if fails { Err(overloaded()) } else { Ok(()) };
                async move { outcome }
            })
            .await;
        store.sync().await;
    }
    assert!(
        paced_by_headers(&redis, "noisy"),
        "an overload now and then cut the fleet's rate below what the headers allow"
    );
    // Three in a row (an outage): the fleet's rate is cut.
    for _ in 0..3 {
        let _ = PA.retry(|| async { Err::<(), _>(overloaded()) }).await;
        store.sync().await;
    }
    assert!(
        !paced_by_headers(&redis, "noisy"),
        "a run of overloads cuts the fleet's rate"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_never_heard_the_headers_does_not_cut_the_fleet_s_pacing_on_one_overload() {
    use tenacious::Throttle;
    // A paces by the provider's headers; B, another process of the fleet
    // with other settings, calls an endpoint whose answers carry none.
    static A: Throttle = Throttle::new();
    static B: Throttle = Throttle::new();
    const PB: Policy = Policy::new().max(1).throttle(&B);
    let redis = RedisServer::start();
    let store = Store::connect(&redis.url()).await.unwrap();
    store.bind(&A, "mixed").unwrap();
    store.bind(&B, "mixed").unwrap();
    A.report(bucket(500));
    assert!(reported(&redis, "mixed").await);
    // One overload of B's, then A hears the headers again, then another.
    for _ in 0..2 {
        let _ = PB.retry(|| async { Err::<(), _>(overloaded()) }).await;
        store.sync().await;
        assert!(
            paced_by_headers(&redis, "mixed"),
            "one process's overload now and then cut the fleet off the headers"
        );
        A.report(bucket(490));
        store.sync().await;
    }
    // Three in a row, with no answer between: an outage.
    for _ in 0..3 {
        let _ = PB.retry(|| async { Err::<(), _>(overloaded()) }).await;
        store.sync().await;
    }
    assert!(
        !paced_by_headers(&redis, "mixed"),
        "a run of overloads cuts the fleet's rate"
    );
}
