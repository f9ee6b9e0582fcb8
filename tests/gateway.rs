//! The gateway of `examples/gateway.rs`, in-process against its three
//! faulty providers on loopback, on the paused clock: what it answers to
//! each fault, who served, each word once, and the requests each provider
//! got. The timers are the example's own (30 s first token and stall),
//! not shortened for the test.
//!
//! Times are read only as "at least": on the paused clock a response
//! whose last bytes are in flight on loopback can be read a timer later
//! (the clock auto-advances while the runtime waits on the socket), so
//! an upper bound would measure tokio, not the gateway; the counts say
//! how often each provider was asked.
//!
//! One gateway serves every scenario in turn, in one test, as a real one
//! would: a target's breaker belongs to its name in the process, so the
//! scenarios are 31 virtual seconds apart, past the breaker's window.
use std::time::Duration;

use tokio::time::Instant;

#[path = "../examples/gateway"]
#[allow(dead_code, reason = "shared with examples/gateway.rs")]
mod gateway {
    pub mod app;
    pub mod demo;
    pub mod provider;
}

use gateway::demo::{Answer, ask, start_gateway};
use gateway::provider::{Provider, WORDS};

/// The whole answer, each word once, in order.
fn whole() -> Vec<String> {
    (0..WORDS).map(|i| format!("w{i}")).collect()
}

struct Bench {
    gpt: Provider,
    claude: Provider,
    gemini: Provider,
    addr: std::net::SocketAddr,
    client: reqwest::Client,
}

impl Bench {
    async fn start() -> Self {
        let (gpt, claude, gemini) = tokio::join!(
            Provider::start("gpt-main"),
            Provider::start("claude-backup"),
            Provider::start("gemini-long"),
        );
        // Without a pool of idle connections: on the paused clock, a
        // streamed answer on a connection reused from an earlier request
        // stalls after its first chunk until the next timer (the clock
        // advances while the bytes are in flight); on the real clock it
        // does not (`cargo run --example gateway` streams on reused
        // connections). A fresh connection per request reads on time.
        let upstream = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap();
        let addr = start_gateway(&gpt, &claude, &gemini, upstream).await;
        Self {
            gpt,
            claude,
            gemini,
            addr,
            client: reqwest::Client::new(),
        }
    }

    /// Asks for `scenario`, then lets the breaker's window pass.
    async fn ask(&self, scenario: &str, stream: bool) -> (Answer, Duration, [usize; 3]) {
        self.ask_with(scenario, stream, None).await
    }

    async fn ask_with(
        &self,
        scenario: &str,
        stream: bool,
        fallbacks: Option<&[&str]>,
    ) -> (Answer, Duration, [usize; 3]) {
        let start = Instant::now();
        let answer = ask(&self.client, self.addr, scenario, stream, fallbacks).await;
        let took = start.elapsed();
        tokio::time::sleep(Duration::from_secs(31)).await;
        let asked = [&self.gpt, &self.claude, &self.gemini].map(|p| p.asked(scenario));
        (answer, took, asked)
    }
}

