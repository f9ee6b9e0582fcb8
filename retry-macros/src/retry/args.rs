//! The attribute's `key = value` pairs, read into typed settings.
//!
//! Each value is parsed as an expression first, so one bad value does not
//! hide the keys after it; then each key reads its expression and reports a
//! mistake on the exact tokens, saying what to write instead.
use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, ExprPath, Ident, Lit, LitStr, Token};

use super::Errors;
use super::duration;

/// The keys, in the order the documentation lists them.
const KEYS: &[&str] = &[
    "max",
    "base",
    "cap",
    "jitter",
    "on",
    "when",
    "max_retry_after",
    "timeout",
    "deadline",
    "budget",
    "key",
    "nested",
    "notify",
    "stats",
    "crate",
];

/// Keys other retry libraries use, mapped to ours with a word on the difference.
const ALIASES: &[(&str, &str, &str)] = &[
    (
        "retries",
        "max",
        "`max` counts every attempt, the first included: `retries = 2` is `max = 3`",
    ),
    (
        "max_retries",
        "max",
        "`max` counts every attempt, the first included: `max_retries = 2` is `max = 3`",
    ),
    (
        "attempts",
        "max",
        "`max` counts every attempt, the first included",
    ),
    (
        "max_attempts",
        "max",
        "`max` counts every attempt, the first included",
    ),
    (
        "tries",
        "max",
        "`max` counts every attempt, the first included",
    ),
    ("delay", "base", "`base` is the first backoff ceiling"),
    ("backoff", "base", "`base` is the first backoff ceiling"),
    (
        "initial_delay",
        "base",
        "`base` is the first backoff ceiling",
    ),
    ("min_delay", "base", "`base` is the first backoff ceiling"),
    ("max_delay", "cap", "`cap` is the ceiling of any backoff"),
    ("max_backoff", "cap", "`cap` is the ceiling of any backoff"),
    ("retry_on", "on", "`on` lists the retried classes"),
    ("classes", "on", "`on` lists the retried classes"),
    (
        "retry_if",
        "when",
        "`when` is an extra predicate, AND-ed with `on`",
    ),
    (
        "predicate",
        "when",
        "`when` is an extra predicate, AND-ed with `on`",
    ),
    (
        "filter",
        "when",
        "`when` is an extra predicate, AND-ed with `on`",
    ),
    ("on_retry", "notify", "`notify` is called before each sleep"),
    ("callback", "notify", "`notify` is called before each sleep"),
    (
        "krate",
        "crate",
        "`crate` is the path to the `tenacious` crate",
    ),
    (
        "attempt_timeout",
        "timeout",
        "`timeout` bounds each attempt",
    ),
    (
        "per_attempt_timeout",
        "timeout",
        "`timeout` bounds each attempt",
    ),
    (
        "total_timeout",
        "deadline",
        "`deadline` bounds the whole call, attempts and sleeps",
    ),
    (
        "max_elapsed",
        "deadline",
        "`deadline` bounds the whole call, attempts and sleeps",
    ),
    (
        "max_elapsed_time",
        "deadline",
        "`deadline` bounds the whole call, attempts and sleeps",
    ),
    (
        "retry_budget",
        "budget",
        "`budget` names a shared `static RetryBudget`",
    ),
    (
        "idempotency_key",
        "key",
        "`key` names the call's idempotency key from its arguments",
    ),
];

/// The values `nested` takes.
const NESTED: &[&str] = &["once", "retry"];

/// The jitter strategies, as written in the attribute.
const JITTERS: &[&str] = &["full", "equal", "decorrelated", "none"];

/// The classes `on` accepts.
const RETRIED_CLASSES: &[&str] = &["Transient", "RateLimited"];

/// How the backoff ceiling is randomised; mirrors `tenacious::Jitter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JitterKind {
    Full,
    Equal,
    Decorrelated,
    None,
}

/// A duration setting: its value, the literal it came from and its key.
#[derive(Debug, Clone)]
pub(super) struct DurationArg {
    pub(super) nanos: u64,
    pub(super) lit: LitStr,
    pub(super) key: Ident,
}

