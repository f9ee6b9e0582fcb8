//! A server with a concurrency cap its clients do not know, and a closed
//! loop of clients behind one limit rule, as a virtual-time discrete-event
//! simulation: seeded, deterministic, no clock and no runtime.
//!
//! - **The server** serves at most `C` requests at once. One that arrives
//!   while `C` are in service is answered 429 after a round trip of
//!   1–3 ms ([`REJECT_MIN`]..[`REJECT_MAX`]); one under the cap is answered
//!   after [`BASE`] (50 ms) × a seeded jitter of ±20 % × `1 + 0.3 (n/C)²`,
//!   `n` the requests in service with it: real servers slow down near
//!   their cap, here by up to 30 %. The cap changes at each phase of the
//!   scenario ([`PHASE`], 60 s each); requests in service then finish as
//!   they were. Of the two scenarios beyond the targets
//!   ([`Scenario::LATENCY`]), one serves 3 times slower after a minute at
//!   the same cap, the other queues the requests above its cap (first
//!   come, first served) instead of answering 429.
//! - **The clients**, [`CLIENTS`] of them, always want to send (a closed
//!   loop): one answered 200 sends again at once, one answered 429 waits a
//!   seeded backoff of 50–150 ms first (its retry policy's pause). They
//!   queue for the limit: a request goes only while fewer than
//!   `rule.limit()` are in flight, and each answer is one sample for the
//!   rule (its latency, the requests in flight when it was sent, itself
//!   included, and whether it was a 429).
//!
//! Time is integer nanoseconds; events sit in a binary heap ordered by
//! time, then by the order they were made, so a seed gives one run.
//!
//! Shared by `examples/adaptive.rs` and `tests/adaptive_sim.rs`.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use super::rules::Rule;

/// The service time of a request alone on the server, before jitter.
pub const BASE: Duration = Duration::from_millis(50);
/// The jitter of a service time: uniform within ±this share of it.
pub const JITTER: f64 = 0.2;
/// How much slower a request is when the server is at its cap:
/// `1 + RISE (n/C)²`.
pub const RISE: f64 = 0.3;
/// The shortest round trip of a 429.
pub const REJECT_MIN: Duration = Duration::from_millis(1);
/// The longest round trip of a 429.
pub const REJECT_MAX: Duration = Duration::from_millis(3);
/// The shortest pause of a client after a 429.
pub const PAUSE_MIN: Duration = Duration::from_millis(50);
/// The longest pause of a client after a 429.
pub const PAUSE_MAX: Duration = Duration::from_millis(150);
/// Clients always wanting to send: more than any cap or limit of interest.
pub const CLIENTS: u32 = 256;
/// How long each cap of a scenario lasts.
pub const PHASE: Duration = Duration::from_secs(60);

/// The end of a run whose answers' latency [`Run::latency`] averages.
pub const TAIL: Duration = Duration::from_secs(30);

/// The caps a run goes through, one per [`PHASE`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scenario {
    /// Its name in the table.
    pub name: &'static str,
    /// The server's cap in each phase.
    pub caps: &'static [u32],
    /// How much slower the server serves in each phase than [`BASE`]
    /// (1.0: as fast; empty: 1.0 throughout).
    pub slower: &'static [f64],
    /// Whether requests above the cap wait in a queue (first come, first
    /// served) instead of being answered 429.
    pub queue: bool,
}

impl Scenario {
    /// The scenarios of the table: caps of 2, 8 and 64, then steps from
    /// 64 to 8 and from 8 to 64 after a minute.
    pub const ALL: [Scenario; 5] = [
        Scenario::new("C=2", &[2]),
        Scenario::new("C=8", &[8]),
        Scenario::new("C=64", &[64]),
        Scenario::new("C=64->8", &[64, 8]),
        Scenario::new("C=8->64", &[8, 64]),
    ];

    /// Beyond the targets: the latency side of the rules. The server gets
    /// three times slower after a minute at the same cap of 8 (a rule
    /// that reads latency as load must not give up the cap for it); a
    /// server that queues above its cap of 8 instead of answering 429
    /// (only latency tells the cap).
    pub const LATENCY: [Scenario; 2] = [
        Scenario {
            slower: &[1.0, 3.0],
            ..Scenario::new("C=8 x3", &[8, 8])
        },
        Scenario {
            queue: true,
            ..Scenario::new("C=8 queue", &[8])
        },
    ];

    /// A scenario of 429s at once above `caps`, served at [`BASE`].
    #[must_use]
    pub const fn new(name: &'static str, caps: &'static [u32]) -> Self {
        Self {
            name,
            caps,
            slower: &[],
            queue: false,
        }
    }

    /// The whole run.
    #[must_use]
    pub fn length(&self) -> u64 {
        nanos(PHASE) * self.caps.len() as u64
    }

    /// The last phase, the one measured: `(start, end, cap)`, nanoseconds.
    #[must_use]
    pub fn last_phase(&self) -> (u64, u64, u32) {
        let end = self.length();
        (end - nanos(PHASE), end, self.caps[self.caps.len() - 1])
    }
}

/// What one run produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The limit over time: `(instant, limit)` at the start and at each
    /// change, nanoseconds.
    pub trace: Vec<(u64, u32)>,
    /// Requests answered 200 within the run.
    pub ok: u64,
    /// Requests answered 429 within the run.
    pub rejected: u64,
    /// ∫ requests in service dt, request-nanoseconds.
    pub served: f64,
    /// ∫ cap dt, request-nanoseconds.
    pub capacity: f64,
    /// The mean latency of the requests answered 200 in the last
    /// [`TAIL`] of the run.
    pub latency: Duration,
}

