//! The keys whose value is a path: a fn (`when`, `check`, `fallback`,
//! `notify`), a shared `static` (`budget`, `breaker`, `cooldown`,
//! `throttle`, `concurrency`, `guard`) or a policy (`policy`, a path or a name).
use syn::{Expr, ExprPath, Ident, Lit};
use tenacious_syntax::rules;

use super::{Args, PolicyArg, example};
use crate::common::{Errors, ungroup};

pub(super) fn fn_path(key: &str, value: &Expr, errors: &mut Errors) -> Option<ExprPath> {
    match ungroup(value) {
        Expr::Path(path) => Some(path.clone()),
        Expr::Closure(_) => {
            errors.at(
                value,
                format_args!(
                    "`{key}` takes a path to a fn, not a closure: move the closure into a fn \
                     and write `{}`",
                    example(key)
                ),
            );
            None
        }
        _ => {
            errors.at(
                value,
                format_args!("`{key}` takes a path to a fn: `{}`", example(key)),
            );
            None
        }
    }
}

impl Args {
    /// The shared `static`s the attribute names, by key and as the
    /// `Policy` builder of that name takes them, in the order the builders
    /// are written.
    pub(in crate::retry) fn statics(&self) -> impl Iterator<Item = (&'static str, &ExprPath)> {
        [
            ("budget", &self.budget),
            ("breaker", &self.breaker),
            ("cooldown", &self.cooldown),
            ("throttle", &self.throttle),
            ("concurrency", &self.concurrency),
            ("guard", &self.guard),
        ]
        .into_iter()
        .filter_map(|(name, path)| path.as_ref().map(|path| (name, path)))
    }
}

/// What `budget`, `breaker`, `cooldown`, `throttle` and `guard` take, as
/// their errors say it: a shared `static`, `what`, declared as `declare`
/// shows.
pub(in crate::retry) struct SharedStatic {
    pub(in crate::retry) what: &'static str,
    pub(in crate::retry) declare: &'static str,
}

/// The shared `static` the key `key` takes.
pub(in crate::retry) fn shared_static(key: &str) -> SharedStatic {
    let (what, declare) = match key {
        "budget" => (
            "a `static RetryBudget`",
            "static RETRY_BUDGET: tenacious::RetryBudget = tenacious::RetryBudget::new();",
        ),
        "breaker" => (
            "a `static Breaker`",
            "static PROVIDER_BREAKER: tenacious::Breaker = tenacious::Breaker::new();",
        ),
        "cooldown" => (
            "a `static Cooldown`",
            "static PROVIDER_COOLDOWN: tenacious::Cooldown = tenacious::Cooldown::new();",
        ),
        "throttle" => (
            "a `static Throttle`",
            "static PROVIDER_THROTTLE: tenacious::Throttle = tenacious::Throttle::new();",
        ),
        "concurrency" => (
            "a `static Concurrency`",
            "static PROVIDER_CONCURRENCY: tenacious::Concurrency = tenacious::Concurrency::new(8);",
        ),
        _ => (
            "a `static` whose type implements `Guard`",
            "static PROVIDER_GUARD: MyGuard = MyGuard::new();",
        ),
    };
    SharedStatic { what, declare }
}

/// The value of `budget`, `breaker`, `cooldown`, `throttle` or `guard`: the
/// path of the shared `static` it takes.
pub(super) fn static_path(key: &Ident, value: &Expr, errors: &mut Errors) -> Option<ExprPath> {
    let key = key.to_string();
    let SharedStatic { what, declare } = shared_static(&key);
    match ungroup(value) {
        Expr::Path(path) if path.qself.is_none() => Some(path.clone()),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(_), ..
        }) => {
            // Not the string as a path (`cooldown = openai` would name a
            // lowercase item no one declared): the declaration to write.
            // A guard a config declares by name comes with its policy.
            let config = if key == "guard" {
                String::new()
            } else {
                format!(
                    " (a {key} declared by name in a config comes with the config's policy \
                     that names it: `policy = \"openai\"`)"
                )
            };
            errors.at(
                value,
                format_args!(
                    "`{key}` takes the path of {what}, not a string: a guard is a `static`, \
                     shared by every call that names it; declare `{declare}` and write `{}`{config}",
                    example(&key)
                ),
            );
            None
        }
        _ => {
            errors.at(
                value,
                format_args!(
                    "`{key}` takes the path of {what}, shared by every call that \
                     names it: declare `{declare}` and write `{}`",
                    example(&key)
                ),
            );
            None
        }
    }
}

pub(super) fn policy(value: &Expr, errors: &mut Errors) -> Option<PolicyArg> {
    match ungroup(value) {
        Expr::Path(path) => Some(PolicyArg::Path(path.clone())),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(name),
            ..
        }) => {
            let text = name.value();
            if text.is_empty() {
                errors.at(
                    name,
                    "`policy = \"\"` names no policy: give the name of a policy the config \
                     loads, like `policy = \"openai\"` for `[policies.openai]`, or the path \
                     of a `const Policy`, like `policy = OPENAI`",
                );
                return None;
            }
            if let Some(bad) = text.chars().find(|c| !rules::policy_name_char(*c)) {
                errors.at(
                    name,
                    format_args!(
                        "{} cannot be the name of a policy: `tenacious::config` refuses a \
                         name with whitespace or a control character ({bad:?} here), so \
                         none could be loaded under it; name the policy as the config does, \
                         like `policy = \"openai\"`",
                        name.token()
                    ),
                );
                return None;
            }
            Some(PolicyArg::Named(name.clone()))
        }
        _ => {
            errors.at(
                value,
                "`policy` takes the path of a `const` or `static` `Policy`, whose settings \
                 the other keys override: `const OPENAI: tenacious::Policy = \
                 tenacious::Policy::new().max(5);` and `policy = OPENAI`; or, with \
                 `tenacious`'s feature `config`, the name of a policy loaded at run time \
                 with `tenacious::config::load`: `policy = \"openai\"`",
            );
            None
        }
    }
}
