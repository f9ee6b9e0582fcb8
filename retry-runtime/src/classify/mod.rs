//! Error classes and the `Classify` trait.
pub(crate) mod derive;
pub(crate) mod elapsed;
pub(crate) mod failure;
mod impls;
pub(crate) mod limits;
pub(crate) mod reject;
pub(crate) mod signals;

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

/// What kind of failure an error is, and so what a retry layer does with it.
///
/// Only `Transient` and `RateLimited` can ever be retried (see
/// [`RetryOn`](crate::RetryOn)); `Invalid` and `Fatal` end a retried call
/// after the attempt that produced them.
///
/// ```
/// use tenacious::ErrorClass;
///
/// assert!(ErrorClass::RateLimited.is_retryable());
/// assert!(!ErrorClass::Invalid.is_retryable());
/// assert_eq!(ErrorClass::RateLimited.to_string(), "rate_limited");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// A passing fault (timeout, reset, 5xx): back off and retry.
    Transient,
    /// The server asked to slow down (429): wait its hint, bounded, then retry.
    RateLimited,
    /// The request itself is wrong (400, 404, 422, invalid model output):
    /// never retried unchanged.
    Invalid,
    /// A fault a human must fix (401, 403, bad config): never retried.
    Fatal,
}

impl ErrorClass {
    /// Every class, in declaration order: handy for per-class counters.
    pub const ALL: [Self; 4] = [
        Self::Transient,
        Self::RateLimited,
        Self::Invalid,
        Self::Fatal,
    ];

    /// The class's name as written in `#[classify(...)]`: `"transient"`,
    /// `"rate_limited"`, `"invalid"` or `"fatal"`. Stable, so it can label
    /// metrics and logs.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Transient => "transient",
            Self::RateLimited => "rate_limited",
            Self::Invalid => "invalid",
            Self::Fatal => "fatal",
        }
    }

    /// Its place in [`ErrorClass::ALL`], for tables indexed by class.
    pub(crate) const fn index(self) -> usize {
        match self {
            Self::Transient => 0,
            Self::RateLimited => 1,
            Self::Invalid => 2,
            Self::Fatal => 3,
        }
    }

    /// Whether a retry layer may retry this class at all (`Transient` or
    /// `RateLimited`). Whether a given policy does is
    /// [`RetryOn::contains`](crate::RetryOn::contains).
    #[must_use]
    pub const fn is_retryable(self) -> bool {
        matches!(self, Self::Transient | Self::RateLimited)
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Classifies an error for the retry layers.
///
/// Usually derived: `#[derive(tenacious::Classify)]` with one
/// `#[classify(...)]` per variant. By hand, only
/// [`classify`](Classify::classify) is required:
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classify, ErrorClass};
///
/// struct Http { status: u16, retry_after: Option<Duration> }
///
/// impl Classify for Http {
///     fn classify(&self) -> ErrorClass {
///         match self.status {
///             429 => ErrorClass::RateLimited,
///             401 | 403 => ErrorClass::Fatal,
///             500.. => ErrorClass::Transient,
///             _ => ErrorClass::Invalid,
///         }
///     }
///     fn retry_after(&self) -> Option<Duration> {
///         self.retry_after
///     }
/// }
///
/// let e = Http { status: 503, retry_after: None };
/// assert_eq!(e.classify(), ErrorClass::Transient);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not implement `Classify`",
    label = "the error type of a retried fn must implement `tenacious::Classify`",
    note = "for an error type of your own, add `#[derive(tenacious::Classify)]` to it and mark each variant with `#[classify(transient)]`, `#[classify(rate_limited)]`, `#[classify(invalid)]`, `#[classify(fatal)]` or `#[classify(transparent)]`",
    note = "an error type of another crate (`anyhow::Error`, `Box<dyn Error>`, `String`, ...) cannot derive it: wrap it in an enum of your own, `#[derive(Debug, tenacious::Classify)] enum MyError {{ #[classify(transient)] Other(anyhow::Error) }}`, and return `.map_err(MyError::Other)`; see \"Errors from other crates\" in the documentation of `derive(Classify)`"
)]
pub trait Classify {
    /// The class of this error.
    fn classify(&self) -> ErrorClass;

