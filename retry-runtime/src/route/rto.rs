//! A target's silence limit learnt from its answers, as TCP learns its
//! retransmission timeout (RFC 6298): the smoothed answer time plus four
//! times its variation, over the target's recent successes.
use std::time::Duration;

/// RFC 6298's estimator of one target's answer time, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rto {
    srtt: f64,
    rttvar: f64,
    /// Silences since the last answer: each doubles the limit (RFC 6298,
    /// 5.5, "back off the timer"), so a target slower than the estimate
    /// it started from is waited for long enough to answer once.
    backoff: u8,
}

/// At most 2^6 = 64 times the estimate (and never past the written limit).
const MAX_BACKOFF: u8 = 6;

/// The gains of RFC 6298, section 2: α = 1/8, β = 1/4, K = 4.
const ALPHA: f64 = 0.125;
const BETA: f64 = 0.25;
const K: f64 = 4.0;

impl Rto {
    /// After a first answer in `sample`: SRTT = R, RTTVAR = R/2.
    pub(super) fn first(sample: Duration) -> Self {
        let r = sample.as_secs_f64();
        Self {
            srtt: r,
            rttvar: r / 2.0,
            backoff: 0,
        }
    }

    /// After another answer in `sample`.
    pub(super) fn update(&mut self, sample: Duration) {
        let r = sample.as_secs_f64();
        self.rttvar = (1.0 - BETA) * self.rttvar + BETA * (self.srtt - r).abs();
        self.srtt = (1.0 - ALPHA) * self.srtt + ALPHA * r;
        self.backoff = 0;
    }

    /// After the target was silent past the limit: the limit doubles.
    pub(super) const fn back_off(&mut self) {
        if self.backoff < MAX_BACKOFF {
            self.backoff += 1;
        }
    }

    /// SRTT + 4·RTTVAR, within `floor` and `ceiling`.
    pub(super) fn limit(&self, floor: Duration, ceiling: Option<Duration>) -> Duration {
        let rto = (self.srtt + K * self.rttvar) * f64::from(1_u8 << self.backoff);
        let rto = Duration::try_from_secs_f64(rto).unwrap_or(Duration::MAX);
        let rto = rto.max(floor);
        ceiling.map_or(rto, |ceiling| rto.min(ceiling.max(floor)))
    }

    /// The smoothed answer time.
    pub(super) fn smoothed(&self) -> Duration {
        Duration::try_from_secs_f64(self.srtt).unwrap_or(Duration::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_follows_rfc_6298() {
        let mut rto = Rto::first(Duration::from_secs(1));
        // 1 + 4 × 0.5
        assert_eq!(rto.limit(Duration::ZERO, None), Duration::from_secs(3));
        rto.update(Duration::from_secs(1));
        // RTTVAR 0.375, SRTT 1: 2.5 s
        assert_eq!(rto.limit(Duration::ZERO, None), Duration::from_millis(2500));
        // within the floor and the ceiling
        assert_eq!(
            rto.limit(Duration::from_secs(4), None),
            Duration::from_secs(4)
        );
        assert_eq!(
            rto.limit(Duration::ZERO, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        // a ceiling under the floor: the floor
        assert_eq!(
            rto.limit(Duration::from_secs(3), Some(Duration::from_secs(2))),
            Duration::from_secs(3)
        );
    }

    #[test]
    fn each_silence_doubles_the_limit_until_an_answer() {
        let mut rto = Rto::first(Duration::from_secs(1));
        rto.back_off();
        assert_eq!(rto.limit(Duration::ZERO, None), Duration::from_secs(6));
        for _ in 0..100 {
            rto.back_off();
        }
        assert_eq!(rto.limit(Duration::ZERO, None), Duration::from_secs(3 * 64));
        rto.update(Duration::from_secs(1));
        assert_eq!(rto.limit(Duration::ZERO, None), Duration::from_millis(2500));
    }

    #[test]
    fn hostile_samples_saturate() {
        let mut rto = Rto::first(Duration::MAX);
        rto.update(Duration::ZERO);
        assert_eq!(rto.limit(Duration::ZERO, None), Duration::MAX);
        assert_eq!(
            rto.limit(Duration::ZERO, Some(Duration::from_secs(30))),
            Duration::from_secs(30)
        );
    }
}
