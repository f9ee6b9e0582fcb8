//! What a routed call returns: [`Routed`] when a target served,
//! [`RouteFailure`] when none did, and a [`Tried`] for each target tried.
use std::borrow::Cow;
use std::fmt;

use super::Then;
use crate::{Classify, Elapsed, ErrorClass, Refused, StopReason};

/// The answer of a routed call: the value, which target served it, and
/// the targets tried before it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// use std::io;
/// use tenacious::route::{Route, Target};
///
/// let route = Route::builder("docs-routed")
///     .target(Target::new("docs-routed-a", 1))
///     .build()
///     .unwrap();
/// let answer = route.call(|t| async move { Ok::<_, io::Error>(*t.data() * 10) }).await.unwrap();
/// assert_eq!((answer.value, answer.served_by(), answer.attempts()), (10, "docs-routed-a", 1));
/// assert!(answer.tried().is_empty());
/// # }
/// ```
#[derive(Debug)]
pub struct Routed<T, E = ()> {
    /// What the target answered.
    pub value: T,
    pub(super) served_by: &'static str,
    pub(super) index: usize,
    pub(super) attempts: u32,
    pub(super) tried: Vec<Tried<E>>,
}

impl<T, E> Routed<T, E> {
    /// The name of the target that served.
    #[must_use]
    pub const fn served_by(&self) -> &'static str {
        self.served_by
    }

    /// Its place in the route, 0 for the first target.
    #[must_use]
    pub const fn index(&self) -> usize {
        self.index
    }

    /// The attempts it took at the target that served.
    #[must_use]
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The targets tried before, in order: empty when the first served.
    #[must_use]
    pub fn tried(&self) -> &[Tried<E>] {
        &self.tried
    }

    /// Whether a target other than the first served.
    #[must_use]
    pub const fn fell_back(&self) -> bool {
        self.index > 0
    }
}

/// How a target that did not serve gave up.
#[derive(Debug)]
pub struct Tried<E> {
    pub(super) target: &'static str,
    pub(super) index: usize,
    pub(super) attempts: u32,
    pub(super) stop: StopReason,
    pub(super) then: Then,
    pub(super) error: TargetError<E>,
}

impl<E> Tried<E> {
    /// The target's name.
    #[must_use]
    pub const fn target(&self) -> &'static str {
        self.target
    }

    /// Its place in the route.
    #[must_use]
    pub const fn index(&self) -> usize {
        self.index
    }

    /// The attempts made there: 0 when a guard refused the call (an open
    /// breaker) or the target was skipped.
    #[must_use]
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Why the target's policy gave up.
    #[must_use]
    pub const fn stop_reason(&self) -> StopReason {
        self.stop
    }

    /// What the route did next.
    #[must_use]
    pub const fn then(&self) -> Then {
        self.then
    }

    /// The target's last error.
    #[must_use]
    pub const fn error(&self) -> &TargetError<E> {
        &self.error
    }

    /// The target's last error, owned.
    #[must_use]
    pub fn into_error(self) -> TargetError<E> {
        self.error
    }
}

/// A target's last error: its own, or what the route made of its
/// silence or a guard's refusal.
#[derive(Debug)]
#[non_exhaustive]
pub enum TargetError<E> {
    /// The error the call returned.
    Answer(E),
    /// No answer within the target's silence limit.
    Silent(Elapsed),
    /// A guard of the target refused the call before an attempt (an open
    /// breaker, a cooldown longer than the policy waits).
    GuardRefused(Refused),
    /// The route skipped the target: its context window is not larger
    /// than the one the request was too long for.
    Skipped,
    /// The route skipped the target: a stream was cut after it delivered
    /// content, and the target does not
    /// [continue](super::Target::continues) from delivered items.
    CannotContinue,
}

impl<E> TargetError<E> {
    /// The call's own error, if that is what it is.
    #[must_use]
    pub const fn answer(&self) -> Option<&E> {
        match self {
            Self::Answer(error) => Some(error),
            _ => None,
        }
    }
}

impl<E: fmt::Display> fmt::Display for TargetError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Answer(error) => error.fmt(f),
            Self::Silent(elapsed) => write!(f, "silent: {elapsed}"),
            Self::GuardRefused(refused) => refused.fmt(f),
            Self::Skipped => f.write_str("skipped: its context window is not larger"),
            Self::CannotContinue => f.write_str("skipped: it cannot continue a cut stream"),
        }
    }
}

/// As the error it holds; a skipped target's as `Invalid`.
impl<E: Classify> Classify for TargetError<E> {
    fn classify(&self) -> ErrorClass {
        match self.inner() {
            Some(inner) => inner.classify(),
            None => ErrorClass::Invalid,
        }
    }

