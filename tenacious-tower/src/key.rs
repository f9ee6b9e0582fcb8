//! Where the call's idempotency key goes in each attempt's request:
//! [`StampKey`], its HTTP default [`IdempotencyHeader`], and [`NoKey`].
use http::{HeaderName, HeaderValue};

use tenacious_runtime::IdempotencyKey;

/// Puts the call's [`IdempotencyKey`] into an attempt's request: the same
/// key on every attempt of one call, so a server can tell a retry from a
/// new request and answer it with what it stored.
///
/// [`IdempotencyHeader`], the default, writes it as a header of an
/// `http::Request`; a fn or closure `Fn(&mut R, IdempotencyKey)` puts it
/// where a request of another type carries it, and [`NoKey`] sends none.
///
/// ```
/// use tenacious::IdempotencyKey;
/// use tenacious::tower::StampKey;
///
/// struct Job { id: Option<String> }
///
/// let stamp = |job: &mut Job, key: IdempotencyKey| job.id = Some(key.to_string());
/// let mut job = Job { id: None };
/// let key = IdempotencyKey::derive("task-1", "call-1");
/// stamp.stamp(&mut job, || key);
/// assert_eq!(job.id, Some(key.to_string()));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot put the idempotency key into a `{R}`",
    label = "the requests of the retried service are `{R}`",
    note = "the default, `IdempotencyHeader`, writes it as a header of an `http::Request`: for a request of another type, give `RetryLayer::key_with` a `Fn(&mut {R}, IdempotencyKey)`, or call `RetryLayer::without_key`"
)]
pub trait StampKey<R> {
    /// Puts the key into `request`, the copy an attempt sends; `key` gives
    /// the call's key (drawn the first time it is asked for).
    fn stamp(&self, request: &mut R, key: impl FnOnce() -> IdempotencyKey);
}

impl<R, F> StampKey<R> for F
where
    F: Fn(&mut R, IdempotencyKey),
{
    fn stamp(&self, request: &mut R, key: impl FnOnce() -> IdempotencyKey) {
        self(request, key());
    }
}

/// The default: each attempt's `http::Request` carries the call's key in
/// a header, `Idempotency-Key` unless named otherwise, in the UUID form
/// (`8-4-4-4-12` lowercase hex digits, as [`IdempotencyKey`] displays
/// it). A request that carries the header already keeps its own value:
/// the caller's key wins.
///
/// ```
/// use http::HeaderName;
/// use tenacious::IdempotencyKey;
/// use tenacious::tower::{IdempotencyHeader, StampKey};
///
/// let key = IdempotencyKey::derive("task-1", "call-1");
/// let mut request = http::Request::new(());
/// IdempotencyHeader::DEFAULT.stamp(&mut request, || key);
/// assert_eq!(request.headers()["idempotency-key"], key.to_string());
///
/// // A key the caller set is left alone.
/// let mut request = http::Request::builder().header("idempotency-key", "mine").body(()).unwrap();
/// IdempotencyHeader::DEFAULT.stamp(&mut request, || key);
/// assert_eq!(request.headers()["idempotency-key"], "mine");
///
/// let stripe = IdempotencyHeader::new(HeaderName::from_static("x-request-key"));
/// assert_eq!(stripe.name(), "x-request-key");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyHeader {
    name: HeaderName,
}

impl IdempotencyHeader {
    /// `Idempotency-Key` (the IETF draft's name, which Stripe and others
    /// read).
    pub const DEFAULT: Self = Self::new(HeaderName::from_static("idempotency-key"));

    /// The key in the header `name`.
    #[must_use]
    pub const fn new(name: HeaderName) -> Self {
        Self { name }
    }

    /// The header's name.
    #[must_use]
    pub const fn name(&self) -> &HeaderName {
        &self.name
    }
}

impl Default for IdempotencyHeader {
    /// [`IdempotencyHeader::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl<B> StampKey<http::Request<B>> for IdempotencyHeader {
    fn stamp(&self, request: &mut http::Request<B>, key: impl FnOnce() -> IdempotencyKey) {
        let headers = request.headers_mut();
        if headers.contains_key(&self.name) {
            return;
        }
        // The UUID form is ASCII hex digits and hyphens: always a valid
        // header value.
        if let Ok(value) = HeaderValue::try_from(key().to_string()) {
            headers.insert(self.name.clone(), value);
        }
    }
}

/// Sends no key: for a service whose requests have nowhere to carry one,
/// or a server that would not read it.
///
/// ```
/// use tenacious::tower::{NoKey, StampKey};
///
/// let mut request = http::Request::new(());
/// NoKey.stamp(&mut request, || unreachable!("no key is drawn"));
/// assert!(request.headers().is_empty());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NoKey;

impl<R> StampKey<R> for NoKey {
    fn stamp(&self, _: &mut R, _: impl FnOnce() -> IdempotencyKey) {}
}
