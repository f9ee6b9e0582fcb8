//! Snapshots taken while calls run are consistent: no snapshot shows more
//! retried calls than calls, more recovered calls than retried ones, more
//! given-up calls than calls, or fewer attempts than calls, so every
//! figure stays within its range. Alone in its binary: it asserts on every
//! registered record.
use std::io;
use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use tenacious_runtime::stats::{self, CallStats, FnStats};
use tenacious_runtime::{Policy, StopReason};

/// Every call retries once, then succeeds: at rest `recovered == retried
/// == calls`, so a snapshot that reads one counter a call later than
/// another breaks an inequality at once.
static RECOVERS: CallStats = CallStats::new("recovers");
/// Every call retries, then gives up: at rest `gave up == retried ==
/// calls`.
static GIVES_UP: CallStats = CallStats::new("gives_up");
/// Calls that succeed at once, on the one-counter path, beside the others.
static CLEAN: CallStats = CallStats::new("clean");

const WRITERS: usize = 3;
const CALLS: usize = 300_000;
/// Snapshots taken after the writers are done, so the reader checks some
/// even if it was never scheduled while they ran.
const TAIL_SNAPSHOTS: usize = 100;

fn timed_out() -> io::Error {
    io::Error::from(io::ErrorKind::TimedOut)
}

/// The invariants of one row of a snapshot; `Err` names the first broken.
fn check(stats: &FnStats) -> Result<(), String> {
    let name = stats.name();
    let (calls, attempts) = (stats.calls(), stats.attempts());
    let (retried, recovered) = (stats.retried(), stats.recovered());
    let gave_up = stats.gave_up_total();
    let unit = 0.0..=1.0;
    if retried > calls {
        return Err(format!("{name}: retried {retried} > calls {calls}"));
    }
    if recovered > retried {
        return Err(format!("{name}: recovered {recovered} > retried {retried}"));
    }
    if recovered + gave_up > calls {
        return Err(format!(
            "{name}: recovered {recovered} + gave up {gave_up} > calls {calls}"
        ));
    }
    if attempts < calls {
        return Err(format!("{name}: attempts {attempts} < calls {calls}"));
    }
    if stats.retries() < retried {
        return Err(format!(
            "{name}: retries {} < retried calls {retried}",
            stats.retries()
        ));
    }
    for (figure, value) in [
        ("retry rate", stats.retry_rate()),
        ("retry success rate", stats.retry_success_rate()),
    ] {
        if let Some(value) = value.filter(|v| !unit.contains(v)) {
            return Err(format!("{name}: {figure} {value} outside [0, 1]"));
        }
    }
    if let Some(mean) = stats.mean_attempts().filter(|m| *m < 1.0) {
        return Err(format!("{name}: mean attempts {mean} < 1"));
    }
    Ok(())
}

#[test]
fn snapshots_taken_while_calls_run_are_consistent() {
    const POLICY: Policy = Policy::new().max(2).base(Duration::ZERO);
    let recovers = POLICY.stats(&RECOVERS);
    let gives_up = POLICY.stats(&GIVES_UP);
    let clean = POLICY.stats(&CLEAN);
    let running = AtomicUsize::new(WRITERS);
    let start = Barrier::new(WRITERS + 1);
    let (snapshots, broken) = thread::scope(|scope| {
        for writer in 0..WRITERS {
            let (running, start) = (&running, &start);
            scope.spawn(move || {
                start.wait();
                for call in 0..CALLS {
                    let mut failed = false;
                    let result = match (writer + call) % 3 {
                        0 => recovers.retry_blocking(|| {
                            if std::mem::replace(&mut failed, true) {
                                Ok(())
                            } else {
                                Err(timed_out())
                            }
                        }),
                        1 => gives_up.retry_blocking(|| Err(timed_out())),
                        _ => clean.retry_blocking(|| Ok::<_, io::Error>(())),
                    };
                    assert_eq!(result.is_ok(), (writer + call) % 3 != 1);
                }
                running.fetch_sub(1, Ordering::Release);
            });
        }
        let reader = scope.spawn(|| {
            start.wait();
            let (mut snapshots, mut tail) = (0_usize, 0);
            let mut broken = Vec::new();
            while tail < TAIL_SNAPSHOTS {
                if running.load(Ordering::Acquire) == 0 {
                    tail += 1;
                }
                let snapshot = stats::snapshot();
                snapshots += 1;
                for row in snapshot.fns().iter().chain([snapshot.total()]) {
                    if let Err(why) = check(row) {
                        broken.push(why);
                    }
                }
            }
            (snapshots, broken)
        });
        reader.join().unwrap()
    });
    // One example of each kind of break.
    let mut kinds: Vec<&String> = Vec::new();
    for why in &broken {
        let kind = |w: &str| w.replace(|c: char| c.is_ascii_digit(), "");
        if !kinds.iter().any(|k| kind(k) == kind(why)) {
            kinds.push(why);
        }
    }
    assert!(
        broken.is_empty(),
        "{} inconsistent rows in {snapshots} snapshots: {kinds:?}",
        broken.len()
    );

    // At rest the counts are exact.
    let snapshot = stats::snapshot();
    let per_fn = (WRITERS * CALLS / 3) as u64;
    let recovers = snapshot.get("recovers").unwrap();
    assert_eq!(
        (recovers.calls(), recovers.retried(), recovers.recovered()),
        (per_fn, per_fn, per_fn)
    );
    let gives_up = snapshot.get("gives_up").unwrap();
    assert_eq!(
        (
            gives_up.calls(),
            gives_up.retried(),
            gives_up.gave_up(StopReason::Exhausted)
        ),
        (per_fn, per_fn, per_fn)
    );
    assert_eq!(snapshot.get("clean").unwrap().calls(), per_fn);
    assert_eq!(snapshot.total().attempts(), 5 * per_fn);
}
