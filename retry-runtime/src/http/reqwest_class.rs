//! `reqwest::Error` as a classified error (feature `reqwest`).
use std::borrow::Cow;

use crate::{Classify, ErrorClass, HttpError};

/// Classifies a reqwest error by what went wrong, checked in this order:
///
/// | error | class | variant | why |
/// |---|---|---|---|
/// | [`is_timeout`](reqwest::Error::is_timeout) | `Transient` | `"Timeout"` | the next attempt may be faster |
/// | has a [`status`](reqwest::Error::status) (from `error_for_status`) | the [`StatusCode` table](crate::Classify#impl-Classify-for-StatusCode) | `"Status503"`, … | the server's answer decides |
/// | [`is_connect`](reqwest::Error::is_connect) (refused, DNS, TLS handshake) | `Transient` | `"Connect"` | the server may come back |
/// | [`is_request`](reqwest::Error::is_request) (reset, closed while sending) | `Transient` | `"Request"` | a network blip |
/// | [`is_body`](reqwest::Error::is_body) (body failed in transit) | `Transient` | `"Body"` | a network blip |
/// | [`is_builder`](reqwest::Error::is_builder) (bad URL, bad header value) | `Invalid` | `"Builder"` | the request as built can never be sent; in an agent tool the URL usually came from the model, which can fix it |
/// | [`is_redirect`](reqwest::Error::is_redirect) (loop, too many hops) | `Invalid` | `"Redirect"` | the same URL redirects the same way |
/// | [`is_decode`](reqwest::Error::is_decode) with a `serde_json::Error` in its [`source`](std::error::Error::source) chain (`json()`: a complete body that is not the JSON asked for) | `Invalid` | `"Decode"` | the same request gets the same body |
/// | any other [`is_decode`](reqwest::Error::is_decode) (`text`, `bytes`, `json`, `chunk`, `bytes_stream`: the connection was cut while the body was read) | `Transient` | `"Body"` | a network blip; reqwest 0.13 reports a body cut mid-way as a decode error of the `hyper::Error` |
/// | [`is_upgrade`](reqwest::Error::is_upgrade) | `Invalid` | `"Upgrade"` | the server refuses the protocol |
/// | anything else | `Transient` | `"Other"` | a kind reqwest adds later; bounded by `max` |
///
/// A `reqwest::Error` carries no headers and no body, so
/// [`retry_after`](Classify::retry_after) is `None` and a 429 is a rate
/// limit even when its body says the account is spent: to honour
/// `Retry-After`, `x-should-retry` and the provider's error body, turn the
/// response into an [`HttpError`] with [`HttpError::read`] instead of
/// calling `error_for_status`:
///
/// ```no_run
/// use tenacious::HttpError;
///
/// # async fn fetch(client: reqwest::Client) -> Result<String, Box<dyn std::error::Error>> {
/// let response = client.get("https://example.com").send().await?;
/// if !response.status().is_success() {
///     return Err(HttpError::read(response).await.into());
/// }
/// Ok(response.text().await?)
/// # }
/// ```
#[cfg(feature = "reqwest")] // on the item too, for its feature badge where it is re-exported
impl Classify for reqwest::Error {
    fn classify(&self) -> ErrorClass {
        if self.is_timeout() {
            ErrorClass::Transient
        } else if let Some(status) = self.status() {
            status.classify()
        } else if self.is_builder()
            || self.is_redirect()
            || is_bad_format(self)
            || self.is_upgrade()
        {
            ErrorClass::Invalid
        } else {
            // connect, request, body, a body cut mid-way (a decode error
            // without a JSON error), and kinds reqwest may add
            ErrorClass::Transient
        }
    }

    /// A connect error (DNS, TCP, TLS, or a connect timeout): no byte of
    /// the request was sent. Any other error came after it may have been.
    fn not_sent(&self) -> bool {
        self.is_connect()
    }

