//! A status code on its own as a classified error: its class, hint and
//! variant name, and the `x-should-retry` header that overrules it.
use std::borrow::Cow;

use ::http::{HeaderMap, StatusCode};

use super::body::RATE_LIMITED;
use crate::{Classify, ErrorClass};

/// The header some APIs (OpenAI, Anthropic) send to overrule the status code's
/// usual retry advice.
const SHOULD_RETRY: &str = "x-should-retry";

/// Classifies a status code on its own; see [`HttpError`](crate::HttpError) to take the
/// response's headers into account as well.
///
/// | status | class | why |
/// |---|---|---|
/// | 408 Request Timeout | `Transient` | the server gave up waiting for the request |
/// | 421 Misdirected Request | `Transient` | RFC 9110: retry, possibly over another connection |
/// | 423 Locked | `Transient` | another client holds the lock; it may be released |
/// | 425 Too Early | `Transient` | RFC 8470: retry once the handshake is complete |
/// | 429 Too Many Requests | `RateLimited` | wait as long as the server asks |
/// | 401 Unauthorized, 403 Forbidden | `Fatal` | the credentials are wrong or lack rights |
/// | 402 Payment Required, 407 Proxy Authentication Required | `Fatal` | an account or proxy a human must fix |
/// | 400, 404, 409, 422 and every other 4xx | `Invalid` | the same request gets the same answer |
/// | 501 Not Implemented, 505 HTTP Version Not Supported | `Invalid` | the server never supports this request as sent |
/// | 511 Network Authentication Required | `Fatal` | a captive portal: a human must sign in |
/// | 500, 502, 503, 504 and every other 5xx (e.g. 529 Overloaded) | `Transient` | the server failed; it may recover |
/// | 1xx, 2xx, 3xx, 600–999 | `Invalid` | not an error HTTP defines: treating it as one is the caller's choice, and asking again unchanged gets the same answer |
///
/// A 503 with `Retry-After` is `RateLimited`, but a bare status has no
/// headers: [`HttpError`](crate::HttpError) makes that distinction.
///
/// [`variant`](Classify::variant) is `"Status"` followed by the three digits
/// (`"Status429"`): a stable, bounded label for the error distribution.
/// [`hint`](Classify::hint) gives advice for the common codes and `None` for
/// the rest. [`retry_after`](Classify::retry_after) is `None`.
///
/// ```
/// use http::StatusCode;
/// use tenacious::{Classify, ErrorClass};
///
/// assert_eq!(StatusCode::TOO_MANY_REQUESTS.classify(), ErrorClass::RateLimited);
/// assert_eq!(StatusCode::BAD_GATEWAY.classify(), ErrorClass::Transient);
/// assert_eq!(StatusCode::NOT_FOUND.classify(), ErrorClass::Invalid);
/// assert_eq!(StatusCode::UNAUTHORIZED.classify(), ErrorClass::Fatal);
/// assert_eq!(StatusCode::TOO_MANY_REQUESTS.variant(), "Status429");
/// ```
#[cfg(feature = "http")] // on the item too, for its feature badge where it is re-exported
impl Classify for StatusCode {
    fn classify(&self) -> ErrorClass {
        match self.as_u16() {
            408 | 421 | 423 | 425 => ErrorClass::Transient,
            429 => ErrorClass::RateLimited,
            401 | 402 | 403 | 407 | 511 => ErrorClass::Fatal,
            501 | 505 => ErrorClass::Invalid,
            500..=599 => ErrorClass::Transient,
            _ => ErrorClass::Invalid,
        }
    }

    fn hint(&self) -> Option<Cow<'static, str>> {
        let hint = match self.as_u16() {
            400 => "the request was malformed; fix the arguments before trying again",
            401 => "the credentials were rejected; a human must fix them",
            402 => "payment is required; a human must fix the account",
            403 => "these credentials may not do this; a human must grant access",
            404 => "the resource does not exist; check the identifier or path",
            407 => "the proxy rejected the credentials; a human must fix them",
            408 => "the server timed out waiting for the request; trying again may succeed",
            409 => {
                "the request conflicts with the resource's current state; read it again before changing it"
            }
            413 => "the request is too large; send less",
            422 => "the request was understood but its content was rejected; fix the arguments",
            429 => RATE_LIMITED,
            501 => "the server does not support this request",
            503 => "the service is unavailable; trying again later may succeed",
            511 => "the network requires sign-in; a human must authenticate",
            500..=599 => "the server failed; trying again later may succeed",
            _ => return None,
        };
        Some(Cow::Borrowed(hint))
    }

    fn variant(&self) -> &'static str {
        // `StatusCode` only holds 100..=999, so the lookup cannot miss; the
        // fallback keeps this total without a panic path.
        usize::from(self.as_u16())
            .checked_sub(100)
            .and_then(|i| VARIANT_NAMES.get(i))
            .and_then(|name| std::str::from_utf8(name).ok())
            .unwrap_or("Status")
    }
}

/// `"Status100"` to `"Status999"`, built at compile time so `variant` can hand
/// out a `&'static str` for every code without allocating.
static VARIANT_NAMES: [[u8; 9]; 900] = variant_names();

const fn variant_names() -> [[u8; 9]; 900] {
    let mut names = [*b"Status000"; 900];
    let mut i = 0;
    while i < names.len() {
        let code = i + 100;
        names[i][6] = b'0' + (code / 100) as u8;
        names[i][7] = b'0' + (code / 10 % 10) as u8;
        names[i][8] = b'0' + (code % 10) as u8;
        i += 1;
    }
    names
}

pub(super) const fn is_retryable(class: ErrorClass) -> bool {
    matches!(class, ErrorClass::Transient | ErrorClass::RateLimited)
}

pub(super) fn should_retry(headers: &HeaderMap) -> Option<bool> {
    let value = headers
        .get(SHOULD_RETRY)?
        .to_str()
        .ok()?
        .trim_matches([' ', '\t']);
    if value.eq_ignore_ascii_case("true") {
        Some(true)
    } else if value.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}
