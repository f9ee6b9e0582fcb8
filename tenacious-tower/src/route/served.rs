//! [`ServedBy`]: which target of a [`RouteService`](super::RouteService)'s
//! route answered.

/// Which target of the route answered: put in the extensions of the
/// response a [`RouteService`](super::RouteService) returns.
///
/// ```
/// use tenacious::tower::ServedBy;
///
/// fn served_by<B>(response: &http::Response<B>) -> Option<&'static str> {
///     response.extensions().get::<ServedBy>().map(|served| served.name())
/// }
/// assert_eq!(served_by(&http::Response::new(())), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ServedBy {
    pub(super) name: &'static str,
    pub(super) index: usize,
    pub(super) attempts: u32,
}

impl ServedBy {
    /// The target's name.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Its place in the route, 0 for the first target.
    #[must_use]
    pub const fn index(&self) -> usize {
        self.index
    }

    /// The attempts the call took at it (those at the targets before it
    /// not counted).
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
