//! `#[retry]` on sync fns. These sleep the thread for real, so the
//! durations are microseconds and the tests assert counts and the delays
//! `notify` reports, never the time taken.
use std::cell::RefCell;
use std::time::Duration;

use tenacious::{Classify, ErrorClass, Jitter, Policy, RetryEvent, retry, seed_jitter};

#[derive(Debug, Clone, PartialEq)]
enum DiskError {
    Busy,
    Throttled(Option<Duration>),
    BadPath,
    Denied,
}

impl Classify for DiskError {
    fn classify(&self) -> ErrorClass {
        match self {
            DiskError::Busy => ErrorClass::Transient,
            DiskError::Throttled(_) => ErrorClass::RateLimited,
            DiskError::BadPath => ErrorClass::Invalid,
            DiskError::Denied => ErrorClass::Fatal,
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            DiskError::Throttled(hint) => *hint,
            _ => None,
        }
    }
}

const US: Duration = Duration::from_micros(1);

thread_local! {
    static ATTEMPTS: RefCell<usize> = const { RefCell::new(0) };
    static EVENTS: RefCell<Vec<(DiskError, RetryEvent)>> = const { RefCell::new(Vec::new()) };
    static SCRIPT: RefCell<Vec<DiskError>> = const { RefCell::new(Vec::new()) };
}

fn script(errors: &[DiskError]) {
    ATTEMPTS.with_borrow_mut(|a| *a = 0);
    EVENTS.with_borrow_mut(Vec::clear);
    SCRIPT.with_borrow_mut(|s| {
        s.clear();
        s.extend(errors.iter().rev().cloned());
    });
}

fn attempt() -> Result<usize, DiskError> {
    let n = ATTEMPTS.with_borrow_mut(|a| {
        *a += 1;
        *a
    });
    match SCRIPT.with_borrow_mut(Vec::pop) {
        Some(error) => Err(error),
        None => Ok(n),
    }
}

fn attempts() -> usize {
    ATTEMPTS.with_borrow(|a| *a)
}

fn record(error: &DiskError, event: &RetryEvent) {
    EVENTS.with_borrow_mut(|e| e.push((error.clone(), *event)));
}

fn events() -> Vec<(DiskError, RetryEvent)> {
    EVENTS.with_borrow(Clone::clone)
}

#[retry(max = 4, base = "1us", jitter = "none", notify = record)]
fn write() -> Result<usize, DiskError> {
    attempt()
}

#[test]
fn retried_classes_are_retried_until_max() {
    for error in [DiskError::Busy, DiskError::Throttled(None)] {
        script(&vec![error.clone(); 10]);
        assert_eq!(write(), Err(error));
        assert_eq!(attempts(), 4);
    }
}

#[test]
fn invalid_and_fatal_errors_return_after_one_attempt() {
    for error in [DiskError::BadPath, DiskError::Denied] {
        script(std::slice::from_ref(&error));
        assert_eq!(write(), Err(error));
        assert_eq!(attempts(), 1);
        assert!(events().is_empty());
    }
}

#[test]
fn a_success_ends_the_retries() {
    script(&[DiskError::Busy, DiskError::Throttled(None)]);
    assert_eq!(write(), Ok(3));
}

#[test]
fn notify_sees_the_attempt_delay_and_error() {
    script(&[DiskError::Busy, DiskError::Throttled(None), DiskError::Busy]);
    assert_eq!(write(), Ok(4));
    let seen: Vec<_> = events()
        .into_iter()
        .map(|(error, event)| (error, event.attempt, event.max, event.delay))
        .collect();
    assert_eq!(
        seen,
        [
            (DiskError::Busy, 1, 4, US),
            (DiskError::Throttled(None), 2, 4, 2 * US),
            (DiskError::Busy, 3, 4, 4 * US),
        ]
    );
}

#[retry(max = 3, base = "1us", max_retry_after = "1ms", notify = record)]
fn throttled() -> Result<usize, DiskError> {
    attempt()
}

