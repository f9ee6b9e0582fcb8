//! [`ServedBy`]: which target of a [`RouteMiddleware`](super::RouteMiddleware)'s
//! route answered.
use std::borrow::Cow;

/// Which target of the route answered: put in the extensions of the
/// response a [`RouteMiddleware`](super::RouteMiddleware) returns.
///
/// ```
/// use tenacious::reqwest_middleware::ServedBy;
///
/// fn served_by(response: &reqwest::Response) -> Option<&str> {
///     response.extensions().get::<ServedBy>().map(ServedBy::name)
/// }
/// let response = reqwest::Response::from(http::Response::new(""));
/// assert_eq!(served_by(&response), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ServedBy {
    pub(super) name: Cow<'static, str>,
    pub(super) index: usize,
    pub(super) attempts: u32,
}

impl ServedBy {
    /// The target's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its place in the route, 0 for the first target.
    #[must_use]
    pub const fn index(&self) -> usize {
        self.index
    }

    /// The attempts the request took at it (those at the targets before
    /// it not counted).
    #[must_use]
    pub const fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Whether a target other than the first served.
    #[must_use]
    pub const fn fell_back(&self) -> bool {
        self.index > 0
    }
}