    /// The server's hint of how long to wait before the next attempt
    /// (`Retry-After`). Honoured for any retried class, bounded by the
    /// policy's `max_retry_after`. Default: the [`inner`](Classify::inner)
    /// error's, else `None`.
    fn retry_after(&self) -> Option<Duration> {
        self.inner().and_then(Classify::retry_after)
    }

    /// Advice for the model or the operator. Default: the
    /// [`inner`](Classify::inner) error's, else `None`.
    fn hint(&self) -> Option<Cow<'static, str>> {
        self.inner().and_then(Classify::hint)
    }

    /// The variant's name, for the error distribution. Default: the
    /// [`inner`](Classify::inner) error's, else the type's name.
    fn variant(&self) -> &'static str {
        match self.inner() {
            Some(inner) => inner.variant(),
            None => std::any::type_name::<Self>(),
        }
    }

    /// What the error says about the provider beyond its class: that it
    /// is overloaded, and what is left of the caller's rate-limit window
    /// (see [`Signals`](crate::Signals)). Read only by a call with guards.
    /// Default: the [`inner`](Classify::inner) error's, else
    /// [`Signals::NONE`](crate::Signals::NONE).
    fn signals(&self) -> crate::Signals {
        self.inner().map_or(crate::Signals::NONE, Classify::signals)
    }

    /// Whether the error proves the request never reached the server: the
    /// connection was refused, the name did not resolve, the TLS handshake
    /// failed, a guard refused the call — nothing was sent, so even a call
    /// that is not idempotent may be made again. Read only by a policy with
    /// [`idempotent(false)`](crate::Policy::idempotent), which retries no
    /// other error. Default: the [`inner`](Classify::inner) error's, else
    /// `false` (the request may have been applied). `#[derive(Classify)]`
    /// writes `true` for a variant marked `#[classify(transient, not_sent)]`.
    ///
    /// ```
    /// use std::io;
    /// use tenacious::Classify;
    ///
    /// assert!(io::Error::from(io::ErrorKind::ConnectionRefused).not_sent());
    /// assert!(!io::Error::from(io::ErrorKind::ConnectionReset).not_sent());
    /// ```
    fn not_sent(&self) -> bool {
        self.inner().is_some_and(Classify::not_sent)
    }

    /// The limits this error sets for the call beyond the policy's: its
    /// own `max` attempts and backoff `base` (see [`Limits`](crate::Limits)).
    /// Default: the [`inner`](Classify::inner) error's, else
    /// [`Limits::NONE`](crate::Limits::NONE).
    ///
    /// ```
    /// use tenacious::{Classify, ErrorClass, Limits};
    ///
    /// #[derive(Debug)]
    /// struct Busy;
    /// impl Classify for Busy {
    ///     fn classify(&self) -> ErrorClass { ErrorClass::RateLimited }
    ///     fn limits(&self) -> Limits { Limits::NONE.max(6) }
    /// }
    /// assert_eq!(Busy.limits().get_max(), Some(6));
    /// ```
    fn limits(&self) -> crate::Limits {
        self.inner().map_or(crate::Limits::NONE, Classify::limits)
    }

    /// Why the target rejected the request, when the error says so: a
    /// request too long for its context window, or refused by its
    /// content policy (see [`Reject`](crate::Reject)). What a route reads
    /// to tell an `Invalid` error another target may serve from one no
    /// target will. Default: the [`inner`](Classify::inner) error's, else
    /// `None`.
    fn rejected(&self) -> Option<crate::Reject> {
        self.inner().and_then(Classify::rejected)
    }

    /// The error this one wraps, whose answers the other methods give
    /// when not written: a wrapper writes `classify` and `inner`, and
    /// every method it leaves out is the inner error's rather than a
    /// default — as [`Error::source`](std::error::Error::source) chains
    /// errors. `None` when there is none (the default) or this value
    /// holds none (a variant of its own). Methods written by hand win:
    /// a wrapper that adds a hint of its own writes `hint`.
    ///
    /// ```
    /// use std::io;
    /// use tenacious::{Classify, ErrorClass};
    ///
    /// /// An I/O error with the tool call it came from.
    /// #[derive(Debug)]
    /// struct ToolCallError {
    ///     tool: &'static str,
    ///     error: io::Error,
    /// }
    ///
    /// impl Classify for ToolCallError {
    ///     fn classify(&self) -> ErrorClass {
    ///         self.error.classify()
    ///     }
    ///     fn inner(&self) -> Option<&dyn Classify> {
    ///         Some(&self.error)
    ///     }
    /// }
    ///
    /// let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
    /// let e = ToolCallError { tool: "search", error: refused };
    /// assert_eq!(e.classify(), ErrorClass::Transient);
    /// assert_eq!(e.variant(), "ConnectionRefused"); // not "ToolCallError"
    /// assert!(e.not_sent()); // not the default `false`
    /// # let _ = e.tool;
    /// ```
    fn inner(&self) -> Option<&dyn Classify> {
        None
    }

    /// Not a stable API: `self` as a `dyn Classify`, for the `inner` that
    /// `#[derive(Classify)]` writes. A path through the trait, so a field
    /// that is not `Classify` gets the one error every forwarded method
    /// gets, not a second one for a cast.
    #[doc(hidden)]
    fn __as_dyn_classify(&self) -> &dyn Classify
    where
        Self: Sized,
    {
        self
    }

    /// How to make this error from a guard's refusal of a call's first
    /// attempt, when there is no attempt's error to return (see
    /// [`Refused`](crate::Refused)): `Some(make)` and the call returns
    /// `Err(make(refused))` without an attempt. `None` (the default): the
    /// call makes its first attempt anyway, and its guards refuse only its
    /// retries. `#[derive(Classify)]` writes it for the variant marked
    /// `#[classify(refused)]`, which holds the `Refused`; by hand:
    ///
    /// ```
    /// use tenacious::{Classify, ErrorClass, Refused};
    ///
    /// #[derive(Debug)]
    /// enum ToolError {
    ///     Timeout,
    ///     Refused(Refused),
    /// }
    ///
    /// impl Classify for ToolError {
    ///     fn classify(&self) -> ErrorClass {
    ///         match self {
    ///             ToolError::Timeout => ErrorClass::Transient,
    ///             ToolError::Refused(refused) => refused.classify(),
    ///         }
    ///     }
    ///     fn refused() -> Option<fn(Refused) -> Self> {
    ///         Some(ToolError::Refused)
    ///     }
    /// }
    /// ```
    #[must_use]
    fn refused() -> Option<fn(crate::Refused) -> Self>
    where
        Self: Sized,
    {
        None
    }
}