    fn variant(&self) -> &'static str {
        match self.inner() {
            Some(inner) => inner.variant(),
            None if matches!(self, Self::CannotContinue) => "CannotContinue",
            None => "Skipped",
        }
    }

    fn inner(&self) -> Option<&dyn Classify> {
        match self {
            Self::Answer(error) => Some(error),
            Self::Silent(elapsed) => Some(elapsed),
            Self::GuardRefused(refused) => Some(refused),
            Self::Skipped | Self::CannotContinue => None,
        }
    }
}

/// Why a routed call failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RouteStop {
    /// Every target was tried (or skipped) and none served.
    NoTargetLeft,
    /// A target's outcome stops the route (see [`Rules`](super::Rules)):
    /// the request must change, or may have been applied.
    Stopped,
    /// The route's deadline is spent.
    Deadline,
    /// A routed stream was cut after it delivered content, and no target
    /// left could continue it: the consumer has part of the answer.
    /// [`RouteFailure::cause`] is the failure that cut it.
    PartialOutput,
}

impl fmt::Display for RouteStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NoTargetLeft => "no target left",
            Self::Stopped => "stopped",
            Self::Deadline => "deadline",
            Self::PartialOutput => "partial output",
        })
    }
}

/// A routed call that no target served: every target tried, in order,
/// and why the route stopped.
///
/// Classifies as the last target's error, so a routed call can be the
/// body of a retried one, and its story is one line:
/// `route gave up (no target left): a: gave up after 3 attempts
/// (exhausted): …; b: …`.
#[derive(Debug)]
pub struct RouteFailure<E> {
    pub(super) tried: Vec<Tried<E>>,
    pub(super) stop: RouteStop,
    /// Items a routed stream delivered before it failed.
    pub(super) delivered: u64,
    /// The index in `tried` of the failure that cut a stream after
    /// commit, when continuations were tried after it.
    pub(super) cause: Option<usize>,
}

impl<E> RouteFailure<E> {
    pub(super) const fn new(tried: Vec<Tried<E>>, stop: RouteStop) -> Self {
        Self {
            tried,
            stop,
            delivered: 0,
            cause: None,
        }
    }

    /// The items a routed stream delivered before it failed: 0 for a
    /// call, and for a stream that failed before its first content item.
    #[must_use]
    pub const fn delivered(&self) -> u64 {
        self.delivered
    }

    /// The outcome the route's error is: the failure that cut a stream
    /// after it delivered content (the targets tried after it to continue
    /// do not mask it), else the last target's.
    #[must_use]
    pub fn cause(&self) -> Option<&Tried<E>> {
        match self.cause {
            Some(index) => self.tried.get(index),
            None => self.tried.last(),
        }
    }

    /// Why the route stopped.
    #[must_use]
    pub const fn reason(&self) -> RouteStop {
        self.stop
    }

    /// Every target tried, in order (the route's deadline may leave some
    /// out).
    #[must_use]
    pub fn tried(&self) -> &[Tried<E>] {
        &self.tried
    }

    /// The last target's outcome, if any was tried.
    #[must_use]
    pub fn last(&self) -> Option<&Tried<E>> {
        self.tried.last()
    }

    /// The targets tried, owned.
    #[must_use]
    pub fn into_tried(self) -> Vec<Tried<E>> {
        self.tried
    }
}

impl<E: fmt::Display> fmt::Display for RouteFailure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "route gave up ({})", self.stop)?;
        for (i, tried) in self.tried.iter().enumerate() {
            let sep = if i == 0 { ": " } else { "; " };
            write!(
                f,
                "{sep}{}: {} attempt{} ({}), {}",
                tried.target,
                tried.attempts,
                if tried.attempts == 1 { "" } else { "s" },
                tried.stop,
                tried.error
            )?;
        }
        Ok(())
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for RouteFailure<E> {}

/// As its [`cause`](RouteFailure::cause): the last target's error, or
/// the failure that cut a stream; a route whose deadline was spent before
/// any target was tried is `Transient`.
impl<E: Classify> Classify for RouteFailure<E> {
    fn classify(&self) -> ErrorClass {
        self.inner()
            .map_or(ErrorClass::Transient, Classify::classify)
    }

    fn hint(&self) -> Option<Cow<'static, str>> {
        match self.inner() {
            Some(inner) => inner.hint(),
            None => Some(Cow::Borrowed(
                "the route's deadline was spent before any target answered",
            )),
        }
    }

    fn inner(&self) -> Option<&dyn Classify> {
        self.cause().map(|tried| &tried.error as &dyn Classify)
    }
}
