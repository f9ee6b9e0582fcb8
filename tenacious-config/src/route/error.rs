//! [`RouteConfigError`]: why [`Policies::route`](crate::Policies::route)
//! returned no route.
use std::fmt;

use tenacious_runtime::route::RouteError;

use crate::read::{closest, segment};
use crate::value::quoted;

impl RouteConfigError {
    /// No route named `name`: nothing was loaded.
    pub(crate) fn nothing_loaded(name: &str) -> Self {
        Self {
            route: name.to_owned(),
            source: String::new(),
            kind: Kind::Missing { known: None },
        }
    }
}

/// Why [`Policies::route`](crate::Policies::route) returned no route:
/// the set declares none of that name, or it could not be built.
///
/// ```
/// use tenacious::config::Policies;
///
/// let set = Policies::from_toml_str("[policies.a]\n")?;
/// let err = set.route("chat").unwrap_err();
/// assert_eq!(err.route(), "chat");
/// assert!(err.route_error().is_none());
/// assert_eq!(
///     err.to_string(),
///     "no route named \"chat\": the set declares no route; declare it under `[routes.chat]`",
/// );
/// # Ok::<(), tenacious::config::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteConfigError {
    pub(super) route: String,
    /// The set's source, if it has one.
    pub(super) source: String,
    pub(super) kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    /// No route of the name; `known`: the names there are, `None` when
    /// nothing was loaded.
    Missing { known: Option<Vec<String>> },
    /// The route's builder refused it; `target`: the target it names.
    Build {
        target: Option<(usize, String)>,
        error: RouteError,
    },
}

impl RouteConfigError {
    /// The route asked for.
    #[must_use]
    pub fn route(&self) -> &str {
        &self.route
    }

    /// The target the builder refused, with its place in the route, if
    /// the refusal names one.
    #[must_use]
    pub fn target(&self) -> Option<(usize, &str)> {
        match &self.kind {
            Kind::Build {
                target: Some((index, name)),
                ..
            } => Some((*index, name)),
            _ => None,
        }
    }

    /// Why the route's builder refused it; `None` when the set has no
    /// route of that name.
    #[must_use]
    pub fn route_error(&self) -> Option<&RouteError> {
        match &self.kind {
            Kind::Build { error, .. } => Some(error),
            Kind::Missing { .. } => None,
        }
    }
}

impl fmt::Display for RouteConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = quoted(&self.route);
        let source = if self.source.is_empty() {
            String::new()
        } else {
            format!(" in {}", self.source)
        };
        match &self.kind {
            Kind::Missing { known: None } => write!(
                f,
                "no route named {name}: no policies are loaded; load them at start-up, with \
                 `tenacious::config::load`"
            ),
            Kind::Missing { known: Some(known) } if known.is_empty() => write!(
                f,
                "no route named {name}{source}: the set declares no route; declare it under \
                 `[routes.{}]`",
                segment(&self.route)
            ),
            Kind::Missing { known: Some(known) } => {
                write!(f, "no route named {name}{source}")?;
                match closest(&self.route, known.iter().map(String::as_str)) {
                    Some(guess) => write!(f, "; did you mean {}?", quoted(guess))?,
                    None => f.write_str(";")?,
                }
                write!(f, " the routes are: {}", known.join(", "))
            }
            Kind::Build {
                target: Some((index, target)),
                error,
            } => write!(
                f,
                "route {name}{source}: targets[{index}] ({}): {error}",
                quoted(target)
            ),
            Kind::Build {
                target: None,
                error,
            } => write!(f, "route {name}{source}: {error}"),
        }
    }
}

impl std::error::Error for RouteConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.route_error()
            .map(|error| error as &(dyn std::error::Error + 'static))
    }
}