#[tokio::test(start_paused = true)]
async fn the_gateway_answers_each_fault_with_the_right_target() {
    let bench = Bench::start().await;

    // A 429 with Retry-After: 2 s is waited out at the same model.
    let (answer, took, asked) = bench.ask("429-retry-after", false).await;
    assert_eq!(
        (answer.status, answer.models.clone()),
        (200, vec!["gpt-main".to_owned()])
    );
    assert_eq!(answer.words, whole());
    assert_eq!(asked, [2, 0, 0]);
    assert!(took >= Duration::from_secs(2), "{took:?}");

    // A 429 without a hint: backed off, same model, streamed.
    let (answer, _, asked) = bench.ask("429-bare", true).await;
    assert_eq!((answer.status, answer.words.clone()), (200, whole()));
    assert_eq!(asked, [2, 0, 0]);

    // A 500 once: retried at the same model.
    let (answer, _, asked) = bench.ask("500-once", false).await;
    assert_eq!(
        (answer.status, answer.served_by.as_deref()),
        (200, Some("gpt-main"))
    );
    assert_eq!(asked, [2, 0, 0]);

    // A 503 that persists: 3 attempts, then the fallback, whose answer
    // names itself and its usage.
    let (answer, _, asked) = bench.ask("503-persists", false).await;
    assert_eq!(answer.served_by.as_deref(), Some("claude-backup"));
    assert_eq!(answer.models, ["claude-backup"]);
    assert_eq!(answer.usage, [(12, 60)]);
    assert_eq!(answer.words, whole());
    assert_eq!(asked, [3, 1, 0]);

    // The request's own fallbacks replace the configured chain.
    let (answer, _, asked) = bench
        .ask_with("503-persists#2", false, Some(&["gemini-long"]))
        .await;
    assert_eq!(answer.served_by.as_deref(), Some("gemini-long"));
    assert_eq!(asked, [3, 0, 1]);

    // A connection reset before any header: retried, then the fallback.
    let (answer, _, asked) = bench.ask("reset", true).await;
    assert_eq!((answer.status, answer.words.clone()), (200, whole()));
    assert_eq!(answer.models, ["claude-backup"]);
    assert_eq!(asked, [3, 1, 0]);

    // A provider that never answers: left after one attempt, at the 30 s
    // first-token limit (streamed) or the 30 s timeout (JSON).
    let (answer, took, asked) = bench.ask("silent", true).await;
    assert_eq!(answer.models, ["claude-backup"]);
    assert_eq!(asked, [1, 1, 0]);
    assert!(took >= Duration::from_secs(30), "{took:?}");
    let (answer, took, asked) = bench.ask("silent#json", false).await;
    assert_eq!(answer.served_by.as_deref(), Some("claude-backup"));
    assert_eq!(asked, [1, 1, 0]);
    assert!(took >= Duration::from_secs(30), "{took:?}");

    // A first token after 20 s is within the 30 s limit: not cut.
    let (answer, took, asked) = bench.ask("first-word-20s", true).await;
    assert_eq!(
        (answer.words.clone(), answer.models.clone()),
        (whole(), vec!["gpt-main".to_owned()])
    );
    assert_eq!(asked, [1, 0, 0]);
    assert!(took >= Duration::from_secs(20), "{took:?}");

    // Cut after 40 of 60 words: continued by the model that takes a
    // prefill, from the 40 words the client has; each word once.
    let (answer, _, asked) = bench.ask("cut-40", true).await;
    assert_eq!(answer.words, whole());
    assert_eq!(answer.models, ["gpt-main", "claude-backup"]);
    assert_eq!(asked, [1, 1, 0]);
    let prefill = bench
        .claude
        .requests()
        .last()
        .unwrap()
        .prefill
        .clone()
        .unwrap();
    assert_eq!(prefill.split_whitespace().count(), 40);
    assert_eq!(
        answer.usage,
        [(52, 20)],
        "the continuation's usage, forwarded"
    );

    // A stall after 30 words: the 30 s idle limit, then the same.
    let (answer, took, asked) = bench.ask("stall-30", true).await;
    assert_eq!(answer.words, whole());
    assert_eq!(answer.models, ["gpt-main", "claude-backup"]);
    assert_eq!(asked, [1, 1, 0]);
    assert!(took >= Duration::from_secs(30), "{took:?}");

    // Too long for 8k: the next larger window, past the other 8k model.
    let (answer, _, asked) = bench.ask("context-length", true).await;
    assert_eq!(answer.models, ["gemini-long"]);
    assert_eq!(asked, [1, 0, 1]);

    // A content filter: every model would refuse; the client gets the 400.
    let (answer, _, asked) = bench.ask("content-filter", false).await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.class.as_deref(), Some("invalid"));
    assert!(answer.error.unwrap().contains("content_filter"));
    assert_eq!(asked, [1, 0, 0]);

    // Cut after 40, and the model that could continue rejects the
    // prefill: the client has 40 words and an error that is the cut
    // (transient), not the fallback's 400.
    let (answer, _, asked) = bench.ask("reject-prefill", true).await;
    assert_eq!(answer.words, whole()[..40]);
    assert_eq!(answer.class.as_deref(), Some("transient"));
    assert!(answer.error.unwrap().contains("partial output"));
    assert_eq!(asked, [1, 1, 0]);

    // A hint far past the 2 s the policy waits: the fallback at once.
    let (answer, _, asked) = bench.ask("429-long", false).await;
    assert_eq!(answer.served_by.as_deref(), Some("claude-backup"));
    assert_eq!(asked, [1, 1, 0]);
    // Its cooldown holds the primary for the hint's 600 s: let it pass.
    tokio::time::sleep(Duration::from_secs(600)).await;

    primary_down_for_60_s(&bench).await;
}

/// A primary down for 60 s is served by the fallback meanwhile, then gets
/// its traffic back.
async fn primary_down_for_60_s(bench: &Bench) {
    let start = Instant::now();
    let mut served = Vec::new();
    for _ in 0..30 {
        let at = start.elapsed();
        let answer = ask(&bench.client, bench.addr, "down-60s", false, None).await;
        assert_eq!(answer.status, 200);
        assert_eq!(answer.words, whole());
        served.push((at, answer.served_by.unwrap()));
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    let during: Vec<_> = served
        .iter()
        .filter(|(at, _)| *at < Duration::from_secs(60))
        .collect();
    assert!(
        during.iter().all(|(_, by)| by == "claude-backup"),
        "{served:?}"
    );
    // Back on the primary within the breaker's 10 s open period after the
    // outage, and there from then on (no stickiness to the fallback).
    let back = served.iter().position(|(_, by)| by == "gpt-main").unwrap();
    assert!(served[back].0 <= Duration::from_secs(75), "{served:?}");
    assert!(
        served[back..].iter().all(|(_, by)| by == "gpt-main"),
        "{served:?}"
    );
    // While its breaker was open, the primary was not asked at all.
    let asked = bench.gpt.asked("down-60s");
    assert!(
        asked < 3 * 12,
        "the primary was asked {asked} times during 60 s of outage"
    );
}