/// What a call does inside another retried call; mirrors `tenacious::Nested`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NestedKind {
    Once,
    Retry,
}

/// What `stats` says about the fn's statistics record.
#[derive(Debug, Clone)]
pub(super) enum StatsArg {
    /// `stats = false`: no record, so no statistics, events or metrics.
    Off,
    /// `stats = true`: the default record, named after the fn.
    Default,
    /// `stats = "name"`: a record named `name`.
    Named(LitStr),
}

/// The classes `on` retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RetryOn {
    pub(super) transient: bool,
    pub(super) rate_limited: bool,
}

/// The settings of one `#[retry(...)]`; `None` means the runtime default.
#[derive(Default)]
pub(super) struct Args {
    pub(super) max: Option<u32>,
    pub(super) base: Option<DurationArg>,
    pub(super) cap: Option<DurationArg>,
    pub(super) max_retry_after: Option<DurationArg>,
    pub(super) timeout: Option<DurationArg>,
    pub(super) deadline: Option<DurationArg>,
    pub(super) budget: Option<ExprPath>,
    /// `key = EXPR`: the call's idempotency key, from its arguments.
    pub(super) key: Option<Expr>,
    pub(super) nested: Option<NestedKind>,
    pub(super) jitter: Option<JitterKind>,
    pub(super) on: Option<RetryOn>,
    pub(super) when: Option<ExprPath>,
    pub(super) notify: Option<ExprPath>,
    pub(super) stats: Option<StatsArg>,
    pub(super) krate: Option<syn::Path>,
}

/// One `key = value` (or a bare `key`) before its value is interpreted.
struct RawArg {
    key: Ident,
    value: Option<Expr>,
}

/// Reads the attribute's arguments; every mistake goes to `errors` and the
/// key it concerns is left at its default.
pub(super) fn parse(tokens: TokenStream, errors: &mut Errors) -> Args {
    let mut args = Args::default();
    let raw = match parse_raw.parse2(tokens) {
        Ok(raw) => raw,
        Err(err) => {
            errors.push(err);
            return args;
        }
    };
    let mut seen: Vec<String> = Vec::new();
    // Inside `on = A, B, C`: the comma ended `on`, so `B` and `C` read as keys.
    let mut in_on_list = false;
    for RawArg { key, value } in raw {
        let name = key.unraw().to_string();
        let stray_class = in_on_list && value.is_none() && is_class(&name);
        in_on_list = name == "on" || stray_class;
        if !KEYS.contains(&name.as_str()) {
            if stray_class {
                // `on = Transient, RateLimited`: the comma ended `on`.
                errors.at(&key, comma_in_on(&name));
            } else {
                errors.at(&key, unknown_key(&name));
            }
            continue;
        }
        if seen.contains(&name) {
            errors.at(
                &key,
                format_args!("duplicate key `{name}`: give each key once"),
            );
            continue;
        }
        seen.push(name.clone());
        let Some(value) = value else {
            errors.at(
                &key,
                format_args!("`{name}` needs a value: `{}`", example(&name)),
            );
            continue;
        };
        match name.as_str() {
            "max" => args.max = max(&value, errors),
            "base" => args.base = duration_arg(&key, &value, errors),
            "cap" => args.cap = duration_arg(&key, &value, errors),
            "max_retry_after" => args.max_retry_after = duration_arg(&key, &value, errors),
            "timeout" => args.timeout = duration_arg(&key, &value, errors),
            "deadline" => args.deadline = duration_arg(&key, &value, errors),
            "budget" => args.budget = budget_path(&value, errors),
            "key" => args.key = Some(value),
            "nested" => args.nested = nested(&value, errors),
            "jitter" => args.jitter = jitter(&value, errors),
            "on" => args.on = on(&value, errors),
            "when" => args.when = fn_path("when", &value, errors),
            "notify" => args.notify = fn_path("notify", &value, errors),
            "stats" => args.stats = stats(&value, errors),
            "crate" => args.krate = crate_path(&value, errors),
            _ => unreachable!("every key in KEYS is handled"),
        }
    }
    args
}

