//! The attribute's `key = value` pairs, read into typed settings.
//!
//! Each value is parsed as an expression first, so one bad value does not
//! hide the keys after it; then each key reads its expression and reports a
//! mistake on the exact tokens, saying what to write instead.
//!
//! The keys are one table, `tenacious-syntax`'s ([`KEYS`]: name, example,
//! what a config file makes of it), which config files read too; each is
//! read here by its [`reader`]. The values of `jitter`, `nested` and `on`
//! are a table each, with the name of the runtime's item the expansion
//! writes for each value. `tests/closed_lists.rs` (in the facade) ties each
//! value table to the runtime's own list.
use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, ExprPath, Ident, Lit, LitStr, Token};
use tenacious_syntax::keys::{self, KEYS};
use tenacious_syntax::rules;

use super::duration;
use crate::common::{self, Errors, ungroup};

mod paths;
mod values;

pub(super) use paths::{SharedStatic, shared_static};
use paths::{fn_path, policy, static_path};
pub(super) use values::{RETRIED_CLASSES, Value};
use values::{comma_in_on, is_class, jitter, nested, on};

/// How a key's value is read into [`Args`].
type Read = fn(&mut Args, &Ident, Expr, &mut Errors);

/// How each key of the table is read (the table, its names, order and
/// examples, is `tenacious-syntax`'s, which a config file's policy reads
/// too); `None` for a name that is no key.
fn reader(name: &str) -> Option<Read> {
    let read: Read = match name {
        "policy" => |args, _, value, errors| args.policy = policy(&value, errors),
        "max" => |args, _, value, errors| args.max = max(&value, errors),
        "base" => |args, key, value, errors| args.base = duration_arg(key, &value, errors),
        "cap" => |args, key, value, errors| args.cap = duration_arg(key, &value, errors),
        "jitter" => |args, _, value, errors| args.jitter = jitter(&value, errors),
        "on" => |args, _, value, errors| args.on = on(&value, errors),
        "when" => |args, _, value, errors| args.when = fn_path("when", &value, errors),
        "check" => |args, _, value, errors| args.check = fn_path("check", &value, errors),
        "fallback" => |args, _, value, errors| args.fallback = fn_path("fallback", &value, errors),
        "max_retry_after" => {
            |args, key, value, errors| args.max_retry_after = duration_arg(key, &value, errors)
        }
        "timeout" => |args, key, value, errors| args.timeout = duration_arg(key, &value, errors),
        "deadline" => |args, key, value, errors| args.deadline = duration_arg(key, &value, errors),
        "first_item" => {
            |args, key, value, errors| args.first_item = duration_arg(key, &value, errors)
        }
        "idle" => |args, key, value, errors| args.idle = duration_arg(key, &value, errors),
        "resume" => |args, key, value, errors| args.resume = flag(key, &value, errors),
        "idempotent" => |args, key, value, errors| args.idempotent = flag(key, &value, errors),
        "budget" => |args, key, value, errors| args.budget = static_path(key, &value, errors),
        "breaker" => |args, key, value, errors| args.breaker = static_path(key, &value, errors),
        "cooldown" => |args, key, value, errors| args.cooldown = static_path(key, &value, errors),
        "throttle" => |args, key, value, errors| args.throttle = static_path(key, &value, errors),
        "concurrency" => {
            |args, key, value, errors| args.concurrency = static_path(key, &value, errors)
        }
        "guard" => |args, key, value, errors| args.guard = static_path(key, &value, errors),
        "key" => |args, _, value, _| args.key = Some(value),
        "nested" => |args, _, value, errors| args.nested = nested(&value, errors),
        "notify" => |args, _, value, errors| args.notify = fn_path("notify", &value, errors),
        "stats" => |args, _, value, errors| args.stats = stats(&value, errors),
        "crate" => |args, _, value, errors| args.krate = errors.handle(common::crate_path(&value)),
        _ => return None,
    };
    Some(read)
}

fn key_names() -> impl Iterator<Item = &'static str> {
    KEYS.iter().map(|key| key.name)
}

/// Keys other retry libraries use (`tenacious-syntax`, shared by the
/// attribute and the config files).
use tenacious_syntax::KEY_ALIASES as ALIASES;

