//! [`Target`]: one model, deployment or provider of a route.
use std::time::Duration;

use super::table::{self, Guards, RouteError, Slot};
use crate::stats::CallStats;
use crate::{Breaker, Cooldown, Policy, Throttle};

/// One model, deployment or provider a [`Route`](super::Route) may send a
/// request to: a name, what the call needs to reach it (`data`: a model
/// id, a base URL, a client), its own [`Policy`] for retrying it, its own
/// guards and its context window.
///
/// Defaults: `Policy::new()` (3 attempts, base 200ms, full jitter), no
/// guards, no context window declared, no silence limit but the policy's
/// `timeout`.
///
/// The guards are given by value: no `static` to declare. They belong to
/// the target's *name*, not to one route: every target of one name, in
/// any route of the process, shares them, so a model's breaker sees every
/// call to the model (a route rebuilt from a reloaded config keeps the
/// breaker's state, and a per-request route is not a fresh breaker that
/// never opens). Two targets of one name must give the same guards and
/// settings; [`Route::build`](super::RouteBuilder::build) refuses
/// another. The target's statistics are a record named after it in
/// [`snapshot`](crate::stats::snapshot), and its guards' rows carry its
/// name.
///
/// ```
/// use std::time::Duration;
/// use tenacious::route::Target;
/// use tenacious::{Breaker, Policy};
///
/// let primary = Target::new("gpt-4o", "https://api.openai.com/v1")
///     .policy(Policy::new().max(2))
///     .breaker(Breaker::new().open_for(Duration::from_secs(10)))
///     .context(128_000);
/// assert_eq!(primary.name(), "gpt-4o");
/// assert_eq!(*primary.data(), "https://api.openai.com/v1");
/// assert_eq!(primary.get_context(), Some(128_000));
/// ```
#[derive(Debug)]
pub struct Target<D> {
    name: String,
    data: D,
    policy: Policy,
    context: Option<u64>,
    silence: Option<Duration>,
    /// Whether a stream cut after commit may continue here.
    continues: bool,
    /// The floor of a silence limit learnt from the target's answers.
    learn: Option<Duration>,
    /// Given by value until the route is built, then in the slot.
    guards: Guards,
    slot: Option<&'static Slot>,
}

impl<D> Target<D> {
    /// A target called `name` (a model or deployment: what results,
    /// statistics and observations call it), reached with `data`.
    #[must_use]
    pub fn new(name: impl Into<String>, data: D) -> Self {
        Self {
            name: name.into(),
            data,
            policy: Policy::new(),
            context: None,
            silence: None,
            continues: false,
            learn: None,
            guards: Guards::default(),
            slot: None,
        }
    }

    /// How the route retries this target before it moves on: its
    /// attempts, backoff and classes. Its guards and statistics record
    /// are the target's own (set here they are replaced); its deadline is
    /// cut to what is left of the route's.
    #[must_use]
    pub const fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The target's circuit breaker: while it is open the route skips the
    /// target without an attempt; its half-open probes are the route's
    /// calls, so traffic comes back within its `open_for`.
    #[must_use]
    pub fn breaker(mut self, breaker: Breaker) -> Self {
        self.guards.breaker = Some(breaker);
        self
    }

    /// The target's cooldown: one call's 429 with a server hint holds
    /// every call to the target; a wait longer than the policy's
    /// `max_retry_after` moves the route on.
    #[must_use]
    pub fn cooldown(mut self, cooldown: Cooldown) -> Self {
        self.guards.cooldown = Some(cooldown);
        self
    }

    /// The target's throttle: its calls paced to the provider's rate.
    #[must_use]
    pub fn throttle(mut self, throttle: Throttle) -> Self {
        self.guards.throttle = Some(throttle);
        self
    }

    /// The target's context window, in tokens: after a target answers
    /// that the request is too long for it
    /// ([`Reject::ContextLength`](crate::Reject::ContextLength)), the
    /// route goes to the next target that declares a larger one.
    #[must_use]
    pub const fn context(mut self, tokens: u64) -> Self {
        self.context = Some(tokens);
        self
    }

    /// How long an attempt may go without an answer before the target is
    /// taken for silent: the route leaves it after that one attempt,
    /// rather than retrying a target that does not answer. Default: the
    /// policy's [`timeout`](Policy::timeout), else none. For a
    /// [routed stream](super::Route::stream) the answer is the first
    /// content item (keepalives do not count), and the default is the
    /// policy's [`first_item`](Policy::first_item). Zero leaves the
    /// target at once, before its first answer can come.
    #[must_use]
    pub const fn silence(mut self, limit: Duration) -> Self {
        self.silence = Some(limit);
        self
    }