#[test]
fn a_hint_is_waited_and_one_over_the_limit_stops_at_once() {
    script(&[DiskError::Throttled(Some(50 * US))]);
    assert_eq!(throttled(), Ok(2));
    let delay = events()[0].1.delay;
    assert!(delay >= 50 * US && delay <= 55 * US, "{delay:?}");

    let too_long = DiskError::Throttled(Some(Duration::from_secs(3600)));
    script(std::slice::from_ref(&too_long));
    assert_eq!(throttled(), Err(too_long));
    assert_eq!(attempts(), 1);
}

fn not_throttled(error: &DiskError) -> bool {
    !matches!(error, DiskError::Throttled(_))
}

#[retry(max = 3, base = "1us", on = Transient | RateLimited, when = not_throttled)]
fn narrowed() -> Result<usize, DiskError> {
    attempt()
}

#[test]
fn when_is_anded_with_on() {
    script(&[DiskError::Throttled(None)]);
    assert!(narrowed().is_err());
    assert_eq!(attempts(), 1);
    script(&[DiskError::Busy]);
    assert_eq!(narrowed(), Ok(2));
}

struct Journal {
    entries: Vec<String>,
}

impl Journal {
    #[retry(max = 5, base = "1us")]
    fn append(&mut self, line: &str) -> Result<usize, DiskError> {
        self.entries.push(line.to_owned());
        if self.entries.len() < 3 {
            return Err(DiskError::Busy);
        }
        Ok(self.entries.len())
    }
}

#[test]
fn a_mut_self_method_keeps_its_changes_across_attempts() {
    let mut journal = Journal {
        entries: Vec::new(),
    };
    assert_eq!(journal.append("x"), Ok(3));
    assert_eq!(journal.entries, ["x", "x", "x"]);
}

#[retry(max = 3, base = "1us")]
fn question_mark(text: &str) -> Result<u32, DiskError> {
    attempt()?;
    let n: u32 = text.parse().map_err(|_| DiskError::BadPath)?;
    Ok(n)
}

#[test]
fn question_mark_and_return_end_only_the_attempt() {
    script(&[DiskError::Busy]);
    assert_eq!(question_mark("5"), Ok(5));
    assert_eq!(attempts(), 2);
    script(&[]);
    assert_eq!(question_mark("x"), Err(DiskError::BadPath));
    assert_eq!(attempts(), 1);
}

#[retry(max = 6, base = "1us", cap = "50us", jitter = "full", notify = record)]
fn seeded_full() -> Result<usize, DiskError> {
    attempt()
}

#[retry(max = 6, base = "1us", cap = "50us", jitter = "equal", notify = record)]
fn seeded_equal() -> Result<usize, DiskError> {
    attempt()
}

#[retry(max = 6, base = "1us", cap = "50us", jitter = "decorrelated", notify = record)]
fn seeded_decorrelated() -> Result<usize, DiskError> {
    attempt()
}

#[test]
fn the_policy_api_and_the_macro_wait_the_same_for_the_same_seed() {
    let errors = vec![DiskError::Busy; 5];
    for jitter in [Jitter::Full, Jitter::Equal, Jitter::Decorrelated] {
        let policy = Policy::new().max(6).base(US).cap(50 * US).jitter(jitter);
        let mut runs = Vec::new();
        for seed in [3, 11] {
            seed_jitter(seed);
            script(&errors);
            let by_macro = match jitter {
                Jitter::Full => seeded_full(),
                Jitter::Equal => seeded_equal(),
                _ => seeded_decorrelated(),
            };
            let macro_events = events();

            seed_jitter(seed);
            script(&errors);
            let by_policy = policy.retry_blocking_with(attempt, |_| true, record);
            assert_eq!(by_macro, by_policy);
            assert_eq!(macro_events, events(), "{jitter:?}, seed {seed}");
            assert_eq!(macro_events.len(), 5);
            runs.push(macro_events);
        }
        // Different seeds draw different waits, so the comparison above
        // compares something.
        assert_ne!(runs[0], runs[1], "{jitter:?}");
    }
}
