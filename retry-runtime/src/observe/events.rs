//! The `tracing` events (feature `tracing`): one `WARN` per retry, one
//! per give-up at the level of its stop reason (`GiveUpLevels`), and for a retried stream one `DEBUG` as it
//! commits, one `WARN` per stall, one `INFO` per resume and one `WARN` per
//! partial failure, on the target `tenacious`, with stable field names.
use std::time::Duration;

use super::FailedAttempt;
use crate::{Limit, StopReason};

/// Whether a subscriber listens to any of the events.
pub(super) fn enabled() -> bool {
    // `ERROR` is the most severe level: enabled whenever any other is.
    ::tracing::enabled!(target: "tenacious", ::tracing::Level::ERROR)
}

pub(super) fn retry(name: &'static str, failed: &FailedAttempt, delay: Duration) {
    ::tracing::warn!(
        target: "tenacious",
        r#fn = name,
        attempt = failed.attempt,
        max = failed.max,
        class = failed.class.as_str(),
        variant = failed.variant,
        delay_ms = millis(delay),
        elapsed_ms = elapsed_ms(failed.elapsed),
        "retrying",
    );
}

/// A `tracing` event at a level chosen at run time (the macros want a
/// constant one); `None` emits nothing.
macro_rules! event_at {
    ($level:expr, $($event:tt)*) => {
        match $level {
            ::core::option::Option::Some(::tracing::Level::ERROR) => ::tracing::error!($($event)*),
            ::core::option::Option::Some(::tracing::Level::WARN) => ::tracing::warn!($($event)*),
            ::core::option::Option::Some(::tracing::Level::INFO) => ::tracing::info!($($event)*),
            ::core::option::Option::Some(::tracing::Level::DEBUG) => ::tracing::debug!($($event)*),
            ::core::option::Option::Some(_) => ::tracing::trace!($($event)*),
            ::core::option::Option::None => {}
        }
    };
}

pub(super) fn give_up(name: &'static str, failed: &FailedAttempt, reason: StopReason) {
    // The level follows why the call stopped (see `GiveUpLevels`). An
    // error the policy does not retry, met by the first attempt, or a
    // nested call's one attempt, is no retry layer giving up: the caller
    // (or the outer call) has the error, and the event says "not retried".
    let level = super::levels::give_up_levels().level(reason, failed.class);
    let declined =
        failed.attempt <= 1 && matches!(reason, StopReason::NotRetryable | StopReason::Nested);
    let message = if declined { "not retried" } else { "gave up" };
    event_at!(
        level,
        target: "tenacious",
        r#fn = name,
        attempt = failed.attempt,
        max = failed.max,
        class = failed.class.as_str(),
        variant = failed.variant,
        elapsed_ms = elapsed_ms(failed.elapsed),
        reason = reason.label(),
        "{message}",
    );
}

/// A give-up after a retry's wait ended too close to the deadline.
pub(super) fn late_give_up(
    name: &'static str,
    attempts: u32,
    max: u32,
    elapsed: Option<Duration>,
    reason: StopReason,
) {
    let level = super::levels::give_up_levels().of_reason(reason);
    event_at!(
        level,
        target: "tenacious",
        r#fn = name,
        attempt = attempts,
        max = max,
        elapsed_ms = elapsed_ms(elapsed),
        reason = reason.label(),
        "gave up",
    );
}

/// A guard refused a call before its first attempt: the give-up's event,
/// with `attempt = 0` and `refused = true`, at the level of its reason.
pub(super) fn refused(name: &'static str, max: u32, elapsed: Option<Duration>, reason: StopReason) {
    let level = super::levels::give_up_levels().of_reason(reason);
    event_at!(
        level,
        target: "tenacious",
        r#fn = name,
        attempt = 0_u32,
        max = max,
        elapsed_ms = elapsed_ms(elapsed),
        reason = reason.label(),
        refused = true,
        "gave up",
    );
}

/// A stream committed: its first content item came `after` the start of
/// its attempt.
pub(super) fn stream_first_item(name: &'static str, after: Duration) {
    ::tracing::debug!(
        target: "tenacious",
        r#fn = name,
        first_item_ms = millis(after),
        "stream committed",
    );
}

/// A stream's timer `limit` ran out.
pub(super) fn stream_stall(name: &'static str, limit: Limit) {
    ::tracing::warn!(
        target: "tenacious",
        r#fn = name,
        timer = limit.label(),
        "stream stalled",
    );
}

/// A stream reconnects after `delivered` items.
pub(super) fn stream_resume(name: &'static str, delivered: u64) {
    ::tracing::info!(
        target: "tenacious",
        r#fn = name,
        delivered,
        "resuming stream",
    );
}

/// A call gave up and its fallback answered.
pub(super) fn fallback(name: &'static str) {
    ::tracing::info!(target: "tenacious", r#fn = name, "fallback answered");
}

/// A stream ended with an error after `delivered` items.
pub(super) fn stream_partial(name: &'static str, delivered: u64, reason: StopReason) {
    ::tracing::warn!(
        target: "tenacious",
        r#fn = name,
        delivered,
        reason = reason.label(),
        "stream failed partway",
    );
}

/// Whole milliseconds, saturating.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn elapsed_ms(elapsed: Option<Duration>) -> u64 {
    elapsed.map_or(0, millis)
}
