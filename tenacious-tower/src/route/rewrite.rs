//! Where each target's request goes: the request's URI put onto the
//! target's base URI, as [`RouteLayer`](super::RouteLayer) describes. The
//! rule itself, on paths and queries as `&str`, is written once in the
//! runtime ([`Relative`]), which `tenacious-reqwest` applies to a
//! `reqwest::Url`; here it is applied to an [`http::Uri`].
use http::Uri;
use http::uri::PathAndQuery;
use tenacious_runtime::__route_http::Relative;

/// The part of `uri` after the first target's base `first`.
pub(super) fn relative(uri: &Uri, first: &Uri) -> Relative {
    Relative::of(uri.path(), uri.query(), first.path())
}

/// The URI a target of base `base` is sent.
pub(super) fn at(relative: &Relative, base: &Uri) -> Uri {
    let mut path_and_query = relative.path_at(base.path());
    if let Some(query) = relative.query_at(base.query()) {
        path_and_query.push('?');
        path_and_query.push_str(&query);
    }
    let mut parts = base.clone().into_parts();
    // Pieces of two valid URIs' paths and queries, joined: valid; a
    // base with a scheme and an authority (`RouteLayer::new`) gives a
    // valid absolute URI.
    parts.path_and_query = Some(
        PathAndQuery::try_from(path_and_query).expect("the path and query of valid URIs, joined"),
    );
    Uri::from_parts(parts).expect("a base URI with a scheme and an authority")
}
