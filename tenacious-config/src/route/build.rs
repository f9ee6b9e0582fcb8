//! Building routes: a checked document's into the set's [`RouteSpec`]s,
//! each with the set's shared guards it names, and a [`RouteSpec`] into a
//! [`Route<String>`] by [`Policies::route`].
use std::collections::BTreeMap;
use std::time::Duration;

use tenacious_runtime::route::{Route, RouteError, Target};
use tenacious_runtime::{Breaker, Cooldown, Policy, Throttle};

use super::error::Kind;
use super::{GuardRef, PolicyRef, RouteConfigError, RouteSpec, TargetSpec};
use crate::document::Document;
use crate::set::Policies;

/// `set`'s routes from a checked `document`: each target's policy with
/// the set's shared guards it and its route name, made once per name.
pub(crate) fn build(set: &mut Policies, document: &Document) {
    fn shared<T, C: Copy + Default>(
        made: &mut BTreeMap<String, &'static T>,
        declared: &[(String, C)],
        name: &str,
        make: impl FnOnce(C, &'static str) -> T,
    ) -> &'static T {
        made.entry(name.to_owned()).or_insert_with(|| {
            let config = declared
                .iter()
                .find(|(declared, _)| declared == name)
                .map_or_else(C::default, |(_, config)| *config);
            let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
            Box::leak(Box::new(make(config, name)))
        })
    }
    for route in &document.routes {
        let budget = match &route.budget {
            Some(GuardRef::Named { name, .. }) => Some(shared(
                &mut set.budgets,
                &document.budgets,
                name,
                |config, _| config.build(),
            )),
            _ => None,
        };
        let mut targets = Vec::with_capacity(route.targets.len());
        for target in &route.targets {
            let mut policy = match &target.policy {
                PolicyRef::Default => Policy::DEFAULT,
                PolicyRef::Named { name, .. } => set.get(name).copied().unwrap_or(Policy::DEFAULT),
                PolicyRef::Own(config) => config.into_policy(),
            };
            if let Some(GuardRef::Named { name, .. }) = &target.breaker {
                policy = policy.breaker(shared(
                    &mut set.breakers,
                    &document.breakers,
                    name,
                    |config, name| config.apply(Breaker::new().name(name)),
                ));
            }
            if let Some(GuardRef::Named { name, .. }) = &target.cooldown {
                policy = policy.cooldown(shared(
                    &mut set.cooldowns,
                    &document.cooldowns,
                    name,
                    |config, name| config.apply(Cooldown::new().name(name)),
                ));
            }
            if let Some(GuardRef::Named { name, .. }) = &target.throttle {
                policy = policy.throttle(shared(
                    &mut set.throttles,
                    &document.throttles,
                    name,
                    |config, name| config.apply(Throttle::new().name(name)),
                ));
            }
            if let Some(GuardRef::Named { name, .. }) = &target.concurrency
                && let Some(concurrency) = set.concurrency_named(document, name)
            {
                policy = policy.concurrency(concurrency);
            }
            if let Some(budget) = budget {
                policy = policy.budget(budget);
            }
            targets.push(TargetSpec {
                name: target.name().to_owned(),
                data: target.data.clone().unwrap_or_default(),
                policy,
                breaker: target.breaker.as_ref().and_then(GuardRef::own).copied(),
                cooldown: target.cooldown.as_ref().and_then(GuardRef::own).copied(),
                throttle: target.throttle.as_ref().and_then(GuardRef::own).copied(),
                context: target.context,
                silence: target.silence.map(Duration::from_nanos),
                learn_silence: target.learn_silence.map(Duration::from_nanos),
            });
        }
        set.routes.insert(
            route.name.clone(),
            RouteSpec {
                deadline: route.deadline.map(Duration::from_nanos),
                budget: route.budget.as_ref().and_then(GuardRef::own).copied(),
                rules: route.rules,
                targets,
            },
        );
    }
}

