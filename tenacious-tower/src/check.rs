//! Which responses are failures: [`CheckResponse`], its HTTP default
//! [`HttpCheck`] (the [`HttpError`] table), [`NoCheck`], and the
//! [`GaveUp`] a bad last response carries.
use std::convert::Infallible;

use tenacious_runtime::{Classify, ErrorClass, HttpError, Signals, StopReason, rate_limits};

/// Says which responses of the inner service are failures, and which
/// [`Classify`] error each one is: the `check` of `#[retry(check = ...)]`
/// for a service, so a `503` is retried like a reset connection.
///
/// [`HttpCheck`], the default, reads an `http::Response`'s status and
/// headers. A fn or closure `Fn(&R) -> Result<(), X>` with `X: Classify`
/// is one too, and [`NoCheck`] takes every response as good.
///
/// ```
/// use tenacious::tower::CheckResponse;
/// use tenacious::{Classify, ErrorClass};
///
/// #[derive(Debug)]
/// struct Busy;
/// impl Classify for Busy {
///     fn classify(&self) -> ErrorClass { ErrorClass::Transient }
/// }
///
/// // A service answering `String`s, one of which means "try again".
/// let check = |answer: &String| if answer == "busy" { Err(Busy) } else { Ok(()) };
/// assert!(check.check(&"busy".to_owned()).is_err());
/// assert!(check.check(&"done".to_owned()).is_ok());
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot check a `{R}`",
    label = "the responses of the retried service are `{R}`",
    note = "the default check, `HttpCheck`, reads an `http::Response`: for a response of another type, give `RetryLayer::check` a `Fn(&{R}) -> Result<(), E>` with `E: Classify` (`Err` for a response to retry), or `NoCheck` to take every response as good"
)]
pub trait CheckResponse<R> {
    /// The error a bad response is, to the policy.
    type Error: Classify;

    /// `Err` when `response` is a failure, classified; `Ok(())` to hand
    /// it to the caller.
    ///
    /// # Errors
    ///
    /// The bad response's classified error.
    fn check(&self, response: &R) -> Result<(), Self::Error>;

    /// What a good response says of the caller's rate-limit window, for
    /// the policy's [`Throttle`](tenacious_runtime::Throttle), which paces the calls
    /// ahead of a 429 by it (a bad response says it through its error's
    /// [`signals`](Classify::signals)). Asked only when the policy names a
    /// throttle. Default: [`Signals::NONE`]; [`HttpCheck`] reads the
    /// rate-limit headers ([`rate_limits::from_headers`]).
    fn signals(&self, response: &R) -> Signals {
        let _ = response;
        Signals::NONE
    }

    /// The call gave up with `response`, which this check called bad: it
    /// is about to go to the caller as the call's answer. Default:
    /// nothing; [`HttpCheck`] puts `gave_up` in the response's extensions.
    fn gave_up(&self, response: &mut R, gave_up: GaveUp) {
        let _ = (response, gave_up);
    }
}

impl<R, X, F> CheckResponse<R> for F
where
    F: Fn(&R) -> Result<(), X>,
    X: Classify,
{
    type Error = X;

    fn check(&self, response: &R) -> Result<(), X> {
        self(response)
    }
}

/// The default check: an `http::Response` is a failure when its status is
/// 4xx or 5xx, classified by [`HttpError::from_response`] — the status
/// table, `Retry-After` (a hint the retry waits at least), `x-should-retry`
/// (which overrules the status) and the rate-limit headers (signals for the
/// guards). 1xx, 2xx and 3xx responses are good; their rate-limit headers
/// go to the policy's [`Throttle`](tenacious_runtime::Throttle), if it names one.
///
/// The body is not read: it stays in the response, which is handed back
/// as the call's answer when the call gives up on it (with a [`GaveUp`] in
/// its extensions), so the provider's own words reach the caller.
///
/// ```
/// use http::{Response, StatusCode};
/// use tenacious::tower::{CheckResponse, HttpCheck};
/// use tenacious::{Classify, ErrorClass};
///
/// let ok = Response::new("fine");
/// assert!(HttpCheck.check(&ok).is_ok());
///
/// let busy = Response::builder()
///     .status(StatusCode::SERVICE_UNAVAILABLE)
///     .header("retry-after", "2")
///     .body("come back later")
///     .unwrap();
/// let error = HttpCheck.check(&busy).unwrap_err();
/// assert_eq!(error.classify(), ErrorClass::RateLimited);
/// assert_eq!(error.retry_after(), Some(std::time::Duration::from_secs(2)));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HttpCheck;

impl<B> CheckResponse<http::Response<B>> for HttpCheck {
    type Error = HttpError;

    fn check(&self, response: &http::Response<B>) -> Result<(), HttpError> {
        let status = response.status();
        if status.is_client_error() || status.is_server_error() {
            Err(HttpError::from_response(response))
        } else {
            Ok(())
        }
    }

    fn signals(&self, response: &http::Response<B>) -> Signals {
        rate_limits::from_headers(response.headers())
    }

    fn gave_up(&self, response: &mut http::Response<B>, gave_up: GaveUp) {
        response.extensions_mut().insert(gave_up);
    }
}

/// Takes every response as good: only the inner service's errors (and
/// the policy's timeouts) are retried. For a service whose responses say
/// nothing of failure, or are no `http::Response`.
///
/// ```
/// use tenacious::tower::{CheckResponse, NoCheck};
///
/// assert!(NoCheck.check(&"anything").is_ok());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NoCheck;

impl<R> CheckResponse<R> for NoCheck {
    type Error = Infallible;

    fn check(&self, _: &R) -> Result<(), Infallible> {
        Ok(())
    }
}

/// What a call that gave up on a bad response says of it: the number of
/// attempts made, why the policy stopped, and the last response's class.
/// [`HttpCheck`] puts it in the extensions of the `http::Response` it
/// hands back, so a caller can tell a `503` the policy gave up on from one
/// it never retried:
///
/// ```
/// use tenacious::tower::GaveUp;
///
/// fn gave_up<B>(response: &http::Response<B>) -> Option<GaveUp> {
///     response.extensions().get::<GaveUp>().copied()
/// }
/// assert_eq!(gave_up(&http::Response::new(())), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GaveUp {
    attempts: u32,
    stop_reason: StopReason,
    class: ErrorClass,
}

impl GaveUp {
    pub(crate) const fn new(attempts: u32, stop_reason: StopReason, class: ErrorClass) -> Self {
        Self {
            attempts,
            stop_reason,
            class,
        }
    }

    /// The attempts the call made, the last one included.
    #[must_use]
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Why the policy stopped: [`StopReason::Exhausted`] after its last
    /// attempt, [`StopReason::NotRetryable`] for a `400`, ….
    #[must_use]
    pub const fn stop_reason(&self) -> StopReason {
        self.stop_reason
    }

    /// The class of the last response.
    #[must_use]
    pub const fn class(&self) -> ErrorClass {
        self.class
    }
}