/// A duration setting: its value, the literal it came from and its key.
#[derive(Debug, Clone)]
pub(super) struct DurationArg {
    pub(super) nanos: u64,
    pub(super) lit: LitStr,
    pub(super) key: Ident,
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

/// What `policy` names.
#[derive(Debug, Clone)]
pub(super) enum PolicyArg {
    /// `policy = PATH`: a `const` or `static` `Policy`, read at compile
    /// time.
    Path(ExprPath),
    /// `policy = "name"`: the policy of that name in the set
    /// `tenacious::config::load` keeps, looked up at run time.
    Named(LitStr),
}

/// The settings of one `#[retry(...)]`; `None` means the runtime default.
#[derive(Default)]
pub(super) struct Args {
    /// `policy = PATH` or `policy = "name"`: the policy the other keys
    /// override.
    pub(super) policy: Option<PolicyArg>,
    pub(super) max: Option<u32>,
    pub(super) base: Option<DurationArg>,
    pub(super) cap: Option<DurationArg>,
    pub(super) max_retry_after: Option<DurationArg>,
    pub(super) timeout: Option<DurationArg>,
    pub(super) deadline: Option<DurationArg>,
    /// A retried stream's time to its first content item.
    pub(super) first_item: Option<DurationArg>,
    /// A retried stream's idle limit between items.
    pub(super) idle: Option<DurationArg>,
    /// `resume = true|false`, with its key.
    pub(super) resume: Option<(Ident, bool)>,
    /// `idempotent = true|false`, with its key.
    pub(super) idempotent: Option<(Ident, bool)>,
    pub(super) budget: Option<ExprPath>,
    /// `breaker = PATH`: a `static Breaker`.
    pub(super) breaker: Option<ExprPath>,
    /// `cooldown = PATH`: a `static Cooldown`.
    pub(super) cooldown: Option<ExprPath>,
    /// `throttle = PATH`: a `static Throttle`.
    pub(super) throttle: Option<ExprPath>,
    /// `concurrency = PATH`: a `static Concurrency`.
    pub(super) concurrency: Option<ExprPath>,
    /// `guard = PATH`: a `static` implementing `Guard`.
    pub(super) guard: Option<ExprPath>,
    /// `key = EXPR`: the call's idempotency key, from its arguments.
    pub(super) key: Option<Expr>,
    pub(super) nested: Option<&'static Value>,
    pub(super) jitter: Option<&'static Value>,
    /// The retried classes, in [`RETRIED_CLASSES`]' order, each once.
    pub(super) on: Option<Vec<&'static Value>>,
    pub(super) when: Option<ExprPath>,
    /// `check = PATH`: a `fn(&T) -> Result<(), E>` on each success.
    pub(super) check: Option<ExprPath>,
    /// `fallback = PATH`: a `fn(Failure<E>) -> R` (or `fn(E) -> R`) that
    /// answers a give-up.
    pub(super) fallback: Option<ExprPath>,
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
        let Some((spec, read)) = keys::find(&name).zip(reader(&name)) else {
            if stray_class {
                // `on = Transient, RateLimited`: the comma ended `on`.
                errors.at(&key, comma_in_on(&name));
            } else {
                errors.at(&key, unknown_key(&name));
            }
            continue;
        };
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
                format_args!("`{name}` needs a value: `{}`", spec.example),
            );
            continue;
        };
        read(&mut args, &key, value, errors);
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
pub(super) fn example(key: &str) -> &'static str {
    keys::find(key).map_or("key = value", |spec| spec.example)
}

fn unknown_key(name: &str) -> String {
    let listed = key_names().collect::<Vec<_>>().join(", ");
    if let Some((_, key, why)) = ALIASES
        .iter()
        .find(|(aliases, _, _)| aliases.contains(&name))
    {
        return format!(
            "unknown key `{name}`; did you mean `{key}`? ({why}); the keys are: {listed}"
        );
    }
    match closest(name, key_names()) {
        Some(key) => format!("unknown key `{name}`; did you mean `{key}`? the keys are: {listed}"),
        None => format!("unknown key `{name}`; the keys are: {listed}"),
    }
}

/// The candidate `word` is most likely a typo of, if any is close enough
/// (the grammar `tenacious::config` suggests with too).
pub(super) use tenacious_syntax::closest;

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

