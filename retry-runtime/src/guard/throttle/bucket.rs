//! The throttle's arithmetic behind its lock: the token bucket, the
//! measured send rate, CUBIC's rate after a throttle (the AWS SDKs'
//! adaptive retry mode) and the starts kept to the rate (GCRA).

// The constants of the AWS SDKs' adaptive retry mode: the AWS SDKs and
// Tools reference guide, "Retry behavior" (adaptive mode: a client-side
// rate limiter, CUBIC), and their implementation in smithy-rs,
// `rust-runtime/aws-smithy-runtime/src/client/retries/client_rate_limiter.rs`
// (`BETA`, `SCALE_CONSTANT`, `SMOOTH`, `MIN_FILL_RATE`, `MIN_CAPACITY`, and
// the half-second buckets of `update_tokens_retrieved_per_second`).

/// CUBIC's multiplicative decrease: a throttle cuts the rate to 70 %.
const BETA: f64 = 0.7;
/// CUBIC's scale constant `C`: how fast the rate grows back.
const SCALE: f64 = 0.4;
/// The weight of the newest half-second bucket in the measured send rate.
const SMOOTH: f64 = 0.8;
/// The least capacity of the token bucket: one request.
const MIN_CAPACITY: f64 = 1.0;
/// The width of a bucket of the measured send rate, in seconds.
const BUCKET_SECONDS: f64 = 0.5;

/// The state behind the lock: seconds since [`since_epoch`]'s epoch for the
/// adaptive rate (as smithy-rs keeps it), nanoseconds for the window.
#[derive(Debug)]
pub(super) struct State {
    /// Whether a throttle was heard: the token bucket paces from then on.
    pub(super) enabled: bool,
    /// Tokens a second.
    pub(super) fill_rate: f64,
    pub(super) capacity: f64,
    /// Below zero when reserved ahead.
    pub(super) tokens: f64,
    /// Every token the bucket was credited since it was made (its refill
    /// and the tokens given back): a queued call's ticket is the credit at
    /// which its token is there, so the calls queued move up as soon as the
    /// rate rises (see [`Throttle::queue`]).
    pub(super) paid: f64,
    /// The rate the queued calls were last woken at (see
    /// [`Throttle::queue`]): a rise of a tenth over it wakes them again.
    pub(super) told_rate: f64,
    /// When the bucket was last filled; 0 for never.
    last_fill: f64,
    pub(super) measured: f64,
    /// The start of the current half-second bucket; NaN for none yet.
    bucket: f64,
    requests_in_bucket: u64,
    last_max_rate: f64,
    last_throttle: f64,
    /// The origin of the adaptive rate's seconds, nanoseconds: a second
    /// before the first attempt or response it timed; 0 until then.
    origin: u64,
    /// The theoretical start of the next attempt at the adaptive rate
    /// (GCRA), nanoseconds: what keeps the actual starts to the rate.
    start_tat: u64,
    /// The reported window's reset; 0 for none.
    pub(super) window_until: u64,
    /// The next free start under the window's pacing.
    pub(super) window_next: u64,
    /// The window's spacing between two starts.
    pub(super) window_spacing: u64,
    /// How far ahead of `window_next` a start may go, in a burst: the
    /// mirrored bucket's size less one token, as a time; 0 for a fixed
    /// window.
    pub(super) window_burst: u64,
    /// Whether the window is a mirror of the provider's token bucket (a
    /// limit was reported), not a fixed window.
    pub(super) mirrored: bool,
    /// Overloads heard since the last other outcome (see
    /// [`OVERLOADS_TO_CUT`]).
    pub(super) overloads: u32,
    /// What the reports so far allow of the provider's refill rate, in
    /// tokens a second: `rate_lo..=rate_hi`.
    pub(super) rate_lo: f64,
    pub(super) rate_hi: f64,
}

