//! What the throttle learns from the provider's rate-limit headers: the
//! window reported (`report`), a mirror of the provider's token bucket
//! when its limit is known, and the starts spread over what is left.
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Throttle;
use super::bucket::{State, nanos_ceil, seconds};
use crate::Signals;
use crate::clock::{saturating_nanos, since_epoch};

/// The longest reset a report is believed for: a day. A longer one (a
/// saturated or garbled `x-ratelimit-reset-requests`) says nothing of the
/// window, rather than holding every call of the process until it
/// restarts.
pub const MAX_RESET: Duration = Duration::from_secs(86_400);

impl State {
    /// The reported window: `remaining` requests until `reset` from `now`
    /// (nanoseconds), out of `limit` if said. It replaces the window
    /// before it: what an older report held back is held no longer than
    /// this one says. A reset longer than [`MAX_RESET`] says nothing (a
    /// saturated or garbled header): the fixed window before it ends, a
    /// mirror keeps the rate it knows.
    pub(super) fn report(&mut self, now: u64, remaining: u64, reset: Duration, limit: Option<u64>) {
        if reset > MAX_RESET {
            if !self.mirrored {
                self.window_until = 0;
                self.window_next = self.window_next.min(now);
            }
            return;
        }
        let reset = saturating_nanos(reset);
        let until = now.saturating_add(reset);
        if let Some(limit) = limit.filter(|&limit| limit > 0)
            && self.mirror(now, remaining, reset, limit)
        {
            return;
        }
        self.mirrored = false;
        self.window_burst = 0;
        self.window_until = until;
        match reset.checked_div(remaining) {
            // The next start: no later than one of the new spacings on,
            // whatever an older window held back.
            Some(spacing) => {
                self.window_spacing = spacing;
                self.window_next = self.window_next.min(now.saturating_add(spacing));
            }
            // None left: nothing starts before the reset, and nothing
            // waits past it.
            None => self.window_next = until,
        }
    }

    /// The report of a window of `limit` as the provider's token bucket:
    /// full again after `reset` nanoseconds, so refilling at
    /// `(limit − remaining) / reset`, with `remaining` tokens in it now.
    /// Whether it could: a full bucket says no rate, unless one is known.
    fn mirror(&mut self, now: u64, remaining: u64, reset: u64, limit: u64) -> bool {
        if remaining < limit && reset > 0 {
            // `remaining` is a whole count: the bucket holds between it
            // and one more, so the refill rate lies between these two.
            let missing = (limit - remaining) as f64;
            let reset = seconds(reset);
            let (lo, hi) = ((missing - 1.0) / reset, missing / reset);
            if self.mirrored && lo <= self.rate_hi && hi >= self.rate_lo {
                // The same rate, known better.
                self.rate_lo = self.rate_lo.max(lo);
                self.rate_hi = self.rate_hi.min(hi);
            } else {
                // The first report, or the provider's rate changed: what
                // the old rate held back is held no longer than one start
                // at the new one.
                self.rate_lo = lo;
                self.rate_hi = hi;
                let spacing = nanos_ceil(2.0 / (lo + hi)).max(1);
                self.window_next = self.window_next.min(now.saturating_add(spacing));
            }
        } else if !self.mirrored {
            return false;
        }
        self.mirrored = true;
        let rate = f64::midpoint(self.rate_lo, self.rate_hi);
        let spacing = nanos_ceil(1.0 / rate).max(1);
        self.window_spacing = spacing;
        self.window_burst = spacing.saturating_mul(limit - 1);
        // The earliest start with `remaining` tokens in the bucket now:
        // `remaining − 1` spacings ago, or one spacing ahead for none. A
        // report only ever holds the calls back: its count was taken when
        // its request reached the provider, before the starts given since.
        let next = match remaining.checked_sub(1) {
            Some(more) => now.saturating_sub(spacing.saturating_mul(more)),
            None => now.saturating_add(spacing),
        };
        self.window_next = self.window_next.max(next);
        true
    }

    /// The start the window allows an attempt ready at `ready`, if it
    /// paces it at all.
    pub(super) fn window_slot(&self, ready: u64) -> Option<u64> {
        if !self.mirrored && self.window_next <= ready && self.window_until <= ready {
            None
        } else {
            Some(self.window_next.max(ready))
        }
    }
}

impl Throttle {
    /// Hands over what a response said about the provider's rate-limit
    /// window, now: for a success, whose headers never reach the guard (the
    /// retried fn returns the user's value). Call it from inside the
    /// retried fn, before returning. Only `remaining`, `reset` (both must
    /// be given) and `limit` are read; a throttle reaches the guard as the
    /// attempt's error. Bound to a store (feature `redis`), the fleet's
    /// throttle paces by it too.
    ///
    /// "Now" is tokio's clock, which an async call keeps its times on (a
    /// paused test clock included); outside a paused runtime it is the
    /// system's, as a blocking call's. Use
    /// [`report_at`](Throttle::report_at) to give the instant.
    ///
    /// ```
    /// use http::HeaderMap;
    /// use tenacious::{HttpError, Policy, Throttle, rate_limits};
    ///
    /// static OPENAI: Throttle = Throttle::new();
    /// const POLICY: Policy = Policy::new().guard(&OPENAI);
    ///
    /// /// What a client returns: the status and headers (and a body).
    /// fn send() -> (http::StatusCode, HeaderMap) {
    ///     let mut headers = HeaderMap::new();
    ///     headers.insert("x-ratelimit-remaining-requests", "59".parse().unwrap());
    ///     headers.insert("x-ratelimit-reset-requests", "1s".parse().unwrap());
    ///     (http::StatusCode::OK, headers)
    /// }
    ///
    /// let answer = POLICY.retry_blocking(|| {
    ///     let (status, headers) = send();
    ///     if !status.is_success() {
    ///         // A failure's headers reach the throttle through the error.
    ///         return Err(HttpError::from_parts(status, &headers));
    ///     }
    ///     OPENAI.report(rate_limits::from_headers(&headers));
    ///     Ok("done")
    /// });
    /// assert_eq!(answer.unwrap(), "done");
    /// ```
    pub fn report(&self, signals: Signals) {
        self.report_at(crate::clock::now_on(false), signals);
    }

    /// [`report`](Throttle::report) at `now`, on the calls' clock.
    pub fn report_at(&self, now: Instant, signals: Signals) {
        let (Some(remaining), Some(reset)) = (signals.get_remaining(), signals.get_reset()) else {
            return;
        };
        if let Some(shared) = self.shared.get()
            && shared.is_up()
        {
            // Bound to a store: the fleet's throttle paces by it.
            shared.report(signals);
        }
        self.lock()
            .report(since_epoch(now), remaining, reset, signals.get_limit());
        self.engaged.store(true, Ordering::Release);
    }
}
