//! One run of the fleet: its shared state, the workers and their agent tasks (see `sim.rs`).
#![allow(clippy::wildcard_imports)]

use super::*;

/// What the run's workers share: the provider and the counters. One a
/// run, in [`FLEET`] while the run is under way on its thread.
#[derive(Debug)]
struct Fleet {
    bucket: RefCell<Bucket>,
    start: Instant,
    /// The run's length: what happens from `start + duration` on is not
    /// counted.
    duration: Duration,
    requests: Cell<u64>,
    rejected: Cell<u64>,
    overloaded: Cell<u64>,
    gave_up: Cell<u64>,
    refused: Cell<u64>,
    /// The outage, from the run's start.
    outage: Option<(Duration, Duration)>,
    /// [`Config::noise`], and the draws that pick the noisy requests.
    noise: u32,
    noise_rng: RefCell<SmallRng>,
    latencies: RefCell<Vec<Duration>>,
    tasks: Vec<Cell<u32>>,
    over_time: RefCell<Vec<Bin>>,
}

thread_local! {
    /// The fleet of the run under way on this thread. Its workers are
    /// tokio tasks of the run's runtime, which must be `Send`: they reach
    /// the fleet through here rather than holding an `Rc` of it (which
    /// would need a `LocalSet`, a scheduler on top of the runtime's, and
    /// its cost on every wake-up).
    static FLEET: RefCell<Option<Fleet>> = const { RefCell::new(None) };
}

/// `f` of the fleet of the run under way on this thread.
fn with_fleet<R>(f: impl FnOnce(&Fleet) -> R) -> R {
    FLEET.with_borrow(|fleet| f(fleet.as_ref().expect("a run under way on this thread")))
}

impl Fleet {
    /// A request reaching the provider now: when, and its answer, counted,
    /// as the `reads` strategy's client reads it — with a success, the
    /// rate-limit headers it passes on ([`Signals::NONE`] if it reads none).
    fn request(&self, reads: Strategy) -> (Instant, Result<Signals, ApiError>) {
        let now = Instant::now();
        let since = now - self.start;
        let counted = since < self.duration;
        let down = self
            .outage
            .is_some_and(|(from, to)| (from..to).contains(&since));
        if down {
            // The provider is down before any quota is checked: a 529,
            // no header.
            if counted {
                self.count_overloaded(since);
            }
            return (now, Err(ApiError::Overloaded));
        }
        if self.noise > 0 {
            let draw = self.noise_rng.borrow_mut().random_range(0..2000);
            if draw < 2 * self.noise {
                if counted {
                    self.count_overloaded(since);
                }
                let error = if draw % 2 == 0 {
                    ApiError::Overloaded
                } else {
                    ApiError::Unavailable
                };
                return (now, Err(error));
            }
        }
        let mut bucket = self.bucket.borrow_mut();
        let served = bucket.take(since);
        if counted {
            self.requests.set(self.requests.get() + 1);
            if let Some(bin) = self.over_time.borrow_mut().get_mut(bin(since)) {
                bin.requests += 1;
                if served {
                    bin.served += 1;
                } else {
                    bin.rejected += 1;
                }
            }
            if !served {
                self.rejected.set(self.rejected.get() + 1);
            }
        }
        // Only the headers the client reads are worked out.
        let signals = if reads.reads_rate_headers() {
            bucket.signals()
        } else {
            Signals::NONE
        };
        if served {
            return (now, Ok(signals));
        }
        let rejected = ApiError::TooManyRequests {
            retry_after: reads.reads_retry_after().then(|| bucket.retry_after()),
            signals,
        };
        (now, Err(rejected))
    }

    /// Counts a request answered overloaded `since` the run's start.
    fn count_overloaded(&self, since: Duration) {
        self.requests.set(self.requests.get() + 1);
        self.overloaded.set(self.overloaded.get() + 1);
        if let Some(bin) = self.over_time.borrow_mut().get_mut(bin(since)) {
            bin.requests += 1;
            bin.overloaded += 1;
        }
    }
}

/// The [`BIN`] of the run an instant `since` its start falls in.
fn bin(since: Duration) -> usize {
    usize::try_from(since.as_secs() / BIN.as_secs()).unwrap_or(usize::MAX)
}

fn uniform(rng: &mut SmallRng, (lo, hi): (Duration, Duration)) -> Duration {
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rng.random_range(nanos(lo)..=nanos(hi)))
}

/// Tool work: a draw of [`THINK`] from `now`, when the clock was last
/// read; the clock when it is over.
async fn think(rng: &mut SmallRng, now: Instant) -> Instant {
    tokio::time::sleep_until(now + uniform(rng, THINK)).await;
    Instant::now()
}

/// One worker, `id`: agent tasks, one after another, until the run ends
/// at `end`; its draws from `rng`.
///
/// The paused clock stands still between waits: it is read once after
/// each (`now`), and what starts then starts at that reading.
async fn worker(
    id: usize,
    strategy: Strategy,
    (policy, throttle): (&'static Policy, &'static Throttle),
    end: Instant,
    mut rng: SmallRng,
) {
    tokio::time::sleep(uniform(&mut rng, (Duration::ZERO, RAMP))).await;
    let mut now = Instant::now();
    loop {
        let calls = rng.random_range(CALLS_PER_TASK.0..=CALLS_PER_TASK.1);
        let task = run_task(calls, strategy, (policy, throttle), end, &mut rng, &mut now);
        let done = if strategy == Strategy::Admission {
            Task::new().run(task).await
        } else {
            task.await
        };
        let Some(done) = done else { return };
        if done && now < end {
            with_fleet(|fleet| {
                let tasks = &fleet.tasks[id];
                tasks.set(tasks.get() + 1);
            });
        }
    }
}

