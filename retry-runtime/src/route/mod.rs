//! Routes: when one model, deployment or provider cannot serve a request,
//! the next one does.
//!
//! A [`Route`] is an ordered list of [`Target`]s, each with its own
//! policy, guards and statistics. [`Route::call`] sends a request to the
//! first; the target's policy retries it there as any call; when the
//! policy gives up, the route's [`Rules`] decide by how it gave up
//! whether the next target may serve it — a target that is down,
//! overloaded, silent, out of quota or whose breaker is open — or no
//! target will: a request the caller must fix, a content filter's
//! refusal, a call that may have been applied. A request too long for a
//! target's context window goes to the next target that declares a
//! larger one.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! use std::io;
//! use std::time::Duration;
//! use tenacious::route::{Route, Target};
//! use tenacious::{Breaker, Policy};
//!
//! let route = Route::builder("docs-models")
//!     .target(
//!         Target::new("docs-gpt", "gpt-4o")
//!             .policy(Policy::new().max(2).base(Duration::from_millis(100)))
//!             .breaker(Breaker::new()),
//!     )
//!     .target(Target::new("docs-claude", "claude-sonnet"))
//!     .deadline(Duration::from_secs(60))
//!     .build()
//!     .unwrap();
//!
//! let answer = route
//!     .call(|target| {
//!         let model = *target.data();
//!         async move {
//!             match model {
//!                 // down: refused connections, retried, then the next model
//!                 "gpt-4o" => Err(io::Error::from(io::ErrorKind::ConnectionRefused)),
//!                 _ => Ok(format!("{model} says hello")),
//!             }
//!         }
//!     })
//!     .await
//!     .unwrap();
//! assert_eq!(answer.value, "claude-sonnet says hello");
//! assert_eq!(answer.served_by(), "docs-claude");
//! assert_eq!(answer.tried()[0].target(), "docs-gpt");
//! # }
//! ```
mod call;
mod hop;
#[cfg(feature = "http")]
pub(crate) mod http;
mod outcome;
mod rto;
mod rules;
mod stream;
mod table;
mod target;

use std::sync::Arc;
use std::time::Duration;

pub use outcome::{RouteFailure, RouteStop, Routed, TargetError, Tried};
pub use rules::{Rules, Then};
pub use stream::{Resume, RoutedStream};
pub use table::{MAX_TARGETS, RouteError};
pub use target::Target;

use crate::RetryBudget;

/// An ordered list of targets a request may go to; see the
/// [module docs](self). Built with [`Route::builder`]; cheap to clone
/// (the targets are shared).
///
/// Defaults: the [`Rules`] table, no deadline, no budget over the route.
#[derive(Debug)]
pub struct Route<D> {
    name: Arc<str>,
    targets: Arc<[Target<D>]>,
    rules: Rules,
    deadline: Option<Duration>,
}

impl<D> Clone for Route<D> {
    fn clone(&self) -> Self {
        Self {
            name: Arc::clone(&self.name),
            targets: Arc::clone(&self.targets),
            rules: self.rules,
            deadline: self.deadline,
        }
    }
}

impl<D> Route<D> {
    /// A route called `name` (its budget's name), with no targets yet.
    #[must_use]
    pub fn builder(name: impl Into<String>) -> RouteBuilder<D> {
        RouteBuilder {
            name: name.into(),
            targets: Vec::new(),
            rules: Rules::new(),
            deadline: None,
            budget: None,
        }
    }

    /// The route's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its targets, in the order they are tried.
    #[must_use]
    pub fn targets(&self) -> &[Target<D>] {
        &self.targets
    }

    /// The deadline over the whole route, if set.
    #[must_use]
    pub const fn get_deadline(&self) -> Option<Duration> {
        self.deadline
    }

    /// Its rules.
    #[must_use]
    pub const fn rules(&self) -> &Rules {
        &self.rules
    }
}

/// The settings of a [`Route`] before it is built.
#[derive(Debug)]
pub struct RouteBuilder<D> {
    name: String,
    targets: Vec<Target<D>>,
    rules: Rules,
    deadline: Option<Duration>,
    budget: Option<RetryBudget>,
}

impl<D> RouteBuilder<D> {
    /// Adds a target, tried after those added before.
    #[must_use]
    pub fn target(mut self, target: Target<D>) -> Self {
        self.targets.push(target);
        self
    }

    /// The route's rules. Default: [`Rules::new`].
    #[must_use]
    pub const fn rules(mut self, rules: Rules) -> Self {
        self.rules = rules;
        self
    }

    /// One deadline over the whole route, from the call's start: each
    /// target's policy gets what is left (or its own deadline, if
    /// shorter), waits for a target's cooldown count against it, and no
    /// target is started past it. Default: none.
    #[must_use]
    pub const fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// One retry budget over the whole route: every target's retries
    /// draw from it. Shared by every route of this name, as a target's
    /// guards are by the target's: the first route built with the name
    /// sets its capacity, and a later one shares that bucket (its own
    /// capacity is not read). Default: none.
    #[must_use]
    pub const fn budget(mut self, budget: RetryBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The route, its targets' guards put where every target of their
    /// name shares them.
    ///
    /// # Errors
    ///
    /// [`RouteError`]: no targets, a name given twice, a name built
    /// before with other guards, or too many names.
    pub fn build(self) -> Result<Route<D>, RouteError> {
        if self.targets.is_empty() {
            return Err(RouteError::NoTargets);
        }
        for (i, target) in self.targets.iter().enumerate() {
            if self.targets[..i]
                .iter()
                .any(|before| before.name() == target.name())
            {
                return Err(RouteError::Duplicate(target.name().to_owned()));
            }
        }
        let budget = match self.budget {
            Some(budget) => Some(table::budget(&self.name, budget)?),
            None => None,
        };
        let mut targets = self.targets;
        for target in &mut targets {
            target.bind(budget)?;
        }
        Ok(Route {
            name: self.name.into(),
            targets: targets.into(),
            rules: self.rules,
            deadline: self.deadline,
        })
    }
}