fn parse_raw(input: ParseStream<'_>) -> syn::Result<Vec<RawArg>> {
    let mut raw = Vec::new();
    while !input.is_empty() {
        // `parse_any` so that `crate` reads as a key like the others.
        let key = input.call(Ident::parse_any).map_err(|err| {
            syn::Error::new(
                err.span(),
                "expected `key = value`, like `max = 3` or `base = \"200ms\"`",
            )
        })?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            // `max =` with nothing after it: reported on the key, like a
            // bare `max`, not as a parser error at the attribute's end.
            if input.is_empty() || input.peek(Token![,]) {
                None
            } else {
                Some(input.parse::<Expr>()?)
            }
        } else {
            None
        };
        raw.push(RawArg { key, value });
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(raw)
}

/// What a key looks like when written correctly.
fn example(key: &str) -> &'static str {
    match key {
        "max" => "max = 3",
        "base" => "base = \"200ms\"",
        "cap" => "cap = \"20s\"",
        "jitter" => "jitter = \"full\"",
        "on" => "on = Transient | RateLimited",
        "when" => "when = is_retryable",
        "max_retry_after" => "max_retry_after = \"120s\"",
        "timeout" => "timeout = \"10s\"",
        "deadline" => "deadline = \"60s\"",
        "budget" => "budget = RETRY_BUDGET",
        "key" => "key = order.id",
        "nested" => "nested = \"retry\"",
        "notify" => "notify = log_retry",
        "stats" => "stats = false",
        "crate" => "crate = ::tenacious",
        _ => "key = value",
    }
}

/// Whether `word` is (or is a likely typo of) an error class, as `on` lists them.
fn is_class(word: &str) -> bool {
    closest(word, &["Transient", "RateLimited", "Invalid", "Fatal"]).is_some()
}

fn comma_in_on(name: &str) -> String {
    format!(
        "classes in `on` are joined with `|`, not `,`: write `on = Transient | RateLimited`; \
         after a comma `{name}` reads as a key"
    )
}

fn unknown_key(name: &str) -> String {
    let listed = KEYS.join(", ");
    if let Some((_, key, why)) = ALIASES.iter().find(|(alias, _, _)| *alias == name) {
        return format!(
            "unknown key `{name}`; did you mean `{key}`? ({why}); the keys are: {listed}"
        );
    }
    match closest(name, KEYS) {
        Some(key) => format!("unknown key `{name}`; did you mean `{key}`? the keys are: {listed}"),
        None => format!("unknown key `{name}`; the keys are: {listed}"),
    }
}

/// The candidate `word` is most likely a typo of, if any is close enough.
///
/// Case and `_` are ignored, so `rate_limited` finds `RateLimited`.
pub(super) fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let fold = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let word = fold(word);
    candidates
        .iter()
        .map(|candidate| (edit_distance(&word, &fold(candidate)), *candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Strips the invisible groups `macro_rules!` wraps around `$e:expr`.
fn ungroup(mut expr: &Expr) -> &Expr {
    while let Expr::Group(group) = expr {
        expr = &group.expr;
    }
    expr
}

fn max(value: &Expr, errors: &mut Errors) -> Option<u32> {
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Int(lit), ..
    }) = ungroup(value)
    else {
        errors.at(
            value,
            "`max` takes an integer literal, the total number of attempts: `max = 3`",
        );
        return None;
    };
    match lit.base10_parse::<u32>() {
        Ok(0) => {
            errors.at(
                lit,
                "`max` counts every attempt, the first included, so it is at least 1; \
                 write `max = 1` for a single attempt without retries",
            );
            None
        }
        Ok(max) => Some(max),
        Err(_) => {
            errors.at(
                lit,
                "`max` must fit a `u32`: write a number of attempts up to 4294967295",
            );
            None
        }
    }
}