impl State {
    pub(super) const fn new() -> Self {
        Self {
            enabled: false,
            fill_rate: 0.0,
            capacity: MIN_CAPACITY,
            tokens: 0.0,
            paid: 0.0,
            told_rate: 0.0,
            last_fill: 0.0,
            measured: 0.0,
            bucket: f64::NAN,
            requests_in_bucket: 0,
            last_max_rate: 0.0,
            last_throttle: 0.0,
            start_tat: 0,
            origin: 0,
            window_until: 0,
            window_next: 0,
            window_spacing: 0,
            window_burst: 0,
            mirrored: false,
            overloads: 0,
            rate_lo: 0.0,
            rate_hi: 0.0,
        }
    }

    /// Fills the bucket up to `now`.
    pub(super) fn fill(&mut self, now: f64) {
        if self.last_fill > 0.0 && now > self.last_fill {
            self.credit((now - self.last_fill) * self.fill_rate);
        }
        if now > self.last_fill {
            self.last_fill = now;
        }
    }

    /// Adds `tokens` to the bucket, up to its capacity.
    pub(super) fn credit(&mut self, tokens: f64) {
        let before = self.tokens;
        self.tokens = (self.tokens + tokens).min(self.capacity);
        if self.tokens > before {
            self.paid += self.tokens - before;
        }
    }

    /// Counts a response at `now` in the measured send rate.
    pub(super) fn measure(&mut self, now: f64) {
        let bucket = (now / BUCKET_SECONDS).floor() * BUCKET_SECONDS;
        if self.bucket.is_nan() {
            // The first response: its bucket is the first.
            self.bucket = bucket;
        }
        self.requests_in_bucket = self.requests_in_bucket.saturating_add(1);
        if bucket > self.bucket {
            let rate = self.requests_in_bucket as f64 / (bucket - self.bucket);
            self.measured = rate * SMOOTH + self.measured * (1.0 - SMOOTH);
            self.requests_in_bucket = 0;
            self.bucket = bucket;
        }
    }

    /// `now` (nanoseconds since the guards' epoch) as the adaptive rate's
    /// seconds: from a second before the first time it is asked, so its
    /// half-second buckets fall the same way in every run of the same
    /// calls, whenever the process's epoch was taken (smithy-rs counts
    /// from the process's start; this one throttle's calls are what
    /// matter, and with a shared epoch two fleets simulated on two threads
    /// measured differently).
    pub(super) fn at(&mut self, now: u64) -> f64 {
        if self.origin == 0 {
            self.origin = now.saturating_sub(1_000_000_000).max(1);
        }
        seconds(now.saturating_sub(self.origin))
    }

    /// The adaptive rate's spacing of starts, nanoseconds.
    fn start_spacing(&self) -> u64 {
        nanos_ceil(1.0 / self.fill_rate).max(1)
    }

    /// The earliest start the adaptive rate allows now: a bucket's worth
    /// of starts may go at once.
    pub(super) fn earliest_start(&self) -> u64 {
        let burst = (self.capacity - 1.0).max(0.0);
        self.start_tat
            .saturating_sub(nanos_ceil(burst / self.fill_rate))
    }

    /// An attempt starting at `now`.
    pub(super) fn start(&mut self, now: u64) {
        self.start_tat = self.start_tat.max(now).saturating_add(self.start_spacing());
    }

    /// `K`: the seconds after a throttle at which CUBIC is back at
    /// `last_max_rate`.
    fn time_window(&self) -> f64 {
        (self.last_max_rate * (1.0 - BETA) / SCALE).cbrt()
    }

    /// `W(t)`.
    fn cubic_success(&self, now: f64) -> f64 {
        let dt = now - self.last_throttle - self.time_window();
        SCALE * dt.powi(3) + self.last_max_rate
    }