    fn hint(&self) -> Option<Cow<'static, str>> {
        let hint = if self.is_timeout() {
            "the request timed out; trying again may succeed"
        } else if let Some(status) = self.status() {
            return status.hint();
        } else if self.is_connect() {
            "could not connect to the server; trying again may succeed"
        } else if self.is_builder() {
            "the request could not be built; check the URL and headers"
        } else if self.is_redirect() {
            "the server's redirects could not be followed; check the URL"
        } else if is_bad_format(self) {
            "the response body was not in the expected format"
        } else if is_cut_body(self) {
            "the response body was cut off; trying again may succeed"
        } else {
            return None;
        };
        Some(Cow::Borrowed(hint))
    }

    fn variant(&self) -> &'static str {
        if self.is_timeout() {
            "Timeout"
        } else if let Some(status) = self.status() {
            status.variant()
        } else if self.is_connect() {
            "Connect"
        } else if self.is_request() {
            "Request"
        } else if self.is_body() || is_cut_body(self) {
            "Body"
        } else if self.is_builder() {
            "Builder"
        } else if self.is_redirect() {
            "Redirect"
        } else if is_bad_format(self) {
            "Decode"
        } else if self.is_upgrade() {
            "Upgrade"
        } else {
            "Other"
        }
    }
}

/// A decode error caused by the body's content: `json()` found a complete
/// body that is not the JSON asked for.
fn is_bad_format(error: &reqwest::Error) -> bool {
    error.is_decode() && has_source::<serde_json::Error>(error)
}

/// A decode error that is not about the content: the body stopped
/// arriving (connection reset or closed mid-body).
fn is_cut_body(error: &reqwest::Error) -> bool {
    error.is_decode() && !has_source::<serde_json::Error>(error)
}

/// Whether an `S` is somewhere in `error`'s source chain.
fn has_source<S: std::error::Error + 'static>(error: &reqwest::Error) -> bool {
    std::iter::successors(std::error::Error::source(error), |e| e.source()).any(|e| e.is::<S>())
}

/// Reads a reqwest response's status, `Retry-After`/`retry-after-ms` and
/// `x-should-retry` (see [`HttpError::from_parts`]); the body is left alone
/// ([`HttpError::read`] reads it too).
#[cfg(feature = "reqwest")] // on the item too, for its feature badge where it is re-exported
impl From<&reqwest::Response> for HttpError {
    fn from(response: &reqwest::Response) -> Self {
        Self::from_parts(response.status(), response.headers())
    }
}

#[cfg(feature = "reqwest")] // on the item too, for its feature badge where it is re-exported
impl HttpError {
    /// Reads a failed reqwest response: its status and headers, as
    /// [`From<&reqwest::Response>`](#impl-From%3C%26Response%3E-for-HttpError)
    /// does, and its error body, at most [`MAX_BODY`](Self::MAX_BODY)
    /// bytes (64 KiB), which the presets classify by (see
    /// [`with_body`](Self::with_body)). Feature `reqwest`.
    ///
    /// Reading stops at the bound (the rest is never read, and the
    /// connection is not reused); a body that fails mid-way is kept as far
    /// as it came, marked [truncated](Self::is_body_truncated). It never
    /// fails: the status and headers alone still classify the error. The
    /// read is bounded in time by the client's `timeout` and by the retried
    /// fn's `timeout`, as any read of the body is.
    ///
    /// ```no_run
    /// use tenacious::{Classify, HttpError, retry};
    ///
    /// #[derive(Debug, Classify)]
    /// enum ApiError {
    ///     #[classify(transparent)]
    ///     Status(HttpError), // status, Retry-After, x-should-retry and the error body
    ///     #[classify(transparent)]
    ///     Network(reqwest::Error),
    /// }
    ///
    /// #[retry(max = 4)]
    /// async fn complete(client: &reqwest::Client, prompt: &str) -> Result<String, ApiError> {
    ///     let response = client
    ///         .post("https://api.openai.com/v1/chat/completions")
    ///         .body(prompt.to_owned())
    ///         .send()
    ///         .await
    ///         .map_err(ApiError::Network)?;
    ///     if !response.status().is_success() {
    ///         // a 429 `insufficient_quota` is `Fatal` here: one attempt, not four
    ///         return Err(ApiError::Status(HttpError::read(response).await));
    ///     }
    ///     response.text().await.map_err(ApiError::Network)
    /// }
    /// ```
    pub async fn read(mut response: reqwest::Response) -> Self {
        let error = Self::from(&response);
        let declared = response
            .content_length()
            .and_then(|length| usize::try_from(length).ok())
            .unwrap_or(0);
        let mut body = Vec::with_capacity(declared.min(Self::MAX_BODY));
        let truncated = loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = Self::MAX_BODY - body.len();
                    if chunk.len() > room {
                        body.extend_from_slice(&chunk[..room]);
                        break true;
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break false,
                Err(_) => break true,
            }
        };
        error.with_kept_body(body.into_boxed_slice(), truncated)
    }
}