fn duration_arg(key: &Ident, value: &Expr, errors: &mut Errors) -> Option<DurationArg> {
    let name = key.unraw().to_string();
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Str(lit), ..
    }) = ungroup(value)
    else {
        errors.at(
            value,
            format_args!(
                "`{name}` takes a duration string with a unit: `{}`",
                example(&name)
            ),
        );
        return None;
    };
    let nanos = match duration::parse(&lit.value()) {
        Ok(nanos) => nanos,
        Err(why) => {
            errors.at(
                lit,
                format_args!(
                    "invalid duration {}: {why}; {}",
                    lit.token(),
                    duration::FORMAT
                ),
            );
            return None;
        }
    };
    if nanos == 0 {
        let why = match name.as_str() {
            "base" => {
                "a zero `base` makes every backoff zero, so retries run in a tight loop \
                 against a failing service; give a positive duration, like `base = \"200ms\"`"
            }
            "cap" => {
                "a zero `cap` makes every backoff zero, so retries run in a tight loop \
                 against a failing service; give a positive duration, like `cap = \"20s\"`"
            }
            "timeout" => {
                "a zero `timeout` times out every attempt before it starts; give the \
                 longest one attempt may run, like `timeout = \"10s\"`, or remove the key"
            }
            "deadline" => {
                "a zero `deadline` leaves no time for any attempt; give the longest the \
                 whole call may run, like `deadline = \"60s\"`, or remove the key"
            }
            _ => {
                "a zero `max_retry_after` gives up on every server that asks to wait; \
                 give the longest wait to honour, like `max_retry_after = \"120s\"`"
            }
        };
        errors.at(lit, why);
        return None;
    }
    Some(DurationArg {
        nanos,
        lit: lit.clone(),
        key: key.clone(),
    })
}

fn jitter(value: &Expr, errors: &mut Errors) -> Option<JitterKind> {
    let expected = "expected one of \"full\", \"equal\", \"decorrelated\", \"none\"";
    let text = match ungroup(value) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => lit.value(),
        Expr::Path(path) if path.path.get_ident().is_some() => {
            let ident = path.path.get_ident().map(ToString::to_string);
            let ident = ident.unwrap_or_default();
            let suggestion = closest(&ident, JITTERS).unwrap_or("full");
            errors.at(
                value,
                format_args!("`jitter` takes a string: `jitter = \"{suggestion}\"`"),
            );
            return None;
        }
        _ => {
            errors.at(value, format_args!("`jitter` takes a string; {expected}"));
            return None;
        }
    };
    match text.as_str() {
        "full" => Some(JitterKind::Full),
        "equal" => Some(JitterKind::Equal),
        "decorrelated" => Some(JitterKind::Decorrelated),
        "none" => Some(JitterKind::None),
        other => {
            let message = match closest(other, JITTERS) {
                Some(guess) => {
                    format!("unknown jitter \"{other}\"; did you mean \"{guess}\"? {expected}")
                }
                None => format!("unknown jitter \"{other}\"; {expected}"),
            };
            errors.at(value, message);
            None
        }
    }
}