/// What a classifying fn says of an error: its [`ErrorClass`] and,
/// optionally, a hint, the server's wait and [`Signals`](crate::Signals).
/// The fn named by `#[classify(with = path)]` returns one (or a bare
/// `ErrorClass`, which converts into one with nothing else said).
///
/// Defaults: no hint, no retry-after, [`Signals::NONE`](crate::Signals::NONE).
/// The constructors are `const`; the builders take `self` and are not, as
/// a hint may own its text.
///
/// ```
/// use std::time::Duration;
/// use tenacious::{Classified, ErrorClass, Signals};
///
/// let spent = Classified::fatal().with_hint("the account's quota is spent; a human must add credit");
/// assert_eq!(spent.class(), ErrorClass::Fatal);
/// assert_eq!(spent.hint(), Some("the account's quota is spent; a human must add credit"));
///
/// let busy = Classified::rate_limited()
///     .with_retry_after(Some(Duration::from_secs(2)))
///     .with_signals(Signals::NONE.remaining(0));
/// assert_eq!(busy.retry_after(), Some(Duration::from_secs(2)));
/// assert_eq!(busy.signals().get_remaining(), Some(0));
///
/// let plain = Classified::from(ErrorClass::Transient);
/// assert_eq!(plain, Classified::transient());
/// assert_eq!(plain.hint(), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Classified {
    class: ErrorClass,
    hint: Option<Cow<'static, str>>,
    retry_after: Option<Duration>,
    signals: crate::Signals,
}