    /// Whether the target can continue a stream another target cut after
    /// it delivered content: its opener is given the items the consumer
    /// has ([`Resume::items`](super::Resume::items)) and rebuilds the
    /// request from them (an assistant prefill), and what it streams is
    /// delivered after them. Only such targets are tried once a routed
    /// stream has delivered content; see [`Route::stream`](super::Route::stream).
    /// Default: `false`.
    ///
    /// ```
    /// use tenacious::route::Target;
    ///
    /// let claude = Target::new("claude-sonnet", ()).continues(true);
    /// assert!(claude.get_continues());
    /// assert!(!Target::new("gpt-4o", ()).get_continues());
    /// ```
    #[must_use]
    pub const fn continues(mut self, yes: bool) -> Self {
        self.continues = yes;
        self
    }

    /// Whether the target [continues](Target::continues) cut streams.
    #[must_use]
    pub const fn get_continues(&self) -> bool {
        self.continues
    }

    /// Learns the silence limit from the target's answers, as TCP learns
    /// its retransmission timeout (RFC 6298): the smoothed time of its
    /// recent successful attempts plus four times their variation, at
    /// least `floor`, at most the [`silence`](Target::silence) limit
    /// written (or the policy's `timeout`; a floor above it wins). A target that usually answers
    /// in 800 ms is left after a second or two of silence rather than the
    /// 30 s written for its worst case; a slow but steady one is not cut,
    /// as its own answers set the limit. Until it has answered once, it
    /// starts from the estimate of its route's other targets that learn
    /// theirs (the most patient), and from the written limit when none
    /// has one. For a [stream](super::Route::stream) the limit is on the
    /// time to the first content item (written: the policy's
    /// [`first_item`](Policy::first_item)). The estimate belongs to the
    /// target's name, as its guards do.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::route::Target;
    ///
    /// let target = Target::new("gpt-4o-mini", ())
    ///     .silence(Duration::from_secs(30))
    ///     .learn_silence(Duration::from_secs(1));
    /// // Nothing heard yet: the written limit.
    /// assert_eq!(target.get_silence(), Some(Duration::from_secs(30)));
    /// ```
    #[must_use]
    pub const fn learn_silence(mut self, floor: Duration) -> Self {
        self.learn = Some(floor);
        self
    }

    /// The target's smoothed answer time, once its route is built and it
    /// has answered (with [`learn_silence`](Target::learn_silence)).
    #[must_use]
    pub fn smoothed_answer(&self) -> Option<Duration> {
        self.estimate().as_ref().map(super::rto::Rto::smoothed)
    }

    /// The silence limit of a call's attempt now: the learnt one within
    /// its floor and the written limit, else the written one. A target
    /// that learns but has not answered yet starts from its `peers`' (the
    /// route's other targets) estimate, the most patient of them.
    #[inline]
    pub(super) fn silence_now(&self, peers: &[Self]) -> Option<Duration> {
        self.learnt(self.get_silence(), peers)
    }

    /// The silence limit of a stream's attempt: how long it may go
    /// without its first content item. Written: the one set, else the
    /// policy's [`first_item`](Policy::first_item); learnt from the
    /// target's times to first content within it, as for calls.
    pub(super) fn stream_silence_now(&self, peers: &[Self]) -> Option<Duration> {
        let written = match self.silence {
            Some(limit) => Some(limit),
            None => self.policy.get_first_item(),
        };
        self.learnt(written, peers)
    }

    /// The learnt limit within the floor and `written`, else `written`.
    #[inline]
    fn learnt(&self, written: Option<Duration>, peers: &[Self]) -> Option<Duration> {
        let Some(floor) = self.learn else {
            return written;
        };
        self.learnt_from(floor, written, peers)
    }

    /// The learnt limit, out of line: only targets that learn pay it.
    #[inline(never)]
    fn learnt_from(
        &self,
        floor: Duration,
        written: Option<Duration>,
        peers: &[Self],
    ) -> Option<Duration> {
        let estimate = self.estimate().or_else(|| peer_estimate(self, peers));
        match estimate {
            Some(rto) => Some(rto.limit(floor, written)),
            None => written,
        }
    }