fn on(value: &Expr, errors: &mut Errors) -> Option<RetryOn> {
    let mut classes = Vec::new();
    collect_classes(value, &mut classes, errors)?;
    let mut on = RetryOn {
        transient: false,
        rate_limited: false,
    };
    let mut ok = true;
    for path in classes {
        let Some(ident) = path.path.segments.last().map(|s| s.ident.to_string()) else {
            continue;
        };
        let slot = match ident.as_str() {
            "Transient" => &mut on.transient,
            "RateLimited" => &mut on.rate_limited,
            "Invalid" => {
                errors.at(
                    &path,
                    "`Invalid` errors are never retried: the same request fails the same way; \
                     return the error so the caller (or the model) can fix the input, or \
                     classify the variant `transient` if a retry can succeed (`when` can only \
                     narrow `on`, not widen it)",
                );
                ok = false;
                continue;
            }
            "Fatal" => {
                errors.at(
                    &path,
                    "`Fatal` errors are never retried: a human must fix the cause; classify \
                     the variant `transient` if a retry can succeed (`when` can only narrow \
                     `on`, not widen it)",
                );
                ok = false;
                continue;
            }
            other => {
                let message =
                    match closest(other, &["Transient", "RateLimited", "Invalid", "Fatal"]) {
                        Some(guess) if RETRIED_CLASSES.contains(&guess) => format!(
                            "unknown class `{other}` in `on`; did you mean `{guess}`? \
                         `on` takes `Transient`, `RateLimited` or `Transient | RateLimited`"
                        ),
                        _ => format!(
                            "unknown class `{other}` in `on`; \
                         `on` takes `Transient`, `RateLimited` or `Transient | RateLimited`"
                        ),
                    };
                errors.at(&path, message);
                ok = false;
                continue;
            }
        };
        if *slot {
            errors.at(
                &path,
                format_args!("`{ident}` is listed twice in `on`; list it once"),
            );
            ok = false;
        }
        *slot = true;
    }
    ok.then_some(on)
}

/// Flattens `A | B | C` into its paths; `None` if something else is there.
fn collect_classes(value: &Expr, out: &mut Vec<ExprPath>, errors: &mut Errors) -> Option<()> {
    match ungroup(value) {
        Expr::Binary(binary) if matches!(binary.op, syn::BinOp::BitOr(_)) => {
            collect_classes(&binary.left, out, errors)?;
            collect_classes(&binary.right, out, errors)
        }
        Expr::Paren(paren) => collect_classes(&paren.expr, out, errors),
        Expr::Path(path) if path.qself.is_none() => {
            out.push(path.clone());
            Some(())
        }
        other => {
            errors.at(
                other,
                "`on` takes error classes joined by `|`: `on = Transient`, `on = RateLimited` \
                 or `on = Transient | RateLimited`",
            );
            None
        }
    }
}

fn fn_path(key: &str, value: &Expr, errors: &mut Errors) -> Option<ExprPath> {
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

fn budget_path(value: &Expr, errors: &mut Errors) -> Option<ExprPath> {
    match ungroup(value) {
        Expr::Path(path) if path.qself.is_none() => Some(path.clone()),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => {
            errors.at(
                value,
                format_args!(
                    "`budget` takes the path of a `static RetryBudget`, not a string: \
                     `budget = {}`",
                    lit.value()
                ),
            );
            None
        }
        _ => {
            errors.at(
                value,
                "`budget` takes the path of a `static RetryBudget`, shared by every call \
                 that names it: declare `static RETRY_BUDGET: tenacious::RetryBudget = \
                 tenacious::RetryBudget::new();` and write `budget = RETRY_BUDGET`",
            );
            None
        }
    }
}

fn stats(value: &Expr, errors: &mut Errors) -> Option<StatsArg> {
    match ungroup(value) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(flag),
            ..
        }) => Some(if flag.value {
            StatsArg::Default
        } else {
            StatsArg::Off
        }),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(name),
            ..
        }) => {
            if name.value().trim().is_empty() {
                errors.at(
                    name,
                    "`stats` needs a name to show in the statistics, events and metrics, \
                     like `stats = \"search\"`; write `stats = false` for none",
                );
                return None;
            }
            Some(StatsArg::Named(name.clone()))
        }
        _ => {
            errors.at(
                value,
                "`stats` takes `false` (no statistics, events or metrics for this fn) or \
                 the name of its record: `stats = false` or `stats = \"search\"`; \
                 by default the record is named `module::path::fn_name`",
            );
            None
        }
    }
}

