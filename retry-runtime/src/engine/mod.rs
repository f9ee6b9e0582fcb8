//! The decision engine shared by `#[retry]` and `Policy`: [`Engine`], one
//! logical call's retry state, and the one function that decides every
//! stop. It knows nothing of the attempt context: the constructors that
//! consult it are in `call/start.rs`, the frame that points at an engine in
//! `call/context.rs`.
//!
//! Here the engine's state and its step; `decide.rs` the decision about a
//! failed attempt and its report; `admit.rs` what it asks and tells the
//! guards; `spans.rs` its `tracing` spans, one type with the feature on or
//! off. Beside it, what a call's decisions speak of: `event.rs`
//! (`RetryEvent`), `hooks.rs` (the `when` and `notify` traits), `key.rs`
//! and `call_key.rs` (the call's idempotency key).
mod admit;
pub(crate) mod call_key;
mod decide;
pub(crate) mod event;
pub(crate) mod hooks;
pub(crate) mod key;
mod spans;

use std::ops::ControlFlow;
use std::time::Duration;

use crate::clock::{Clock, now_on, saturating_nanos};
use crate::engine::hooks::{NotifyFn, WhenFn};
use crate::engine::key::IdempotencyKey;
use crate::guard::AttemptResult;
use crate::observe;
use crate::{Classify, ErrorClass, Nested, Policy, RetryBudget, Signals, StopReason};
pub(crate) use spans::AttemptSpan;
use spans::CallSpans;

pub(crate) use admit::ask;

/// One logical call's retry state: the one place that decides whether to
/// retry, how long to wait, and why it stopped.
///
/// Created per call; after each attempt [`step`](Engine::step) says either
/// `Break(result)` (return it) or `Continue(delay)` (sleep, then attempt
/// again). Every reason to stop is decided here — class, `when`, `max`,
/// server hints, the deadline, nesting, the guards and the budget — so
/// `#[retry]` and the loops of [`Policy`] behave the same.
///
/// It allocates nothing. It reads the clock when the call starts only if
/// the policy has a deadline or a timeout, or (feature `tracing`) the call
/// has a statistics record and a subscriber listens to the `tenacious`
/// target, so the events' `elapsed_ms` counts from the call's start;
/// otherwise never (an attempt's [`Attempt::elapsed`](crate::Attempt::elapsed)
/// starts the clock when first asked).
///
/// With a statistics record ([`Policy::stats`]) it reports each call's
/// outcome there (and to `tracing` and `metrics` with those features), so
/// `#[retry]` fns and `Policy` loops are counted alike.
#[derive(Debug)]
pub struct Engine<'p> {
    policy: &'p Policy,
    // Every retried future holds its engine for the whole call, so the
    // fields are packed: 56 bytes on 64-bit targets (64 with feature
    // `tracing`, for the pointer to its spans).
    /// Attempts made so far.
    attempts: u32,
    /// `NESTED_ONCE`, `TIMED_OUT`, `BLOCKING`, `HAS_KEY`, `PACE`,
    /// `AFTER_TIMEOUT`, `REFUSABLE`, `BUDGET_LATER`, `RETRY_IN`, and in
    /// the top four bits the chain's guards that hold what they took at
    /// a retry's decision (see [`Engine::held`]).
    flags: u16,
    stop: Option<StopReason>,
    /// The call holds a permit of its policy's
    /// [`Concurrency`](crate::Concurrency) limit, for the attempt about to
    /// run or running: given back when the attempt ends, the call gives up
    /// before it, or the call is dropped (see [`Engine::release_permit`]).
    permit: bool,
    /// The last backoff drawn, in nanoseconds, for decorrelated jitter;
    /// once a guard's refusal stopped the call (`RETRY_IN`), how long
    /// until that guard would admit again, which no backoff needs then.
    prev: u64,
    /// When the call's clock started (see the type's docs for when it is
    /// read), on the clock of `BLOCKING`.
    start: Option<std::time::Instant>,
    /// The call's idempotency key once drawn or derived (`HAS_KEY`), as
    /// two halves: 16 bytes aligned to 8, where a `u128` would take 16
    /// aligned to 16 and pad the engine.
    key: [u64; 2],
    /// The call's span and its attempts' (feature `tracing`; zero-sized
    /// without it): `None` unless a subscriber wants them.
    spans: CallSpans,
}

