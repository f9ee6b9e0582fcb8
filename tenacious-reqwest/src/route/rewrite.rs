//! Where each target's request goes: the request's URL put onto the
//! target's base URL, as [`RouteMiddleware`](super::RouteMiddleware)
//! describes. The rule itself, on paths and queries as `&str`, is written
//! once in the runtime ([`Relative`]), which `tenacious-tower` applies to
//! an `http::Uri`; here it is applied to a [`reqwest::Url`].
use reqwest::Url;
use tenacious_runtime::__route_http::Relative;

/// The part of `url` after the first target's base `first`.
pub(super) fn relative(url: &Url, first: &Url) -> Relative {
    Relative::of(url.path(), url.query(), first.path())
}

/// The URL a target of base `base` is sent.
pub(super) fn at(relative: &Relative, base: &Url) -> Url {
    let mut url = base.clone();
    url.set_path(&relative.path_at(base.path()));
    url.set_query(relative.query_at(base.query()).as_deref());
    url
}
