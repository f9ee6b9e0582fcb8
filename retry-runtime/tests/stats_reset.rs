//! `stats::reset` zeroes every registered record. Alone in its binary: it
//! resets records other tests would be reading.
use std::io;
use std::time::Duration;

use tenacious_runtime::Policy;
use tenacious_runtime::stats::{self, CallStats};

static FIRST: CallStats = CallStats::new("first");
static SECOND: CallStats = CallStats::new("second");

#[test]
fn reset_zeroes_every_record_and_keeps_them_registered() {
    let timed_out = || io::Error::from(io::ErrorKind::TimedOut);
    for record in [&FIRST, &SECOND] {
        let policy = Policy::new().base(Duration::ZERO).stats(record);
        let mut failed = false;
        let result = policy.retry_blocking(|| {
            if std::mem::replace(&mut failed, true) {
                Ok(())
            } else {
                Err(timed_out())
            }
        });
        assert!(result.is_ok());
    }
    let before = stats::snapshot();
    assert_eq!(before.total().calls(), 2);
    assert_eq!(before.total().attempts(), 4);
    assert_eq!(before.total().error_total(), 2);

    stats::reset();

    let after = stats::snapshot();
    let names: Vec<&str> = after.fns().iter().map(|f| f.name()).collect();
    assert_eq!(names, ["first", "second"]);
    let total = after.total();
    assert_eq!(
        (
            total.calls(),
            total.attempts(),
            total.recovered(),
            total.error_total()
        ),
        (0, 0, 0, 0)
    );
    assert!(total.errors().is_empty());
    assert_eq!(total.retry_rate(), None);
}
