//! The poll driver's timer: an attempt's limit, or a stream's first item
//! and idle time, armed by the caller and polled with the driver.
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

use super::PollDriver;
use crate::Classify;

impl<'p, E: Classify> PollDriver<'p, E> {
    /// Marks the running attempt as out of its time, before its
    /// [`finish`](PollDriver::finish): its retry costs the
    /// [`RetryBudget`](crate::RetryBudget) what a timed-out attempt's does
    /// (10 tokens rather than 5), as `#[retry]`'s `timeout` does. The
    /// driver does not bound an attempt by itself: the owner arms the
    /// [`attempt_limit`](PollDriver::attempt_limit) with
    /// [`arm`](PollDriver::arm), and calls this when it fires.
    ///
    /// ```
    /// # use std::future::poll_fn;
    /// # use std::pin::pin;
    /// # use std::time::Duration;
    /// # use tenacious::{Elapsed, Policy};
    /// # use tenacious::poll::PollDriver;
    /// # static POLICY: Policy = Policy::new().timeout(Duration::from_secs(1));
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// # let mut driver = pin!(PollDriver::<Elapsed>::new(&POLICY));
    /// # poll_fn(|cx| driver.as_mut().poll_start(cx)).await.unwrap();
    /// // The attempt's time limit fired.
    /// driver.as_mut().note_timeout();
    /// let _ = driver.as_mut().finish(Err::<(), _>(Elapsed::new(Duration::from_secs(1))));
    /// # }
    /// ```
    pub fn note_timeout(self: Pin<&mut Self>) {
        self.project().engine.note_timeout();
    }

    /// Arms the attempt's own timer, on tokio's clock, to fire `after` from
    /// now (re-arming it if it runs; none is armed until this is called,
    /// and [`finish`](PollDriver::finish) disarms it): the attempt's
    /// [`attempt_limit`](PollDriver::attempt_limit), a stream's time to its
    /// first item, or its idle limit, reset on each item. A duration past
    /// what the clock can hold is taken as 30 years.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::pin::pin;
    /// use std::time::Duration;
    /// use tenacious::Policy;
    /// use tenacious::poll::PollDriver;
    ///
    /// static POLICY: Policy = Policy::new().timeout(Duration::from_secs(2));
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let mut driver = pin!(PollDriver::<std::io::Error>::new(&POLICY));
    /// poll_fn(|cx| driver.as_mut().poll_start(cx)).await.unwrap();
    /// let limit = driver.attempt_limit().unwrap();
    /// driver.as_mut().arm(limit);
    /// let start = tokio::time::Instant::now();
    /// poll_fn(|cx| driver.as_mut().poll_timer(cx)).await;
    /// assert_eq!(start.elapsed(), Duration::from_secs(2));
    /// # }
    /// ```
    pub fn arm(self: Pin<&mut Self>, after: Duration) {
        let mut this = self.project();
        // A limit past what the clock can hold: 30 years, tokio's own
        // "far future".
        let now = Instant::now();
        let at = now
            .checked_add(after)
            .unwrap_or_else(|| now + Duration::from_secs(30 * 365 * 86_400));
        match this.timer.as_mut().as_pin_mut() {
            Some(timer) => timer.reset(at),
            None => this.timer.set(Some(tokio::time::sleep_until(at))),
        }
    }

    /// Ready once the timer [`arm`](PollDriver::arm) set has fired (and
    /// again on every poll until it is re-armed or disarmed); pending
    /// forever when none is armed, so it can be polled beside the
    /// attempt's work whether or not the attempt has a limit (see the
    /// example of [`arm`](PollDriver::arm)).
    pub fn poll_timer(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.project().timer.as_pin_mut() {
            Some(timer) => timer.poll(cx),
            None => Poll::Pending,
        }
    }

    /// How long the running attempt may take: the policy's timeout, cut to
    /// what is left of its deadline; `None` without either (the default).
    /// Asked when the attempt starts, it is what to [`arm`](PollDriver::arm).
    /// See the example of [`new`](PollDriver::new).
    #[must_use]
    pub fn attempt_limit(&self) -> Option<Duration> {
        self.engine.attempt_limit()
    }
}