    /// The target was silent past its learnt limit: the limit backs off
    /// (doubles), from its own estimate or the one it started from.
    pub(super) fn went_silent(&self, peers: &[Self]) {
        let (Some(floor), Some(slot)) = (self.learn, self.slot) else {
            return;
        };
        let peer = self
            .estimate()
            .is_none()
            .then(|| peer_estimate(self, peers))
            .flatten();
        let mut rto = slot
            .rto
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if rto.is_none() {
            *rto = peer;
        }
        if let Some(rto) = rto.as_mut() {
            rto.back_off();
            slot.stats.set_silence_limit(rto.limit(floor, None));
        }
    }

    /// The target's own estimate, once it has answered.
    fn estimate(&self) -> Option<super::rto::Rto> {
        let slot = self.slot?;
        *slot
            .rto
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the target learns its silence limit (and so its answers
    /// are timed).
    pub(super) const fn learns(&self) -> bool {
        self.learn.is_some()
    }

    /// A successful attempt answered in `took`.
    pub(super) fn answered(&self, took: Duration) {
        if let Some(slot) = self.slot {
            let mut rto = slot
                .rto
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let rto = match rto.as_mut() {
                Some(rto) => {
                    rto.update(took);
                    rto
                }
                None => rto.insert(super::rto::Rto::first(took)),
            };
            let floor = self.learn.unwrap_or_default();
            slot.stats.set_silence_limit(rto.limit(floor, None));
        }
    }

    /// The target's name.
    #[must_use]
    pub fn name(&self) -> &str {
        match self.slot {
            Some(slot) => slot.name,
            None => &self.name,
        }
    }

    /// The name, kept for the life of the process once the route is
    /// built (results carry it without a copy).
    pub(super) fn static_name(&self) -> &'static str {
        self.slot.map_or("", |slot| slot.name)
    }

    /// What the call needs to reach the target.
    #[must_use]
    pub const fn data(&self) -> &D {
        &self.data
    }

    /// The target's policy, with its guards and statistics once its
    /// route is built.
    #[must_use]
    pub const fn get_policy(&self) -> &Policy {
        &self.policy
    }

    /// The context window declared, if any.
    #[must_use]
    pub const fn get_context(&self) -> Option<u64> {
        self.context
    }

    /// The silence limit written for a call: the one set, else the
    /// policy's timeout (a target that [learns](Target::learn_silence) it
    /// may leave sooner; a routed stream's default is the policy's
    /// `first_item`).
    #[must_use]
    pub const fn get_silence(&self) -> Option<Duration> {
        match self.silence {
            Some(limit) => Some(limit),
            None => self.policy.get_timeout(),
        }
    }

    /// The target's statistics record, once its route is built.
    #[must_use]
    pub fn stats(&self) -> Option<&'static CallStats> {
        self.slot.map(|slot| &slot.stats)
    }

    /// The target's breaker, once its route is built, if it has one.
    #[must_use]
    pub fn get_breaker(&self) -> Option<&'static Breaker> {
        self.slot.and_then(|slot| slot.breaker.as_ref())
    }

    /// Puts the target's guards in its name's slot and points its policy
    /// at them, its statistics and the route's `budget`.
    pub(super) fn bind(
        &mut self,
        budget: Option<&'static crate::RetryBudget>,
    ) -> Result<(), RouteError> {
        let slot = table::target(&self.name, std::mem::take(&mut self.guards))?;
        let mut policy = self.policy.stats(&slot.stats);
        if let Some(breaker) = &slot.breaker {
            policy = policy.breaker(breaker);
        }
        if let Some(cooldown) = &slot.cooldown {
            policy = policy.cooldown(cooldown);
        }
        if let Some(throttle) = &slot.throttle {
            policy = policy.throttle(throttle);
        }
        if let Some(budget) = budget {
            policy = policy.budget(budget);
        }
        self.policy = policy;
        self.slot = Some(slot);
        Ok(())
    }
}

/// The most patient estimate of the `peers` of `target` that have one.
fn peer_estimate<D>(target: &Target<D>, peers: &[Target<D>]) -> Option<super::rto::Rto> {
    peers
        .iter()
        .filter(|peer| !std::ptr::eq(*peer, target))
        .filter_map(Target::estimate)
        .max_by(|a, b| {
            a.limit(Duration::ZERO, None)
                .cmp(&b.limit(Duration::ZERO, None))
        })
}