impl Classified {
    /// `class`, with nothing else said; `const`, so a fixed answer can be
    /// a `const`.
    ///
    /// ```
    /// use tenacious::{Classified, ErrorClass};
    ///
    /// const SPENT: Classified = Classified::new(ErrorClass::Fatal);
    /// assert_eq!(SPENT.class(), ErrorClass::Fatal);
    /// assert_eq!(SPENT.retry_after(), None);
    /// assert_eq!(Classified::invalid().class(), ErrorClass::Invalid);
    /// ```
    #[must_use]
    pub const fn new(class: ErrorClass) -> Self {
        Self {
            class,
            hint: None,
            retry_after: None,
            signals: crate::Signals::NONE,
        }
    }

    /// [`ErrorClass::Transient`], with nothing else said.
    #[must_use]
    pub const fn transient() -> Self {
        Self::new(ErrorClass::Transient)
    }

    /// [`ErrorClass::RateLimited`], with nothing else said.
    #[must_use]
    pub const fn rate_limited() -> Self {
        Self::new(ErrorClass::RateLimited)
    }

    /// [`ErrorClass::Invalid`], with nothing else said.
    #[must_use]
    pub const fn invalid() -> Self {
        Self::new(ErrorClass::Invalid)
    }

    /// [`ErrorClass::Fatal`], with nothing else said.
    #[must_use]
    pub const fn fatal() -> Self {
        Self::new(ErrorClass::Fatal)
    }

    /// Sets the advice for the model or the operator
    /// ([`Classify::hint`]), a `&'static str` or a `String`.
    #[must_use]
    pub fn with_hint(self, hint: impl Into<Cow<'static, str>>) -> Self {
        Self {
            hint: Some(hint.into()),
            ..self
        }
    }

    /// Sets the server's wait ([`Classify::retry_after`]); the retry loop
    /// reads it on a `RateLimited` error only.
    #[must_use]
    pub fn with_retry_after(self, retry_after: Option<Duration>) -> Self {
        Self {
            retry_after,
            ..self
        }
    }

    /// Sets what the error says about the provider ([`Classify::signals`]).
    #[must_use]
    pub fn with_signals(self, signals: crate::Signals) -> Self {
        Self { signals, ..self }
    }

    /// The class.
    #[must_use]
    pub const fn class(&self) -> ErrorClass {
        self.class
    }

    /// The hint, if one was set.
    #[must_use]
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// The hint, if one was set, as [`Classify::hint`] gives it.
    ///
    /// ```
    /// use tenacious::Classified;
    ///
    /// let org = "org-7";
    /// let spent = Classified::fatal().with_hint(format!("{org} is out of credit"));
    /// assert_eq!(spent.into_hint().as_deref(), Some("org-7 is out of credit"));
    /// ```
    #[must_use]
    pub fn into_hint(self) -> Option<Cow<'static, str>> {
        self.hint
    }

    /// The server's wait, if one was set.
    #[must_use]
    pub const fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// What the error says about the provider; `Signals::NONE` unless set.
    #[must_use]
    pub const fn signals(&self) -> crate::Signals {
        self.signals
    }
}