/// One agent task of `calls` model calls, with tool work after each:
/// `Some(true)` when every call succeeded, `Some(false)` when one gave up
/// or was refused, `None` when the run ended during it.
async fn run_task(
    calls: u32,
    strategy: Strategy,
    (policy, throttle): (&'static Policy, &'static Throttle),
    end: Instant,
    rng: &mut SmallRng,
    now: &mut Instant,
) -> Option<bool> {
    let mut done = true;
    for _ in 0..calls {
        let started = *now;
        let result = policy
            .retry(|| {
                let service = uniform(rng, SERVICE);
                let reject = uniform(rng, REJECT);
                async move {
                    let (at, answer) = with_fleet(|fleet| fleet.request(strategy));
                    let latency = if answer.is_ok() { service } else { reject };
                    tokio::time::sleep_until(at + latency).await;
                    // A success's headers reach the throttle from the
                    // client, as `Throttle::report` documents; a 429's
                    // through `Classify::signals`.
                    answer.map(|signals| {
                        if !signals.is_none() {
                            throttle.report(signals);
                        }
                    })
                }
            })
            .await;
        *now = Instant::now();
        if *now >= end {
            return None;
        }
        match result {
            Ok(()) => with_fleet(|fleet| fleet.latencies.borrow_mut().push(*now - started)),
            Err(ApiError::Refused(_)) => {
                // The breaker is open: the agent takes another route
                // for this task, and its next task comes after the
                // tool time (refused at once, a worker would else
                // spin at one instant).
                with_fleet(|fleet| fleet.refused.set(fleet.refused.get() + 1));
                *now = think(rng, *now).await;
                done = false;
                break;
            }
            Err(_) => {
                with_fleet(|fleet| fleet.gave_up.set(fleet.gave_up.get() + 1));
                done = false;
                break;
            }
        }
        *now = think(rng, *now).await;
    }
    Some(done)
}

/// Runs the fleet once: `config` with `strategy`, randomness from `seed`.
///
/// # Panics
///
/// If tokio's runtime cannot be built.
#[must_use]
pub fn simulate(strategy: Strategy, config: Config, seed: u64) -> Outcome {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    let mut guards = Guards::fresh();
    if let Some((ratio, min)) = config.breaker {
        guards.breaker = Box::leak(Box::new(
            Breaker::new()
                .ratio(f64::from(ratio.clamp(1, 100)) / 100.0)
                .min_throughput(min.max(1)),
        ));
    }
    // Leaked as the guards are: every worker borrows it for the run, and
    // holds a pointer to it rather than a copy.
    let policy: &'static Policy = Box::leak(Box::new(policy(strategy, guards)));
    let bins = usize::try_from(config.duration.as_secs().div_ceil(BIN.as_secs())).unwrap_or(0);
    runtime.block_on(async {
        // The engine's jitter draws from this thread's RNG: seeded, so the
        // run is the seed's.
        tenacious::seed_jitter(seed);
        let start = Instant::now();
        let end = start + config.duration;
        FLEET.set(Some(Fleet {
            bucket: RefCell::new(Bucket::new(&config, start)),
            start,
            duration: config.duration,
            requests: Cell::new(0),
            rejected: Cell::new(0),
            overloaded: Cell::new(0),
            gave_up: Cell::new(0),
            refused: Cell::new(0),
            outage: config.outage,
            noise: config.noise,
            noise_rng: RefCell::new(SmallRng::seed_from_u64(seed ^ 0x006e_6f69_7365)),
            latencies: RefCell::new(Vec::new()),
            tasks: (0..config.workers).map(|_| Cell::new(0)).collect(),
            over_time: RefCell::new(vec![Bin::default(); bins]),
        }));
        for id in 0..config.workers as usize {
            let rng =
                SmallRng::seed_from_u64(seed ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            // Detached: the runtime drops the workers with it.
            drop(tokio::spawn(worker(
                id,
                strategy,
                (policy, guards.throttle),
                end,
                rng,
            )));
        }
        tokio::time::sleep_until(end).await;
    });
    drop(runtime);
    let fleet = FLEET
        .take()
        .expect("the run's fleet, its workers gone with their runtime");
    let mut latencies = fleet.latencies.into_inner();
    latencies.sort_unstable();
    let over_time = fleet.over_time.into_inner();
    Outcome {
        requests: fleet.requests.get(),
        rejected: fleet.rejected.get(),
        overloaded: fleet.overloaded.get(),
        served: over_time.iter().map(|b| u64::from(b.served)).sum(),
        capacity: config.capacity(),
        latencies,
        gave_up: fleet.gave_up.get(),
        refused: fleet.refused.get(),
        tasks: fleet.tasks.iter().map(Cell::get).collect(),
        over_time,
    }
}