impl Policies {
    /// The route declared under `[routes.NAME]`, built: its targets in
    /// order, each with its data (a base URL or a model id), policy,
    /// guards, context window and silence limit, and the route's
    /// deadline, budget and rules (see the [module](crate#routes) for the
    /// format).
    ///
    /// Each call builds the route anew, cheaply: the targets' own guards
    /// and statistics belong to their names, process-wide
    /// ([`tenacious::route`](tenacious_runtime::route)), so every route
    /// built with a target name shares them, across calls and across
    /// sets read again.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tenacious::config::Policies;
    ///
    /// let set = Policies::from_toml_str(
    ///     r#"
    ///     [policies.model]
    ///     max = 2
    ///
    ///     [routes.docs-chat]
    ///     deadline = "2m"
    ///     targets = [
    ///         { name = "docs-gpt-4o", data = "https://api.openai.com/v1", policy = "model", context = 128000 },
    ///         { name = "docs-claude", data = "https://api.anthropic.com/v1", silence = "30s" },
    ///     ]
    ///     "#,
    /// )?;
    /// let route = set.route("docs-chat")?;
    /// assert_eq!(route.get_deadline(), Some(Duration::from_secs(120)));
    /// let [gpt, claude] = route.targets() else { unreachable!() };
    /// assert_eq!((gpt.name(), gpt.data().as_str()), ("docs-gpt-4o", "https://api.openai.com/v1"));
    /// assert_eq!(gpt.get_policy().get_max(), 2);
    /// assert_eq!(claude.get_silence(), Some(Duration::from_secs(30)));
    ///
    /// let missing = set.route("docs-caht").unwrap_err();
    /// assert_eq!(
    ///     missing.to_string(),
    ///     "no route named \"docs-caht\"; did you mean \"docs-chat\"? the routes are: docs-chat",
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`RouteConfigError`]: the set declares no route of that name, or
    /// the route cannot be built ([`RouteError`]): a target name built
    /// before in this process with other guards, or the process keeps
    /// [`MAX_TARGETS`](tenacious_runtime::route::MAX_TARGETS) target names
    /// already.
    pub fn route(&self, name: &str) -> Result<Route<String>, RouteConfigError> {
        let Some(spec) = self.routes.get(name) else {
            return Err(RouteConfigError {
                route: name.to_owned(),
                source: self.source().to_owned(),
                kind: Kind::Missing {
                    known: Some(self.routes.keys().cloned().collect()),
                },
            });
        };
        let mut builder = Route::builder(name).rules(spec.rules);
        if let Some(deadline) = spec.deadline {
            builder = builder.deadline(deadline);
        }
        if let Some(budget) = spec.budget {
            builder = builder.budget(budget.build());
        }
        for t in &spec.targets {
            let mut target = Target::new(t.name.clone(), t.data.clone()).policy(t.policy);
            if let Some(config) = t.breaker {
                target = target.breaker(config.build());
            }
            if let Some(config) = t.cooldown {
                target = target.cooldown(config.build());
            }
            if let Some(config) = t.throttle {
                target = target.throttle(config.build());
            }
            if let Some(tokens) = t.context {
                target = target.context(tokens);
            }
            if let Some(limit) = t.silence {
                target = target.silence(limit);
            }
            if let Some(floor) = t.learn_silence {
                target = target.learn_silence(floor);
            }
            builder = builder.target(target);
        }
        builder.build().map_err(|error| {
            let named = match &error {
                RouteError::Conflict(target) | RouteError::Duplicate(target) => Some(target),
                _ => None,
            };
            let target = named.and_then(|named| {
                let index = spec.targets.iter().position(|t| &t.name == named)?;
                Some((index, named.clone()))
            });
            RouteConfigError {
                route: name.to_owned(),
                source: self.source().to_owned(),
                kind: Kind::Build { target, error },
            }
        })
    }

    /// The names of the routes the set declares, in order.
    ///
    /// ```
    /// use tenacious::config::Policies;
    ///
    /// let set = Policies::from_toml_str(
    ///     "[[routes.docs-names.targets]]\nname = \"docs-names-a\"\ndata = \"a\"\n",
    /// )?;
    /// assert_eq!(set.route_names().collect::<Vec<_>>(), ["docs-names"]);
    /// # Ok::<(), tenacious::config::ConfigError>(())
    /// ```
    pub fn route_names(&self) -> impl Iterator<Item = &str> {
        self.routes.keys().map(String::as_str)
    }
}