impl Run {
    /// The share of requests answered 429.
    #[must_use]
    pub fn rejected_share(&self) -> f64 {
        let all = self.ok + self.rejected;
        if all == 0 {
            0.0
        } else {
            self.rejected as f64 / all as f64
        }
    }

    /// Goodput against the cap: the requests in service, averaged over the
    /// run, over the cap (1.0 when the client kept `C` in service all the
    /// time).
    #[must_use]
    pub fn goodput(&self) -> f64 {
        self.served / self.capacity
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The answer to a client's request.
    Answer,
    /// The end of a client's pause after a 429.
    Ready,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Event {
    at: u64,
    seq: u64,
    client: u32,
    kind: Kind,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A client's request in flight.
#[derive(Debug, Clone, Copy, Default)]
struct Request {
    sent: u64,
    in_flight: u32,
    served: bool,
}

/// Runs `scenario` once with `rule`, its randomness from `seed`.
#[must_use]
pub fn simulate(rule: &mut dyn Rule, scenario: Scenario, seed: u64) -> Run {
    let mut rng = SmallRng::seed_from_u64(seed);
    let end = scenario.length();
    let phase = nanos(PHASE);
    let mut events = BinaryHeap::new();
    let mut seq = 0_u64;
    let mut push = |events: &mut BinaryHeap<Reverse<Event>>, at, client, kind| {
        seq += 1;
        events.push(Reverse(Event {
            at,
            seq,
            client,
            kind,
        }));
    };
    let mut requests = vec![Request::default(); CLIENTS as usize];
    let mut ready: VecDeque<u32> = (0..CLIENTS).collect();
    let mut waiting: VecDeque<u32> = VecDeque::new();
    let (mut in_flight, mut busy) = (0_u32, 0_u32);
    let mut run = Run {
        trace: vec![(0, rule.limit())],
        ok: 0,
        rejected: 0,
        served: 0.0,
        capacity: 0.0,
        latency: Duration::ZERO,
    };
    let tail = end - nanos(TAIL);
    let (mut latency_sum, mut latency_count) = (0_u64, 0_u32);
    let mut last = 0_u64;
    let mut now = 0_u64;
    loop {
        // Send while the rule lets: each request meets the server at once.
        let index = usize::try_from(now / phase).unwrap_or(usize::MAX);
        let cap = scenario.caps[index];
        let slower = scenario.slower.get(index).copied().unwrap_or(1.0);
        while in_flight < rule.limit() {
            let Some(client) = ready.pop_front() else {
                break;
            };
            in_flight += 1;
            let served = busy < cap || scenario.queue;
            requests[client as usize] = Request {
                sent: now,
                in_flight,
                served,
            };
            if busy < cap {
                busy += 1;
                let delay = service(&mut rng, busy, cap, slower);
                push(&mut events, now + delay, client, Kind::Answer);
            } else if scenario.queue {
                waiting.push_back(client);
            } else {
                let delay = rng.random_range(nanos(REJECT_MIN)..=nanos(REJECT_MAX));
                push(&mut events, now + delay, client, Kind::Answer);
            }
        }
        let Some(Reverse(event)) = events.pop() else {
            break;
        };
        let at = event.at.min(end);
        // The integrals, split at a change of cap.
        while last < at {
            let until = at.min((last / phase + 1) * phase);
            let cap = scenario.caps[usize::try_from(last / phase).unwrap_or(usize::MAX)];
            let span = (until - last) as f64;
            run.served += f64::from(busy) * span;
            run.capacity += f64::from(cap) * span;
            last = until;
        }
        if event.at >= end {
            break;
        }
        now = event.at;
        let client = event.client;
        match event.kind {
            Kind::Ready => ready.push_back(client),
            Kind::Answer => {
                let request = requests[client as usize];
                in_flight -= 1;
                if request.served {
                    busy -= 1;
                    run.ok += 1;
                    ready.push_back(client);
                    // The queue's first (if any) takes its place.
                    let index = usize::try_from(now / phase).unwrap_or(usize::MAX);
                    let cap = scenario.caps[index];
                    if busy < cap
                        && let Some(next) = waiting.pop_front()
                    {
                        busy += 1;
                        let slower = scenario.slower.get(index).copied().unwrap_or(1.0);
                        let delay = service(&mut rng, busy, cap, slower);
                        push(&mut events, now + delay, next, Kind::Answer);
                    }
                } else {
                    run.rejected += 1;
                    let pause = rng.random_range(nanos(PAUSE_MIN)..=nanos(PAUSE_MAX));
                    push(&mut events, now + pause, client, Kind::Ready);
                }
                let latency = Duration::from_nanos(now - request.sent);
                if request.served && now >= tail {
                    latency_sum += now - request.sent;
                    latency_count += 1;
                }
                rule.sample(latency, request.in_flight, !request.served);
                let limit = rule.limit();
                if run.trace.last().is_some_and(|&(_, l)| l != limit) {
                    run.trace.push((now, limit));
                }
            }
        }
    }
    if latency_count > 0 {
        run.latency = Duration::from_nanos(latency_sum / u64::from(latency_count));
    }
    run
}

/// A service time: [`BASE`] × `slower` × the jitter × the rise with `busy`
/// of `cap` in service.
fn service(rng: &mut SmallRng, busy: u32, cap: u32, slower: f64) -> u64 {
    let load = f64::from(busy) / f64::from(cap);
    let jitter = rng.random_range(1.0 - JITTER..=1.0 + JITTER);
    scale(BASE, slower * jitter * (1.0 + RISE * load * load))
}

/// `d × factor`, nanoseconds.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "a positive factor of a few, on tens of milliseconds"
)]
fn scale(d: Duration, factor: f64) -> u64 {
    (d.as_secs_f64() * factor * 1e9) as u64
}

/// `d` in nanoseconds (the simulation's are far below `u64::MAX`).
#[must_use]
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