/// The class alone: no hint, no retry-after, no signals.
impl From<ErrorClass> for Classified {
    fn from(class: ErrorClass) -> Self {
        Self::new(class)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// An error that says everything: each of `Classify`'s methods but
    /// `refused` answers something other than its default.
    #[derive(Debug)]
    struct Loud;

    impl Classify for Loud {
        fn classify(&self) -> ErrorClass {
            ErrorClass::RateLimited
        }
        fn retry_after(&self) -> Option<Duration> {
            Some(Duration::from_secs(7))
        }
        fn hint(&self) -> Option<Cow<'static, str>> {
            Some(Cow::Borrowed("slow down"))
        }
        fn variant(&self) -> &'static str {
            "Loud"
        }
        fn signals(&self) -> crate::Signals {
            crate::Signals::NONE.overloaded(true)
        }
        fn not_sent(&self) -> bool {
            true
        }
        fn limits(&self) -> crate::Limits {
            crate::Limits::NONE.max(9)
        }
        fn rejected(&self) -> Option<crate::Reject> {
            Some(crate::Reject::ContextLength)
        }
    }

    /// Every method's answer.
    type Answers = (
        ErrorClass,
        Option<Duration>,
        Option<String>,
        &'static str,
        crate::Signals,
        bool,
        crate::Limits,
        Option<crate::Reject>,
    );

    /// What `e` answers, method by method.
    fn answers<E: Classify + ?Sized>(e: &E) -> Answers {
        (
            e.classify(),
            e.retry_after(),
            e.hint().map(Cow::into_owned),
            e.variant(),
            e.signals(),
            e.not_sent(),
            e.limits(),
            e.rejected(),
        )
    }

    #[test]
    fn pointers_forward_every_method() {
        let expected = answers(&Loud);
        assert_eq!(answers(&&Loud), expected);
        assert_eq!(answers(&Box::new(Loud)), expected);
        assert_eq!(answers(&Arc::new(Loud)), expected);
        let boxed: Box<dyn Classify> = Box::new(Loud);
        assert_eq!(answers(&boxed), expected);
        let shared: Arc<dyn Classify + Send + Sync> = Arc::new(Loud);
        assert_eq!(answers(&shared), expected);
    }

    #[test]
    fn a_wrapper_that_names_its_inner_error_answers_every_method_as_it() {
        #[derive(Debug)]
        struct Wrapper(Loud);
        impl Classify for Wrapper {
            fn classify(&self) -> ErrorClass {
                self.0.classify()
            }
            fn inner(&self) -> Option<&dyn Classify> {
                Some(&self.0)
            }
        }
        assert_eq!(answers(&Wrapper(Loud)), answers(&Loud));
    }

    #[test]
    fn every_wrapper_of_this_crate_answers_as_its_inner_error() {
        let failure = crate::classify::failure::Provenance::new()
            .into_failure(crate::StopReason::Exhausted, Loud);
        assert_eq!(answers(&failure), answers(&Loud));
        #[cfg(feature = "sse")]
        {
            // `limits` was not forwarded by hand: the body's own `max` was lost.
            let sse = crate::sse::SseError::Body(Loud);
            assert_eq!(answers(&sse), answers(&Loud));
        }
    }

    #[test]
    fn without_an_inner_error_the_defaults_hold() {
        #[derive(Debug)]
        struct Plain;
        impl Classify for Plain {
            fn classify(&self) -> ErrorClass {
                ErrorClass::Transient
            }
        }
        assert!(Plain.inner().is_none());
        assert_eq!(Plain.retry_after(), None);
        assert_eq!(Plain.hint(), None);
        assert!(Plain.variant().ends_with("Plain"));
        assert_eq!(Plain.signals(), crate::Signals::NONE);
        assert!(!Plain.not_sent());
        assert_eq!(Plain.limits(), crate::Limits::NONE);
        assert_eq!(Plain.rejected(), None);
    }

    #[test]
    fn class_names() {
        let names: Vec<_> = ErrorClass::ALL.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["transient", "rate_limited", "invalid", "fatal"]);
        let retryable: Vec<_> = ErrorClass::ALL
            .into_iter()
            .filter(|c| c.is_retryable())
            .collect();
        assert_eq!(retryable, [ErrorClass::Transient, ErrorClass::RateLimited]);
    }
}
