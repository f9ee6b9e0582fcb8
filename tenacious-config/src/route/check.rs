//! Checking a document's routes against the whole document: the
//! policies and guards they name exist, each target's name is once in its
//! route, and a name has one set of guards across routes.
use std::collections::HashMap;

use super::{GuardRef, PolicyRef};
use crate::document::{Document, no_concurrency, plural};
use crate::read::{Reader, closest, segment};
use crate::value::{Value, quoted};

/// The names of the shared guards of `kind` the document has: declared,
/// or named by a policy.
fn known_guards<'d>(document: &'d Document, kind: &str) -> Vec<&'d str> {
    let declared: Vec<&str> = match kind {
        "budget" => document.budgets.iter().map(|(n, _)| n.as_str()).collect(),
        "breaker" => document.breakers.iter().map(|(n, _)| n.as_str()).collect(),
        "cooldown" => document.cooldowns.iter().map(|(n, _)| n.as_str()).collect(),
        _ => document.throttles.iter().map(|(n, _)| n.as_str()).collect(),
    };
    let mut known: Vec<&str> = declared
        .into_iter()
        .chain(
            document
                .policies
                .iter()
                .filter_map(|(_, _, guards)| guards.get(kind)),
        )
        .collect();
    known.sort_unstable();
    known.dedup();
    known
}

/// A name of a guard of `kind` the document has, or a problem.
fn check_guard<C>(
    r: &mut Reader<'_>,
    document: &Document,
    kind: &str,
    guard: Option<&GuardRef<C>>,
) {
    let Some(GuardRef::Named { name, at, value }) = guard else {
        return;
    };
    if kind == "concurrency" {
        // No defaults: only a declared one is a name.
        let known = document.concurrency_names();
        if !known.contains(&name.as_str()) {
            r.problem(at, Some(value), no_concurrency(name, &known));
        }
        return;
    }
    let known = known_guards(document, kind);
    if known.contains(&name.as_str()) {
        return;
    }
    let plural = plural(kind);
    let shown = quoted(name);
    let message = if known.is_empty() {
        format!(
            "no {kind} named {shown}: the set declares none; declare it under `[{plural}.{}]` \
             (an empty table for the defaults), or give the settings here, like `{kind} = {{}}`",
            segment(name)
        )
    } else {
        let guess = closest(name, known.iter().copied())
            .map(|guess| format!(" did you mean {}?", quoted(guess)))
            .unwrap_or_default();
        format!(
            "no {kind} named {shown}: a name here is a shared {kind} of the set, declared under \
             `[{plural}.NAME]` or named by a policy;{guess} the {plural} are: {}",
            known.join(", ")
        )
    };
    r.problem(at, Some(value), message);
}

/// What a route names, checked against the whole document: its policies
/// and guards exist, each target's name is once in its route, and a name
/// has one set of guards across routes.
pub(crate) fn check(r: &mut Reader<'_>, document: &Document) {
    let policies: Vec<&str> = document
        .policies
        .iter()
        .map(|(name, ..)| name.as_str())
        .collect();
    // A target name's own guards, where first given.
    let mut first: HashMap<&str, (&str, usize, String)> = HashMap::new();
    for route in &document.routes {
        check_guard(r, document, "budget", route.budget.as_ref());
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for target in &route.targets {
            if let PolicyRef::Named { name, at, value } = &target.policy
                && !policies.contains(&name.as_str())
            {
                let shown = quoted(name);
                let message = if policies.is_empty() {
                    format!(
                        "no policy named {shown}: the set declares none; declare it under \
                         `[policies.{}]`, or give the settings here, like `policy = {{ max = 3 }}`",
                        segment(name)
                    )
                } else {
                    let guess = closest(name, policies.iter().copied())
                        .map(|guess| format!(" did you mean {}?", quoted(guess)))
                        .unwrap_or_default();
                    format!(
                        "no policy named {shown} in the set;{guess} the policies are: {}",
                        policies.join(", ")
                    )
                };
                r.problem(at, Some(value), message);
            }
            check_guard(r, document, "breaker", target.breaker.as_ref());
            check_guard(r, document, "cooldown", target.cooldown.as_ref());
            check_guard(r, document, "throttle", target.throttle.as_ref());
            check_guard(r, document, "concurrency", target.concurrency.as_ref());
            let Some((name, at)) = &target.name else {
                continue;
            };
            if let Some(before) = seen.insert(name, target.index) {
                r.problem(
                    at,
                    Some(&Value::Str(name.clone())),
                    format!(
                        "the route lists target {} twice (targets[{before}] and targets[{}]): \
                         results and statistics could not tell them apart; give each its own \
                         name",
                        quoted(name),
                        target.index
                    ),
                );
                continue;
            }
            let settings = target.guard_settings();
            match first.get(name.as_str()) {
                Some((other, index, theirs)) if *theirs != settings => r.problem(
                    at,
                    Some(&Value::Str(name.clone())),
                    format!(
                        "target {} has other guards in route {} (targets[{index}]): a target \
                         name's guards are shared by every route of the process \
                         (`tenacious::route`), so give it the same guards and settings, or \
                         another name",
                        quoted(name),
                        quoted(other)
                    ),
                ),
                Some(_) => {}
                None => {
                    first.insert(name, (&route.name, target.index, settings));
                }
            }
        }
    }
}