fn nested(value: &Expr, errors: &mut Errors) -> Option<NestedKind> {
    let expected = "expected \"once\" (the default: one attempt inside another retried \
                    call) or \"retry\" (retry as configured even there)";
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Str(lit), ..
    }) = ungroup(value)
    else {
        errors.at(value, format_args!("`nested` takes a string; {expected}"));
        return None;
    };
    match lit.value().as_str() {
        "once" => Some(NestedKind::Once),
        "retry" => Some(NestedKind::Retry),
        other => {
            let message = match closest(other, NESTED) {
                Some(guess) => {
                    format!(
                        "unknown `nested` value \"{other}\"; did you mean \"{guess}\"? {expected}"
                    )
                }
                None => format!("unknown `nested` value \"{other}\"; {expected}"),
            };
            errors.at(lit, message);
            None
        }
    }
}

fn crate_path(value: &Expr, errors: &mut Errors) -> Option<syn::Path> {
    let message = "`crate` takes the path the `tenacious` crate is reachable at, \
                   like `crate = ::tenacious` or `crate = my_facade::tenacious`";
    match ungroup(value) {
        Expr::Path(path) if path.qself.is_none() => Some(path.path.clone()),
        // Quoted, as serde and tokio take it, and as `#[classify(crate = ...)]` does.
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => match lit.parse::<syn::Path>() {
            Ok(path) => Some(path),
            Err(_) => {
                errors.at(lit, message);
                None
            }
        },
        _ => {
            errors.at(value, message);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::{JitterKind, NestedKind, StatsArg, closest, parse};
    use crate::retry::Errors;

    fn errors_for(tokens: proc_macro2::TokenStream) -> Vec<String> {
        let mut errors = Errors::default();
        parse(tokens, &mut errors);
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(err) => err.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn every_key_is_read() {
        let mut errors = Errors::default();
        let args = parse(
            quote!(
                max = 5,
                base = "1.5s",
                cap = "1m",
                jitter = "decorrelated",
                on = RateLimited,
                when = is_retryable,
                max_retry_after = "30s",
                timeout = "2s",
                deadline = "1m",
                budget = crate::BUDGET,
                nested = "retry",
                notify = log::retry,
                stats = "search",
                crate = ::my::tenacious,
            ),
            &mut errors,
        );
        assert!(errors.finish().is_ok());
        assert!(matches!(&args.stats, Some(StatsArg::Named(name)) if name.value() == "search"));
        assert_eq!(args.timeout.unwrap().nanos, 2_000_000_000);
        assert_eq!(args.deadline.unwrap().nanos, 60_000_000_000);
        assert!(args.budget.is_some());
        assert_eq!(args.nested, Some(NestedKind::Retry));
        assert_eq!(args.max, Some(5));
        assert_eq!(args.base.unwrap().nanos, 1_500_000_000);
        assert_eq!(args.cap.unwrap().nanos, 60_000_000_000);
        assert_eq!(args.max_retry_after.unwrap().nanos, 30_000_000_000);
        assert_eq!(args.jitter, Some(JitterKind::Decorrelated));
        let on = args.on.unwrap();
        assert!(!on.transient && on.rate_limited);
        assert!(args.when.is_some() && args.notify.is_some() && args.krate.is_some());
    }

    #[test]
    fn stats_is_a_flag_or_a_name() {
        let read = |tokens| {
            let mut errors = Errors::default();
            let args = parse(tokens, &mut errors);
            (args.stats, errors.finish().err().map(|e| e.to_string()))
        };
        assert!(matches!(
            read(quote!(stats = false)),
            (Some(StatsArg::Off), None)
        ));
        assert!(matches!(
            read(quote!(stats = true)),
            (Some(StatsArg::Default), None)
        ));
        for bad in [quote!(stats = off), quote!(stats = 0), quote!(stats = " ")] {
            let (stats, error) = read(bad.clone());
            assert!(stats.is_none(), "{bad}");
            let error = error.unwrap();
            assert!(error.contains("stats = false"), "{error}");
        }
    }

    #[test]
    fn no_arguments_means_defaults() {
        assert!(errors_for(quote!()).is_empty());
    }

    #[test]
    fn unknown_keys_suggest_the_closest() {
        let errors = errors_for(quote!(maxx = 3, jiter = "full", retries = 2, colour = 1));
        assert!(errors[0].contains("did you mean `max`?"), "{}", errors[0]);
        assert!(
            errors[1].contains("did you mean `jitter`?"),
            "{}",
            errors[1]
        );
        assert!(
            errors[2].contains("`retries = 2` is `max = 3`"),
            "{}",
            errors[2]
        );
        assert!(!errors[3].contains("did you mean"), "{}", errors[3]);
        assert!(errors[3].contains("the keys are"), "{}", errors[3]);
    }

    #[test]
    fn mistakes_in_values_are_all_reported() {
        let errors = errors_for(quote!(
            max = 0,
            max = 3,
            base = "0ms",
            cap = 20,
            jitter = "fulll",
            on = Transient | Fatal,
            when = |e| true,
            notify,
            crate = 1,
        ));
        let expected = [
            "at least 1",
            "duplicate key `max`",
            "tight loop",
            "duration string",
            "did you mean \"full\"",
            "`Fatal` errors are never retried",
            "not a closure",
            "needs a value",
            "`crate` takes the path",
        ];
        assert_eq!(errors.len(), expected.len(), "{errors:#?}");
        for (error, want) in errors.iter().zip(expected) {
            assert!(error.contains(want), "{error:?} should contain {want:?}");
        }
    }

    #[test]
    fn mistakes_in_the_call_safety_keys_are_all_reported() {
        let errors = errors_for(quote!(
            timeout = "0s",
            deadline = 60,
            budget = "BUDGET",
            nested = "retr",
            total_timeout = "1m",
        ));
        let expected = [
            "zero `timeout` times out every attempt",
            "`deadline` takes a duration string",
            "not a string: `budget = BUDGET`",
            "did you mean \"retry\"",
            "did you mean `deadline`?",
        ];
        assert_eq!(errors.len(), expected.len(), "{errors:#?}");
        for (error, want) in errors.iter().zip(expected) {
            assert!(error.contains(want), "{error:?} should contain {want:?}");
        }
        let errors = errors_for(quote!(deadline = "0ms", budget = 1 + 2, nested = once));
        assert!(errors[0].contains("zero `deadline`"), "{errors:?}");
        assert!(errors[1].contains("static RetryBudget"), "{errors:?}");
        assert!(errors[2].contains("`nested` takes a string"), "{errors:?}");
    }

    #[test]
    fn class_names_are_matched_loosely_for_suggestions() {
        assert_eq!(
            closest("transient", &["Transient", "RateLimited"]),
            Some("Transient")
        );
        assert_eq!(
            closest("rate_limited", &["Transient", "RateLimited"]),
            Some("RateLimited")
        );
        assert_eq!(closest("Timeout", &["Transient", "RateLimited"]), None);
    }

    #[test]
    fn classes_joined_by_commas_are_one_error_saying_to_use_a_bar() {
        let errors = errors_for(quote!(on = Transient, RateLimited));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("joined with `|`, not `,`: write `on = Transient | RateLimited`"),
            "{errors:?}"
        );
        let errors = errors_for(quote!(on = RateLimited, transient, max = 3));
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("`transient` reads as a key"),
            "{errors:?}"
        );
        // Not after `on`: an ordinary unknown key.
        let errors = errors_for(quote!(max = 3, Transient));
        assert!(errors[0].contains("unknown key `Transient`"), "{errors:?}");
    }

    #[test]
    fn a_key_with_an_equals_sign_and_no_value_is_reported_on_the_key() {
        for tokens in [quote!(max =), quote!(max = , base = "1s")] {
            let errors = errors_for(tokens);
            assert_eq!(errors, ["`max` needs a value: `max = 3`"]);
        }
    }

    #[test]
    fn a_class_listed_twice_is_an_error() {
        let errors = errors_for(quote!(on = Transient | Transient));
        assert!(errors[0].contains("listed twice"), "{errors:?}");
    }

    #[test]
    fn a_malformed_list_is_one_error() {
        let errors = errors_for(quote!(max = 3 base = "1s"));
        assert_eq!(errors.len(), 1, "{errors:?}");
    }
}