/// A `true` or `false`, with its key.
fn flag(key: &Ident, value: &Expr, errors: &mut Errors) -> Option<(Ident, bool)> {
    let name = key.unraw().to_string();
    if let Expr::Lit(syn::ExprLit {
        lit: Lit::Bool(flag),
        ..
    }) = ungroup(value)
    {
        return Some((key.clone(), flag.value));
    }
    errors.at(
        value,
        format_args!("`{name}` takes `true` or `false`: `{}`", example(&name)),
    );
    None
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
        let why = rules::zero_duration(&name).unwrap_or("a zero duration is refused here");
        errors.at(lit, why);
        return None;
    }
    Some(DurationArg {
        nanos,
        lit: lit.clone(),
        key: key.clone(),
    })
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

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::values::{JITTERS, NESTED, NEVER_RETRIED};
    use super::{Errors, KEYS, RETRIED_CLASSES, StatsArg, Value, closest, example, parse};

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
        assert_eq!(args.nested.map(|nested| nested.runtime), Some("Retry"));
        assert_eq!(args.max, Some(5));
        assert_eq!(args.base.unwrap().nanos, 1_500_000_000);
        assert_eq!(args.cap.unwrap().nanos, 60_000_000_000);
        assert_eq!(args.max_retry_after.unwrap().nanos, 30_000_000_000);
        assert_eq!(
            args.jitter.map(|jitter| jitter.runtime),
            Some("Decorrelated")
        );
        let on: Vec<&str> = args.on.unwrap().iter().map(|class| class.runtime).collect();
        assert_eq!(on, ["RATE_LIMITED"]);
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
    fn every_key_of_the_table_has_a_reader() {
        for key in KEYS {
            assert!(super::reader(key.name).is_some(), "{}", key.name);
        }
        assert!(super::reader("maxx").is_none());
    }

    #[test]
    fn every_key_has_an_example_that_reads_cleanly() {
        for key in KEYS {
            assert_eq!(example(key.name), key.example);
            let tokens: proc_macro2::TokenStream = key.example.parse().unwrap();
            let mut errors = Errors::default();
            parse(tokens, &mut errors);
            assert!(errors.finish().is_ok(), "{}", key.example);
        }
    }

    #[test]
    fn every_value_of_a_closed_list_reads_as_itself() {
        let values = JITTERS.iter().map(|jitter| ("jitter", jitter));
        let values = values.chain(NESTED.iter().map(|(nested, _)| ("nested", nested)));
        for (key, value) in values {
            let key = syn::Ident::new(key, proc_macro2::Span::call_site());
            let text = value.text;
            let mut errors = Errors::default();
            let args = parse(quote!(#key = #text), &mut errors);
            assert!(errors.finish().is_ok(), "{key} = {text:?}");
            let read: Option<&Value> = args.jitter.or(args.nested);
            assert_eq!(read, Some(value));
        }
        let mut errors = Errors::default();
        let args = parse(quote!(on = RateLimited | Transient), &mut errors);
        assert!(errors.finish().is_ok());
        let on: Vec<&str> = args.on.unwrap().iter().map(|class| class.runtime).collect();
        assert_eq!(on, ["TRANSIENT", "RATE_LIMITED"], "in the table's order");
    }

    /// Each table against the runtime (a dev-dependency here): the same
    /// values, spelled as the runtime's `as_str` spells them and named as
    /// its variants are. The lists of the runtime's values go through an
    /// exhaustive `match`, so a new variant stops this test compiling.
    #[test]
    fn the_value_tables_are_the_runtimes_values() {
        use tenacious::{ErrorClass, Jitter, Nested};

        fn table(values: &[&Value]) -> Vec<(String, String)> {
            let mut values: Vec<_> = values
                .iter()
                .map(|value| (value.text.to_owned(), value.runtime.to_owned()))
                .collect();
            values.sort();
            values
        }
        fn runtime<T: std::fmt::Debug + Copy>(
            values: &[T],
            as_str: fn(T) -> &'static str,
        ) -> Vec<(String, String)> {
            let mut values: Vec<_> = values
                .iter()
                .map(|value| (as_str(*value).to_owned(), format!("{value:?}")))
                .collect();
            values.sort();
            values
        }

        let jitters = [
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Decorrelated,
        ];
        for jitter in jitters {
            match jitter {
                Jitter::None | Jitter::Full | Jitter::Equal | Jitter::Decorrelated => {}
            }
        }
        assert_eq!(
            table(&JITTERS.iter().collect::<Vec<_>>()),
            runtime(&jitters, Jitter::as_str)
        );

        let nested = [Nested::Once, Nested::Retry];
        for value in nested {
            match value {
                Nested::Once | Nested::Retry => {}
            }
        }
        assert_eq!(
            table(&NESTED.iter().map(|(value, _)| value).collect::<Vec<_>>()),
            runtime(&nested, Nested::as_str)
        );

        let (retried, never): (Vec<ErrorClass>, Vec<ErrorClass>) = ErrorClass::ALL
            .into_iter()
            .partition(|class| class.is_retryable());
        let names = |classes: &[ErrorClass]| -> Vec<String> {
            classes.iter().map(|class| format!("{class:?}")).collect()
        };
        let retried_texts: Vec<&str> = RETRIED_CLASSES.iter().map(|class| class.text).collect();
        assert_eq!(retried_texts, names(&retried));
        let never_texts: Vec<&str> = NEVER_RETRIED.iter().map(|(name, _)| *name).collect();
        assert_eq!(never_texts, names(&never));
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
            "not a string: a guard is a `static`",
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
        let classes = ["Transient", "RateLimited"];
        assert_eq!(closest("transient", classes), Some("Transient"));
        assert_eq!(closest("rate_limited", classes), Some("RateLimited"));
        assert_eq!(closest("Timeout", classes), None);
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