/// The call is nested and held to one attempt (`Nested::Once`).
const NESTED_ONCE: u16 = 1;
/// The last attempt ran out of its timeout: its retry costs more.
const TIMED_OUT: u16 = 2;
/// The call sleeps the thread between attempts, so its deadline is kept on
/// the system clock, not on tokio's (which a paused test clock stops).
const BLOCKING: u16 = 4;
/// `key` holds the call's key.
const HAS_KEY: u16 = 8;
/// The policy's guard asked, at a retry's decision, to be asked again
/// just before the attempt (see `call/pace/`).
const PACE: u16 = 16;
/// The attempt running (or about to) follows one that timed out: what the
/// guards were told when they admitted it.
const AFTER_TIMEOUT: u16 = 32;
/// The call's error type can say a guard refused the first attempt.
const REFUSABLE: u16 = 64;
/// The policy's budget answered [`Admit::Later`] at the retry's decision:
/// the pacer awaits its [`Guard::admit_async`] after the chain's guards.
const BUDGET_LATER: u16 = 128;
/// The call stopped for a guard's refusal and `prev` holds, in
/// nanoseconds, how long after the refusal that guard would admit again
/// (see [`Engine::retry_in`]).
const RETRY_IN: u16 = 256;
/// The guards hold what they took for the next attempt, which has not
/// started: a call dropped now (a caller's timeout, a `select!`) gives it
/// back ([`Engine`]'s `Drop`). Set at a retry's decision and by the pacer,
/// cleared when the attempt starts ([`Engine::attempt_starts`]) or the
/// call gives up before it.
const OWED: u16 = 512;
/// An attempt runs whose call holds a half-open breaker's probe slot
/// (`PROBING`): dropped, the call gives the slot back.
const IN_FLIGHT: u16 = 1024;
/// The call holds a probe slot of the policy's breaker for the next
/// attempt (taken at the retry's decision or by the pacer).
const PROBING: u16 = 2048;
/// Where the flags keep the guards of the chain (a bit each, by their place
/// in `Policy::chain`) that hold what they took at a retry's decision.
const HELD_SHIFT: u32 = 12;
/// Every guard of the chain, as a mask of [`Engine::held`].
pub(crate) const ALL_HELD: u8 = 0b1111;
/// The guards of the chain (as a mask of [`Engine::held`]) that give back
/// what they took when another guard makes the attempt wait at a retry's
/// decision, and take it afresh after the wait: the breaker (first in
/// `Policy::chain`), whose half-open probe slot is for an attempt now. The
/// pacer keeps the slot it takes through the waits that follow, and the
/// breaker knows it for the call's own when asked again (see `call/pace/`).
/// The other guards keep what they took and are asked again as a recheck:
/// a throttle's token and a cooldown's turn are for the time the wait
/// ends.
pub(crate) const GIVEN_BACK_ON_WAIT: u8 = 0b0001;

/// Where the budget stands in the order the guards are asked, after the
/// chain's (see `Policy::chain`): the index a refusal of the budget's is
/// told by.
pub(crate) const BUDGET_AT: usize = 4;

impl<'p> Engine<'p> {
    /// A call's engine before its first attempt; `nested_key` is the key
    /// of a call nested in another's attempt.
    #[inline]
    pub(crate) fn started(
        policy: &'p Policy,
        clock: Clock,
        nested_key: Option<IdempotencyKey>,
    ) -> Self {
        let mut flags = 0;
        if nested_key.is_some() && matches!(policy.get_nested(), Nested::Once) {
            flags |= NESTED_ONCE;
        }
        if clock == Clock::System {
            flags |= BLOCKING;
        }
        let start = if policy.deadline_nanos().is_some()
            || policy.timeout_nanos().is_some()
            || observe::wants_clock(policy)
        {
            Some(now(flags))
        } else {
            None
        };
        let mut engine = Self {
            policy,
            attempts: 0,
            flags,
            stop: None,
            permit: false,
            prev: policy.base_nanos(),
            start,
            key: [0; 2],
            spans: CallSpans::new(policy),
        };
        if let Some(key) = nested_key {
            engine.set_key(key);
        }
        engine
    }

    #[inline]
    pub(crate) fn set_key(&mut self, key: IdempotencyKey) {
        let bits = key.as_u128();
        // The halves of the key.
        #[allow(clippy::cast_possible_truncation)]
        {
            self.key = [(bits >> 64) as u64, bits as u64];
        }
        self.flags |= HAS_KEY;
    }

    /// Holds a call nested in a running attempt to one attempt, if its
    /// policy says [`Nested::Once`].
    pub(crate) fn nest(&mut self) {
        if matches!(self.policy.get_nested(), Nested::Once) {
            self.flags |= NESTED_ONCE;
        }
    }