    /// A response at `now`: a throttle or a success. Returns the new rate.
    /// smithy-rs's `update_rate_limiter`, with the rate held to
    /// `min_rate..=max_rate`.
    pub(super) fn update(
        &mut self,
        now: f64,
        throttled: bool,
        min_rate: f64,
        max_rate: f64,
    ) -> f64 {
        self.measure(now);
        let calculated = if throttled {
            let rate_to_use = if self.enabled {
                self.measured.min(self.fill_rate)
            } else {
                self.measured
            };
            self.last_max_rate = rate_to_use;
            self.last_throttle = now;
            self.enabled = true;
            rate_to_use * BETA
        } else {
            self.cubic_success(now)
        };
        let mut new_rate = calculated.min(2.0 * self.measured).min(max_rate);
        if !throttled && self.mirrored {
            // The provider's headers say what it allows: a success never
            // holds the rate below it (the growth cap of twice the
            // measured rate would, the pacing itself holding that down).
            new_rate = new_rate.max(f64::midpoint(self.rate_lo, self.rate_hi).min(max_rate));
        }
        self.fill(now);
        self.fill_rate = new_rate.max(min_rate);
        self.capacity = new_rate.max(MIN_CAPACITY);
        self.tokens = self.tokens.min(self.capacity);
        self.fill_rate
    }
}
/// Seconds since the guards' epoch, as the adaptive rate keeps them.
pub(super) fn seconds(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

/// Nanoseconds for `seconds`, rounded up (a wait never ends early),
/// saturating; 0 for anything not positive.
pub(super) fn nanos_ceil(seconds: f64) -> u64 {
    // `as` saturates, and takes NaN to 0.
    (seconds * 1e9).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Throttle;

    const UNBOUNDED: f64 = f64::INFINITY;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    /// smithy-rs's `test_calculated_rate_with_successes` (ported from the
    /// Go v2 SDK): `W(t)` after a throttle at 5 s from 10 a second.
    #[test]
    fn cubic_success_follows_the_formula() {
        let mut state = State::new();
        state.last_throttle = 5.0;
        state.last_max_rate = 10.0;
        for (t, expected) in [
            (5.0, 7.0),
            (6.0, 9.64893600966),
            (7.0, 10.000030849917364),
            (8.0, 10.453284520772092),
            (9.0, 13.408697022224185),
            (10.0, 21.26626835427364),
            (11.0, 36.425998516920465),
        ] {
            assert!(close(state.cubic_success(t), expected), "at {t}");
        }
    }

    /// smithy-rs's `test_client_sending_rates`: the measured rate and the
    /// fill rate after responses every 200 ms, two of them throttles — the
    /// measured buckets, the 2× cap and the 0.5 floor together.
    #[test]
    fn the_rates_follow_the_aws_reference_table() {
        let mut state = State::new();
        let table = [
            (false, 0.2, 0.0, 0.5),
            (false, 0.4, 0.0, 0.5),
            (false, 0.6, 4.800000000000001, 0.5),
            (false, 0.8, 4.800000000000001, 0.5),
            (false, 1.0, 4.16, 0.5),
            (false, 1.2, 4.16, 0.6912),
            (false, 1.4, 4.16, 1.0975999999999997),
            (false, 1.6, 5.632000000000001, 1.6384000000000005),
            (false, 1.8, 5.632000000000001, 2.3328),
            (true, 2.0, 4.3264, 3.0284799999999996),
            (false, 2.2, 4.3264, 3.48663917347026),
            (false, 2.4, 4.3264, 3.821874416040255),
            (false, 2.6, 5.66528, 4.053385727709987),
            (false, 2.8, 5.66528, 4.200373108479454),
            (false, 3.0, 4.333056, 4.282036558348658),
            (true, 3.2, 4.333056, 2.99742559084406),
            (false, 3.4, 4.333056, 3.4522263943863463),
        ];
        for (throttled, t, measured, fill) in table {
            state.update(t, throttled, Throttle::MIN_RATE, UNBOUNDED);
            assert!(
                close(state.measured, measured),
                "measured at {t}: {}",
                state.measured
            );
            assert!(close(state.fill_rate, fill), "fill at {t}");
        }
    }
}
