//! Not a stable API: what `tenacious-reqwest`'s `RouteMiddleware` and
//! `tenacious-tower`'s `RouteService` share. Neither crate depends on the
//! other, and each has its own URL type (`reqwest::Url`, `http::Uri`), so
//! the rules are written here once, on `&str` paths and queries and on the
//! route's own types, and each crate applies them to its URL type: where a
//! request's path goes at each target's base ([`Relative`]), and which
//! error a route that no target served stands for ([`last`],
//! [`into_last_answer`], [`source`], [`inner`]). Re-exported at the root
//! as the hidden `__route_http`.
use std::error::Error;

use super::{RouteFailure, TargetError};
use crate::{Classify, Elapsed};

/// What of a request's URL goes after each target's base: the path after
/// the first target's base path, and the query.
///
/// - the request's path less the first target's base path, when it
///   starts with it on a `/` boundary (a base `/v1` and a request to
///   `/v1/chat` give `/chat`), else the whole path (a request to `/chat`
///   gives `/chat` too);
/// - each target is sent that path after its base's path (a base
///   `/openai/v1` is sent `/openai/v1/chat`), and the request's query
///   after the base's own, joined by `&`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relative {
    path: String,
    query: Option<String>,
}

impl Relative {
    /// The part of a request of `path` and `query` after the first
    /// target's base path `first`.
    #[must_use]
    pub fn of(path: &str, query: Option<&str>, first: &str) -> Self {
        let base = first.trim_end_matches('/');
        let rest = match path.strip_prefix(base) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
            _ => path,
        };
        Self {
            path: rest.to_owned(),
            query: query.map(str::to_owned),
        }
    }

    /// The path a target of base path `base` is sent: `/` when both are
    /// empty.
    #[must_use]
    pub fn path_at(&self, base: &str) -> String {
        let mut path = base.trim_end_matches('/').to_owned();
        path.push_str(&self.path);
        if path.is_empty() {
            path.push('/');
        }
        path
    }

    /// The query a target of base query `base` is sent: the base's, then
    /// the request's; `None` when neither has one.
    #[must_use]
    pub fn query_at(&self, base: Option<&str>) -> Option<String> {
        let query = [base, self.query.as_deref()]
            .into_iter()
            .flatten()
            .filter(|query| !query.is_empty())
            .collect::<Vec<_>>()
            .join("&");
        (!query.is_empty()).then_some(query)
    }
}

/// Whether a target's outcome has an error of its own: it made an
/// attempt, or its guards refused it (a target the route skipped has
/// none).
const fn has_error<E>(error: &TargetError<E>) -> bool {
    matches!(
        error,
        TargetError::Answer(_) | TargetError::Silent(_) | TargetError::GuardRefused(_)
    )
}

/// The last error of a route that no target served: that of the last
/// target tried that has one.
#[must_use]
pub fn last<E>(failure: &RouteFailure<E>) -> Option<&TargetError<E>> {
    failure
        .tried()
        .iter()
        .rev()
        .map(super::Tried::error)
        .find(|error| has_error(error))
}

/// The [`last`] error, owned, when it is the call's own error.
#[must_use]
pub fn into_last_answer<E>(failure: RouteFailure<E>) -> Option<E> {
    let index = failure
        .tried()
        .iter()
        .rposition(|tried| has_error(tried.error()))?;
    match failure.into_tried().into_iter().nth(index)?.into_error() {
        TargetError::Answer(error) => Some(error),
        _ => None,
    }
}

/// The source of a route's error: its [`last`] error, else, when the
/// route's `deadline` was spent before any target, that deadline's
/// [`Elapsed`].
#[must_use]
pub fn source<'a, E: Error + 'static>(
    failure: &'a RouteFailure<E>,
    deadline: Option<&'a Elapsed>,
) -> Option<&'a (dyn Error + 'static)> {
    match last(failure) {
        Some(TargetError::Answer(error)) => Some(error),
        Some(TargetError::Silent(elapsed)) => Some(elapsed),
        Some(TargetError::GuardRefused(refused)) => Some(refused),
        _ => deadline.map(|elapsed| elapsed as &(dyn Error + 'static)),
    }
}

/// What a route's error classifies as: as [`source`], the [`last`]
/// error or the `deadline`'s [`Elapsed`].
#[must_use]
pub fn inner<'a, E: Classify>(
    failure: &'a RouteFailure<E>,
    deadline: Option<&'a Elapsed>,
) -> Option<&'a dyn Classify> {
    match last(failure) {
        Some(error) => Some(error),
        None => deadline.map(|elapsed| elapsed as &dyn Classify),
    }
}

#[cfg(test)]
mod tests {
    use super::Relative;

    #[test]
    fn the_rest_of_the_path_goes_after_each_base() {
        let relative = Relative::of("/v1/chat", Some("stream=true"), "/v1/");
        assert_eq!(relative.path_at("/openai/v1/"), "/openai/v1/chat");
        assert_eq!(
            relative.query_at(Some("api-version=1")).as_deref(),
            Some("api-version=1&stream=true")
        );
        // The base itself: nothing after it, `/` when the target's is empty.
        let relative = Relative::of("/v1", None, "/v1");
        assert_eq!(relative.path_at("/"), "/");
        assert_eq!(relative.path_at("/openai"), "/openai");
        // Not on a `/` boundary: the whole path goes after each base.
        let relative = Relative::of("/v10/chat", Some(""), "/v1");
        assert_eq!(relative.path_at("/b"), "/b/v10/chat");
        assert_eq!(relative.query_at(Some("")), None);
    }
}