    const fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }

    /// Decides after one attempt: `Break(result)` to return it,
    /// `Continue(delay)` to sleep `delay` and attempt again.
    ///
    /// On an error, in this order:
    /// 1. its class is not in the policy's `on`, or `when` returns false
    ///    (`when` is asked only about classes in `on`): stop,
    ///    [`StopReason::NotRetryable`]; the call is not idempotent and the
    ///    error does not prove nothing was sent
    ///    ([`Classify::not_sent`]): stop, [`StopReason::NotIdempotent`];
    /// 2. `max` attempts were made (the error's own
    ///    [`Limits`](crate::Limits) `max` if it has one, else the policy's):
    ///    stop, [`StopReason::Exhausted`] (or [`StopReason::Nested`] for a
    ///    nested call held to one attempt);
    /// 3. it carries a server hint (`retry_after()`, honoured for any retried
    ///    class) longer than `max_retry_after`: stop,
    ///    [`StopReason::HintTooLong`]; the wait is the backoff of the
    ///    policy's jitter, plus the hint if there is one (a floor, never a
    ///    replacement: a zero hint is no hint);
    /// 4. with a deadline, the next attempt would start, after that wait
    ///    and a tick of the timer's rounding, with less than
    ///    [`MIN_ATTEMPT`](crate::MIN_ATTEMPT) left: stop, [`StopReason::Deadline`];
    /// 5. with a [`Guard`], it refuses the retry ([`Admit::Stop`]): stop
    ///    with its reason; a wait it asks for is added, and checked against
    ///    the deadline again ([`StopReason::Deadline`]);
    /// 6. with a budget, it cannot pay for the retry (5 tokens, 10 after a
    ///    timed-out attempt): stop, [`StopReason::Budget`].
    ///
    /// `notify` is called with the error and the delay just before
    /// `Continue` is returned. The guards hear of every attempt's outcome:
    /// so a success gives the budget back what the call's last retry took,
    /// or 1 token if it did not retry.
    #[inline]
    pub fn step<T, E, W, N>(
        &mut self,
        result: Result<T, E>,
        when: W,
        notify: N,
    ) -> ControlFlow<Result<T, E>, Duration>
    where
        E: Classify,
        W: WhenFn<E>,
        N: NotifyFn<E>,
    {
        match self.step_recording(result, when, notify, |_, _, _, _| {}) {
            ControlFlow::Break(result) => ControlFlow::Break(result),
            ControlFlow::Continue((delay, _)) => ControlFlow::Continue(delay),
        }
    }

    /// [`step`](Engine::step), telling `record` about each failed attempt:
    /// its number, error, class and the delay before the next one (`None`
    /// when the call stops).
    #[inline]
    pub(crate) fn step_recording<T, E, W, N, F>(
        &mut self,
        result: Result<T, E>,
        when: W,
        notify: N,
        record: F,
    ) -> ControlFlow<Result<T, E>, (Duration, E)>
    where
        E: Classify,
        W: WhenFn<E>,
        N: NotifyFn<E>,
        F: FnMut(u32, &E, ErrorClass, Option<Duration>),
    {
        // An attempt's result: it was made, whatever its driver said.
        self.flags &= !(IN_FLIGHT | OWED);
        match result {
            Ok(value) => {
                self.succeeded();
                ControlFlow::Break(Ok(value))
            }
            Err(error) => match self.failed(&error, when, notify, record) {
                ControlFlow::Break(()) => ControlFlow::Break(Err(error)),
                ControlFlow::Continue(delay) => ControlFlow::Continue((delay, error)),
            },
        }
    }

    /// The attempt succeeded. Inlined into every retried call, so kept to
    /// what a first-attempt success without a budget needs: a count of the
    /// attempt and one counter of the statistics record; the rest is out of
    /// line, to keep the retried fn's own code small.
    #[inline]
    fn succeeded(&mut self) {
        let policy = self.policy;
        if self.attempts == 0 && !has_guards(policy) {
            self.attempts = 1;
            if let Some(stats) = policy.get_stats() {
                observe::clean_success(stats);
                self.spans.succeeded(1);
            }
        } else {
            self.succeeded_otherwise();
        }
    }

    /// A success after retries, or under a guard or a budget.
    #[inline(never)]
    fn succeeded_otherwise(&mut self) {
        self.attempts = self.attempts.saturating_add(1);
        if has_guards(self.policy) {
            if self.permit {
                self.sample_permit(crate::SampleOutcome::Ok);
            }
            self.release_permit();
            if self.policy.has_observers() {
                self.tell_guards(self.attempts, AttemptResult::Success, Signals::NONE);
            }
        }
        if let Some(stats) = self.policy.get_stats() {
            observe::success(stats, self.attempts);
            self.spans.succeeded(self.attempts);
        }
    }

    /// Nanoseconds since the call started, saturating; 0 before the clock
    /// was first read.
    fn elapsed_nanos(&self) -> u64 {
        self.elapsed().map_or(0, saturating_nanos)
    }

    /// Time since the call started, on its clock; `None` before the clock
    /// was first read.
    fn elapsed(&self) -> Option<Duration> {
        self.start
            .map(|start| now(self.flags).saturating_duration_since(start))
    }

    /// Whether the policy bounds each attempt (`timeout`).
    #[inline]
    pub(crate) const fn has_timeout(&self) -> bool {
        self.policy.timeout_nanos().is_some()
    }

    /// How long the next attempt may run: the policy's timeout, cut to what
    /// is left of the deadline; `None` when neither is set.
    #[inline]
    pub(crate) fn attempt_limit(&self) -> Option<Duration> {
        let policy = self.policy;
        let left = policy
            .deadline_nanos()
            .map(|deadline| deadline.saturating_sub(self.elapsed_nanos()));
        let nanos = match (policy.timeout_nanos(), left) {
            (Some(timeout), Some(left)) => timeout.min(left),
            (Some(limit), None) | (None, Some(limit)) => limit,
            (None, None) => return None,
        };
        Some(Duration::from_nanos(nanos))
    }

    /// Notes that the attempt just made ran out of its time.
    pub(crate) fn note_timeout(&mut self) {
        self.flags |= TIMED_OUT;
    }

    /// Whether a subscriber wants the call's spans (never without feature
    /// `tracing`).
    #[inline]
    pub(crate) const fn spans_on(&self) -> bool {
        self.spans.is_on()
    }

    /// The running attempt's span, to enter around its polls, if a
    /// subscriber wants it.
    pub(crate) fn attempt_span(&mut self) -> Option<AttemptSpan> {
        let policy = self.policy;
        let number = self.attempt_number();
        self.spans
            .attempt(number, || policy.get_budget().map(RetryBudget::balance))
    }

    /// The number of the attempt about to run (or running), 1 for the first.
    pub(crate) const fn attempt_number(&self) -> u32 {
        self.attempts.saturating_add(1)
    }

    /// When the call's clock started, starting it now if it was not yet,
    /// and whether it is the system clock (else tokio's).
    pub(crate) fn clock_start(&mut self) -> (std::time::Instant, bool) {
        let flags = self.flags;
        (
            *self.start.get_or_insert_with(|| now(flags)),
            self.has(BLOCKING),
        )
    }

    /// The call's key, drawn now if none was yet.
    pub(crate) fn key(&mut self) -> IdempotencyKey {
        if !self.has(HAS_KEY) {
            self.set_key(IdempotencyKey::random());
        }
        let [high, low] = self.key;
        IdempotencyKey::from_u128((u128::from(high) << 64) | u128::from(low))
    }

    /// The most attempts this call makes: the policy's `max`, or 1 for a
    /// nested call held to one attempt.
    pub(crate) const fn max(&self) -> u32 {
        if self.has(NESTED_ONCE) {
            1
        } else {
            self.policy.get_max()
        }
    }

    /// The policy the call runs under.
    pub(crate) const fn policy(&self) -> &'p Policy {
        self.policy
    }

    /// Attempts made so far (saturating at `u32::MAX`).
    #[must_use]
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Why the call gave up: `None` while retrying and after a success.
    #[must_use]
    pub const fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }
}

