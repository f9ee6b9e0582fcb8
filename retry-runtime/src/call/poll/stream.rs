//! What the retried stream uses of the poll driver beyond its public
//! methods: a failure recorded in the stream's provenance, a stop after
//! items were delivered, and the engine itself.
use std::ops::ControlFlow;
use std::pin::Pin;

use super::{Phase, PollDriver};
use crate::classify::failure::Provenance;
use crate::engine::Engine;
use crate::engine::hooks::{always, ignore};
use crate::{Classify, StopReason};

impl<'p, E: Classify> PollDriver<'p, E> {
    /// [`finish`](PollDriver::finish) for a call that gives up with a
    /// [`Failure`](crate::Failure): each failed attempt is recorded in
    /// `provenance`.
    pub(crate) fn finish_recorded<T>(
        self: Pin<&mut Self>,
        provenance: &mut Provenance,
        result: Result<T, E>,
    ) -> ControlFlow<Result<T, E>> {
        let mut this = self.project();
        this.timer.set(None);
        match this
            .engine
            .step_recording(result, always, ignore, |n, error, class, delay| {
                provenance.record(n, error, class, delay);
            }) {
            ControlFlow::Break(result) => {
                *this.phase = Phase::Done;
                ControlFlow::Break(result)
            }
            ControlFlow::Continue((delay, error)) => {
                *this.last = Some(error);
                *this.phase = Phase::Backoff;
                if !delay.is_zero() {
                    this.timer.set(Some(tokio::time::sleep(delay)));
                }
                ControlFlow::Continue(())
            }
        }
    }

    /// The attempt failed with `error` and the call stops for `reason`,
    /// whatever the policy would decide (see `Engine::stop_after`); the
    /// attempt is recorded in `provenance`.
    pub(crate) fn stop_after(
        self: Pin<&mut Self>,
        provenance: &mut Provenance,
        error: &E,
        reason: StopReason,
    ) {
        let mut this = self.project();
        this.timer.set(None);
        *this.phase = Phase::Done;
        this.engine
            .stop_after(error, reason, |n, error, class, delay| {
                provenance.record(n, error, class, delay);
            });
    }

    /// The attempt succeeded (a stream its consumer dropped after content
    /// came); no further attempt is made.
    pub(crate) fn settle_success(self: Pin<&mut Self>) {
        let _ = self.finish(Ok::<(), E>(()));
    }

    /// Disarms the attempt's own timer.
    pub(crate) fn disarm(self: Pin<&mut Self>) {
        self.project().timer.set(None);
    }

    /// The engine of the call, to read its clock.
    pub(crate) fn engine_mut(self: Pin<&mut Self>) -> &mut Engine<'p> {
        self.project().engine
    }

    /// Whether the call is over.
    pub(crate) fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// The engine of the call, for the runtime's own drivers.
    pub(crate) const fn engine(&self) -> &Engine<'p> {
        &self.engine
    }
}