impl Drop for Engine<'_> {
    /// A call dropped while the guards hold something for it gives it
    /// back (see `OWED`), and its permit (see `permit`): one test of the
    /// flags otherwise.
    #[inline]
    fn drop(&mut self) {
        if self.flags & (OWED | IN_FLIGHT) != 0 || self.permit {
            self.dropped();
        }
    }
}

/// Whether `policy` names a guard or a budget: known at compile time for a
/// `const` policy, so a call without either runs no guard code.
#[inline]
const fn has_guards(policy: &Policy) -> bool {
    policy.has_guards()
}

/// Now, on the clock `flags` name (`BLOCKING`: the system's, else tokio's).
#[inline]
pub(crate) fn now(flags: u16) -> std::time::Instant {
    now_on(flags & BLOCKING != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RetryBudget;
    use crate::call::glue::step;
    use crate::engine::hooks::{always, ignore};
    use crate::{Jitter, RetryEvent, RetryOn, seed_jitter};
    use proptest::prelude::*;

    #[derive(Debug, PartialEq)]
    struct Fail {
        class: ErrorClass,
        hint: Option<Duration>,
    }

    impl Classify for Fail {
        fn classify(&self) -> ErrorClass {
            self.class
        }
        fn retry_after(&self) -> Option<Duration> {
            self.hint
        }
    }

    fn fail(class: ErrorClass) -> Result<(), Fail> {
        Err(Fail { class, hint: None })
    }

    fn hinted(class: ErrorClass, hint: Duration) -> Result<(), Fail> {
        Err(Fail {
            class,
            hint: Some(hint),
        })
    }

    const MS: Duration = Duration::from_millis(1);

    /// The delays, attempts, stop reason and final result of [`run`].
    type Outcome = (
        Vec<Duration>,
        u32,
        Option<StopReason>,
        Option<Result<(), Fail>>,
    );

    /// Steps `results` through one engine until it breaks; returns the delays
    /// and the engine's final state.
    fn run(policy: &Policy, results: impl IntoIterator<Item = Result<(), Fail>>) -> Outcome {
        let mut engine = Engine::new(policy, Clock::Tokio);
        let mut delays = Vec::new();
        for result in results {
            match engine.step(result, always, ignore) {
                ControlFlow::Continue(d) => delays.push(d),
                ControlFlow::Break(r) => {
                    return (delays, engine.attempts(), engine.stop_reason(), Some(r));
                }
            }
        }
        (delays, engine.attempts(), engine.stop_reason(), None)
    }

    #[test]
    fn success_breaks_at_once_without_a_stop_reason() {
        let (delays, attempts, stop, result) = run(&Policy::new(), [Ok(())]);
        assert!(delays.is_empty());
        assert_eq!((attempts, stop, result), (1, None, Some(Ok(()))));
    }

    #[test]
    fn transient_retried_until_max() {
        let policy = Policy::new().max(4).jitter(Jitter::None).base(10 * MS);
        let (delays, attempts, stop, result) = run(
            &policy,
            std::iter::repeat_with(|| fail(ErrorClass::Transient)),
        );
        assert_eq!(delays, [10 * MS, 20 * MS, 40 * MS]);
        assert_eq!(attempts, 4);
        assert_eq!(stop, Some(StopReason::Exhausted));
        assert_eq!(result, Some(fail(ErrorClass::Transient)));
    }

    #[test]
    fn invalid_and_fatal_stop_after_one_attempt() {
        for class in [ErrorClass::Invalid, ErrorClass::Fatal] {
            let (delays, attempts, stop, result) = run(&Policy::new(), [fail(class)]);
            assert!(delays.is_empty());
            assert_eq!(attempts, 1);
            assert_eq!(stop, Some(StopReason::NotRetryable));
            assert_eq!(result, Some(fail(class)));
        }
    }

    #[test]
    fn classes_outside_on_are_not_retried() {
        let policy = Policy::new().on(RetryOn::TRANSIENT);
        let (_, attempts, stop, _) = run(&policy, [fail(ErrorClass::RateLimited)]);
        assert_eq!((attempts, stop), (1, Some(StopReason::NotRetryable)));
        let policy = Policy::new().on(RetryOn::RATE_LIMITED);
        let (_, attempts, stop, _) = run(&policy, [fail(ErrorClass::Transient)]);
        assert_eq!((attempts, stop), (1, Some(StopReason::NotRetryable)));
    }

    #[test]
    fn a_non_retryable_error_on_the_last_attempt_is_not_retryable_rather_than_exhausted() {
        let policy = Policy::new().max(2).base(Duration::ZERO);
        let (_, attempts, stop, _) = run(
            &policy,
            [fail(ErrorClass::Transient), fail(ErrorClass::Fatal)],
        );
        assert_eq!((attempts, stop), (2, Some(StopReason::NotRetryable)));
    }

    #[test]
    fn when_is_anded_with_on_and_asked_only_about_retried_classes() {
        let policy = Policy::new().base(Duration::ZERO).on(RetryOn::TRANSIENT);
        let mut asked = Vec::new();
        let mut engine = Engine::new(&policy, Clock::Tokio);
        let mut when = |e: &Fail| {
            asked.push(e.class);
            e.hint.is_none()
        };
        assert!(
            engine
                .step(fail(ErrorClass::Transient), &mut when, ignore)
                .is_continue()
        );
        assert!(
            engine
                .step(hinted(ErrorClass::Transient, MS), &mut when, ignore)
                .is_break()
        );
        assert_eq!(engine.stop_reason(), Some(StopReason::NotRetryable));
        let mut engine = Engine::new(&policy, Clock::Tokio);
        assert!(
            engine
                .step(fail(ErrorClass::RateLimited), &mut when, ignore)
                .is_break()
        );
        assert!(
            engine
                .step(fail(ErrorClass::Invalid), &mut when, ignore)
                .is_break()
        );
        assert_eq!(asked, [ErrorClass::Transient, ErrorClass::Transient]);
    }

    #[test]
    fn notify_sees_each_retry_before_its_sleep() {
        let policy = Policy::new().max(3).jitter(Jitter::None).base(5 * MS);
        let mut events = Vec::new();
        let mut engine = Engine::new(&policy, Clock::Tokio);
        let mut notify = |e: &Fail, ev: &RetryEvent| events.push((e.class, *ev));
        let mut delays = Vec::new();
        for class in [
            ErrorClass::Transient,
            ErrorClass::RateLimited,
            ErrorClass::Transient,
        ] {
            if let ControlFlow::Continue(d) = engine.step(fail(class), always, &mut notify) {
                delays.push(d);
            }
        }
        let expected = |attempt, delay, class| {
            (
                class,
                RetryEvent {
                    attempt,
                    max: 3,
                    delay,
                    class,
                },
            )
        };
        assert_eq!(
            events,
            [
                expected(1, 5 * MS, ErrorClass::Transient),
                expected(2, 10 * MS, ErrorClass::RateLimited),
            ]
        );
        assert_eq!(delays, [5 * MS, 10 * MS]);
    }

    #[test]
    fn a_hint_is_waited_for_any_retried_class_on_top_of_the_backoff() {
        let policy = Policy::new().jitter(Jitter::None).base(MS);
        for class in [ErrorClass::Transient, ErrorClass::RateLimited] {
            let (delays, ..) = run(&policy, [hinted(class, Duration::from_secs(3)), Ok(())]);
            assert_eq!(delays, [Duration::from_secs(3) + MS]);
        }
    }

    #[test]
    fn a_zero_hint_waits_the_backoff_like_no_hint() {
        let policy = Policy::new().base(100 * MS).max(2);
        for seed in 0..20 {
            seed_jitter(seed);
            let (hinted_delays, ..) = run(
                &policy,
                [hinted(ErrorClass::RateLimited, Duration::ZERO), Ok(())],
            );
            seed_jitter(seed);
            let (plain, ..) = run(&policy, [fail(ErrorClass::RateLimited), Ok(())]);
            assert_eq!(hinted_delays, plain, "seed {seed}");
        }
    }

    #[test]
    fn a_hint_above_the_limit_stops_at_once() {
        let policy = Policy::new().max_retry_after(Duration::from_secs(10));
        let (delays, attempts, stop, result) = run(
            &policy,
            [hinted(ErrorClass::RateLimited, Duration::from_secs(11))],
        );
        assert!(delays.is_empty());
        assert_eq!((attempts, stop), (1, Some(StopReason::HintTooLong)));
        assert_eq!(
            result,
            Some(hinted(ErrorClass::RateLimited, Duration::from_secs(11)))
        );
        // Exactly the limit is still honoured.
        let (delays, ..) = run(
            &policy.jitter(Jitter::None),
            [
                hinted(ErrorClass::RateLimited, Duration::from_secs(10)),
                Ok(()),
            ],
        );
        assert_eq!(delays, [Duration::from_secs(10) + policy.get_base()]);
    }

    #[test]
    fn decorrelated_follows_the_previous_backoff_not_the_hint() {
        seed_jitter(3);
        let policy = Policy::new()
            .jitter(Jitter::Decorrelated)
            .base(10 * MS)
            .cap(Duration::from_secs(100))
            .max(10);
        let mut engine = Engine::new(&policy, Clock::Tokio);
        let mut prev = 10 * MS;
        for i in 0..9 {
            let result = if i == 4 {
                hinted(ErrorClass::RateLimited, Duration::from_secs(60))
            } else {
                fail(ErrorClass::Transient)
            };
            let ControlFlow::Continue(d) = engine.step(result, always, ignore) else {
                panic!("stopped early");
            };
            // The hint is waited on top of a backoff drawn as usual, which
            // the next draw follows.
            let backoff = if i == 4 {
                assert!(d >= Duration::from_secs(60));
                d - Duration::from_secs(60)
            } else {
                d
            };
            assert!(
                backoff >= 10 * MS && backoff <= prev * 3,
                "{backoff:?} after {prev:?}"
            );
            prev = backoff;
        }
    }

    #[test]
    fn max_u32_attempts_does_not_overflow() {
        let policy = Policy::new().max(u32::MAX).base(Duration::MAX);
        let (delays, attempts, stop, result) = run(&policy, [fail(ErrorClass::Transient), Ok(())]);
        assert_eq!(delays.len(), 1);
        assert!(delays[0] <= policy.get_cap());
        assert_eq!((attempts, stop, result), (2, None, Some(Ok(()))));

        // An engine driven past u32::MAX attempts saturates and stops.
        let mut engine = Engine::new(&policy, Clock::Tokio);
        engine.attempts = u32::MAX - 1;
        assert!(
            engine
                .step(fail(ErrorClass::Transient), always, ignore)
                .is_break()
        );
        assert_eq!(engine.attempts(), u32::MAX);
        assert_eq!(engine.stop_reason(), Some(StopReason::Exhausted));
        assert!(
            engine
                .step(fail(ErrorClass::Transient), always, ignore)
                .is_break()
        );
        assert_eq!(engine.attempts(), u32::MAX);
    }

    #[test]
    fn max_zero_still_makes_one_attempt() {
        let (delays, attempts, stop, _) = run(&Policy::new().max(0), [fail(ErrorClass::Transient)]);
        assert!(delays.is_empty());
        assert_eq!((attempts, stop), (1, Some(StopReason::Exhausted)));
    }

    #[test]
    fn the_generated_codes_step_is_engine_step() {
        let policy = Policy::new().max(2).jitter(Jitter::None).base(MS);
        let mut engine = Engine::new(&policy, Clock::Tokio);
        let first = step(&mut engine, fail(ErrorClass::Transient), always, ignore);
        assert_eq!(first, ControlFlow::Continue(MS));
        let second = step(&mut engine, fail(ErrorClass::Transient), always, ignore);
        assert_eq!(second, ControlFlow::Break(fail(ErrorClass::Transient)));
        assert_eq!(engine.stop_reason(), Some(StopReason::Exhausted));
        let mut engine = Engine::new(&policy, Clock::Tokio);
        let ok = step(&mut engine, Ok::<u8, Fail>(7), always, ignore);
        assert_eq!(ok, ControlFlow::Break(Ok(7)));
    }

    #[test]
    fn the_budget_pays_only_for_retries_that_happen() {
        static BUDGET: RetryBudget = RetryBudget::with_capacity(100);
        let policy = Policy::new()
            .max(2)
            .max_retry_after(Duration::from_secs(1))
            .budget(&BUDGET);
        // Stopped before any wait: not retryable, exhausted, hint too long.
        let (_, _, stop, _) = run(&policy, [fail(ErrorClass::Invalid)]);
        assert_eq!(stop, Some(StopReason::NotRetryable));
        let (_, _, stop, _) = run(
            &policy,
            [hinted(ErrorClass::RateLimited, Duration::from_secs(2))],
        );
        assert_eq!(stop, Some(StopReason::HintTooLong));
        assert_eq!(BUDGET.balance(), 100);
        let (delays, _, stop, _) = run(
            &policy,
            std::iter::repeat_with(|| fail(ErrorClass::Transient)),
        );
        assert_eq!((delays.len(), stop), (1, Some(StopReason::Exhausted)));
        assert_eq!(BUDGET.balance(), 95, "one retry, one charge");

        // A deadline that stops the wait stops it before the charge.
        let policy = policy
            .deadline(Duration::from_nanos(1))
            .jitter(Jitter::None);
        let (_, _, stop, _) = run(&policy, [fail(ErrorClass::Transient)]);
        assert_eq!(stop, Some(StopReason::Deadline));
        assert_eq!(BUDGET.balance(), 95);
    }

    #[test]
    fn a_retry_after_a_timeout_costs_more_and_a_success_gives_it_back() {
        static BUDGET: RetryBudget = RetryBudget::with_capacity(100);
        let policy = Policy::new().max(3).base(MS).budget(&BUDGET);
        let mut engine = Engine::new(&policy, Clock::Tokio);
        engine.note_timeout();
        assert!(
            engine
                .step(fail(ErrorClass::Transient), always, ignore)
                .is_continue()
        );
        assert_eq!(BUDGET.balance(), 90);
        // The flag is for one attempt only.
        assert!(
            engine
                .step(fail(ErrorClass::Transient), always, ignore)
                .is_continue()
        );
        assert_eq!(BUDGET.balance(), 85);
        assert!(engine.step(Ok::<(), Fail>(()), always, ignore).is_break());
        assert_eq!(BUDGET.balance(), 90, "the last retry's 5 come back");
    }

    #[test]
    fn attempt_limit_is_the_timeout_cut_to_what_is_left() {
        let policy = Policy::new();
        assert_eq!(Engine::new(&policy, Clock::Tokio).attempt_limit(), None);
        let policy = Policy::new().timeout(Duration::from_secs(5));
        assert_eq!(
            Engine::new(&policy, Clock::Tokio).attempt_limit(),
            Some(Duration::from_secs(5))
        );
        let policy = Policy::new().deadline(Duration::from_secs(3600));
        let limit = Engine::new(&policy, Clock::Tokio).attempt_limit().unwrap();
        assert!(limit <= Duration::from_secs(3600) && limit > Duration::from_secs(3500));
        let policy = policy.timeout(Duration::from_secs(5));
        assert_eq!(
            Engine::new(&policy, Clock::Tokio).attempt_limit(),
            Some(Duration::from_secs(5))
        );
        let policy = Policy::new()
            .deadline(Duration::ZERO)
            .timeout(Duration::from_secs(5));
        assert_eq!(
            Engine::new(&policy, Clock::Tokio).attempt_limit(),
            Some(Duration::ZERO)
        );
    }

    fn any_class() -> impl Strategy<Value = ErrorClass> {
        prop_oneof![
            Just(ErrorClass::Transient),
            Just(ErrorClass::RateLimited),
            Just(ErrorClass::Invalid),
            Just(ErrorClass::Fatal),
        ]
    }

    fn any_duration() -> impl Strategy<Value = Duration> {
        prop_oneof![
            Just(Duration::ZERO),
            Just(Duration::MAX),
            (0..=u64::MAX).prop_map(Duration::from_nanos),
            (any::<u64>(), 0..1_000_000_000u32).prop_map(|(s, n)| Duration::new(s, n)),
        ]
    }

    proptest! {
        #[test]
        fn hinted_waits_are_bounded(
            hint in any_duration(),
            limit in any_duration(),
            seed in any::<u64>(),
            jitter in prop_oneof![Just(Jitter::None), Just(Jitter::Full), Just(Jitter::Equal), Just(Jitter::Decorrelated)],
        ) {
            seed_jitter(seed);
            let policy = Policy::new().jitter(jitter).max_retry_after(limit);
            let mut engine = Engine::new(&policy, Clock::Tokio);
            let step = engine.step(hinted(ErrorClass::RateLimited, hint), always, ignore);
            let hint_ns = saturating_nanos(hint);
            if hint_ns > saturating_nanos(limit) {
                prop_assert!(step.is_break());
                prop_assert_eq!(engine.stop_reason(), Some(StopReason::HintTooLong));
            } else {
                let ControlFlow::Continue(d) = step else {
                    return Err(TestCaseError::fail("a hint within the limit must be waited"));
                };
                let d = saturating_nanos(d);
                prop_assert!(d >= hint_ns);
                prop_assert!(d - hint_ns <= policy.cap_nanos(), "the backoff on top is capped");
            }
        }

        #[test]
        fn any_sequence_of_errors_ends_within_max_and_never_waits_past_cap(
            classes in proptest::collection::vec(any_class(), 1..20),
            max in 0..10u32,
            base in any_duration(),
            cap in any_duration(),
            seed in any::<u64>(),
        ) {
            seed_jitter(seed);
            let policy = Policy::new().max(max).base(base).cap(cap).jitter(Jitter::Decorrelated);
            let mut engine = Engine::new(&policy, Clock::Tokio);
            let mut steps = 0;
            for class in classes {
                steps += 1;
                match engine.step(fail(class), always, ignore) {
                    ControlFlow::Continue(d) => {
                        prop_assert!(class.is_retryable());
                        prop_assert!(d <= policy.get_cap());
                    }
                    ControlFlow::Break(_) => break,
                }
            }
            prop_assert!(steps <= max.max(1));
            prop_assert_eq!(engine.attempts(), steps);
        }
    }
}
