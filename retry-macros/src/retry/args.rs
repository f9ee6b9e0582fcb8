//! The attribute's `key = value` pairs, read into typed settings.
//!
//! Each value is parsed as an expression first, so one bad value does not
//! hide the keys after it; then each key reads its expression and reports a
//! mistake on the exact tokens, saying what to write instead.
//!
//! Every closed list is one table here: the keys ([`KEYS`]: name, example,
//! reader), and the values of `jitter`, `nested` and `on`, each with the name
//! of the runtime's item the expansion writes for it. `tests/closed_lists.rs`
//! (in the facade) ties each value table to the runtime's own list.
use proc_macro2::TokenStream;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, ExprPath, Ident, Lit, LitStr, Token};

use super::duration;
use crate::common::{self, Errors, or_list, ungroup};

/// One key: its name, what it looks like written correctly, and how its
/// value is read into [`Args`].
struct Key {
    name: &'static str,
    example: &'static str,
    read: fn(&mut Args, &Ident, Expr, &mut Errors),
}

/// The keys, in the order the documentation lists them.
const KEYS: &[Key] = &[
    Key {
        name: "policy",
        example: "policy = OPENAI",
        read: |args, _, value, errors| args.policy = policy(&value, errors),
    },
    Key {
        name: "max",
        example: "max = 3",
        read: |args, _, value, errors| args.max = max(&value, errors),
    },
    Key {
        name: "base",
        example: "base = \"200ms\"",
        read: |args, key, value, errors| args.base = duration_arg(key, &value, errors),
    },
    Key {
        name: "cap",
        example: "cap = \"20s\"",
        read: |args, key, value, errors| args.cap = duration_arg(key, &value, errors),
    },
    Key {
        name: "jitter",
        example: "jitter = \"full\"",
        read: |args, _, value, errors| args.jitter = jitter(&value, errors),
    },
    Key {
        name: "on",
        example: "on = Transient | RateLimited",
        read: |args, _, value, errors| args.on = on(&value, errors),
    },
    Key {
        name: "when",
        example: "when = is_retryable",
        read: |args, _, value, errors| args.when = fn_path("when", &value, errors),
    },
    Key {
        name: "check",
        example: "check = is_complete",
        read: |args, _, value, errors| args.check = fn_path("check", &value, errors),
    },
    Key {
        name: "fallback",
        example: "fallback = cached_answer",
        read: |args, _, value, errors| args.fallback = fn_path("fallback", &value, errors),
    },
    Key {
        name: "max_retry_after",
        example: "max_retry_after = \"120s\"",
        read: |args, key, value, errors| args.max_retry_after = duration_arg(key, &value, errors),
    },
    Key {
        name: "timeout",
        example: "timeout = \"10s\"",
        read: |args, key, value, errors| args.timeout = duration_arg(key, &value, errors),
    },
    Key {
        name: "deadline",
        example: "deadline = \"60s\"",
        read: |args, key, value, errors| args.deadline = duration_arg(key, &value, errors),
    },
    Key {
        name: "first_item",
        example: "first_item = \"10s\"",
        read: |args, key, value, errors| args.first_item = duration_arg(key, &value, errors),
    },
    Key {
        name: "idle",
        example: "idle = \"30s\"",
        read: |args, key, value, errors| args.idle = duration_arg(key, &value, errors),
    },
    Key {
        name: "resume",
        example: "resume = true",
        read: |args, key, value, errors| args.resume = flag(key, &value, errors),
    },
    Key {
        name: "idempotent",
        example: "idempotent = false",
        read: |args, key, value, errors| args.idempotent = flag(key, &value, errors),
    },
    Key {
        name: "budget",
        example: "budget = RETRY_BUDGET",
        read: |args, key, value, errors| args.budget = static_path(key, &value, errors),
    },
    Key {
        name: "breaker",
        example: "breaker = PROVIDER_BREAKER",
        read: |args, key, value, errors| args.breaker = static_path(key, &value, errors),
    },
    Key {
        name: "cooldown",
        example: "cooldown = PROVIDER_COOLDOWN",
        read: |args, key, value, errors| args.cooldown = static_path(key, &value, errors),
    },
    Key {
        name: "throttle",
        example: "throttle = PROVIDER_THROTTLE",
        read: |args, key, value, errors| args.throttle = static_path(key, &value, errors),
    },
    Key {
        name: "guard",
        example: "guard = PROVIDER_GUARD",
        read: |args, key, value, errors| args.guard = static_path(key, &value, errors),
    },
    Key {
        name: "key",
        example: "key = order.id",
        read: |args, _, value, _| args.key = Some(value),
    },
    Key {
        name: "nested",
        example: "nested = \"retry\"",
        read: |args, _, value, errors| args.nested = nested(&value, errors),
    },
    Key {
        name: "notify",
        example: "notify = log_retry",
        read: |args, _, value, errors| args.notify = fn_path("notify", &value, errors),
    },
    Key {
        name: "stats",
        example: "stats = false",
        read: |args, _, value, errors| args.stats = stats(&value, errors),
    },
    Key {
        name: "crate",
        example: "crate = ::tenacious",
        read: |args, _, value, errors| args.krate = errors.handle(common::crate_path(&value)),
    },
];

fn key_names() -> impl Iterator<Item = &'static str> {
    KEYS.iter().map(|key| key.name)
}

/// Keys other retry libraries use (`tenacious-syntax`, shared by the
/// attribute and the config files).
use tenacious_syntax::KEY_ALIASES as ALIASES;

/// One value of a closed list: as the attribute spells it, and the name of
/// the runtime's item the expansion writes for it (a variant of `Jitter` or
/// `Nested`, a constant of `RetryOn`).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Value {
    pub(super) text: &'static str,
    pub(super) runtime: &'static str,
}

/// The jitter strategies: `jitter = "full"` is `Jitter::Full`.
const JITTERS: &[Value] = &[
    Value {
        text: "full",
        runtime: "Full",
    },
    Value {
        text: "equal",
        runtime: "Equal",
    },
    Value {
        text: "decorrelated",
        runtime: "Decorrelated",
    },
    Value {
        text: "none",
        runtime: "None",
    },
];

/// The values `nested` takes (`nested = "once"` is `Nested::Once`), each
/// with what it means.
const NESTED: &[(Value, &str)] = &[
    (
        Value {
            text: "once",
            runtime: "Once",
        },
        "the default: one attempt inside another retried call",
    ),
    (
        Value {
            text: "retry",
            runtime: "Retry",
        },
        "retry as configured even there",
    ),
];

/// The classes `on` accepts: `on = Transient` is `RetryOn::TRANSIENT`.
pub(super) const RETRIED_CLASSES: &[Value] = &[
    Value {
        text: "Transient",
        runtime: "TRANSIENT",
    },
    Value {
        text: "RateLimited",
        runtime: "RATE_LIMITED",
    },
];

/// The classes `on` rejects, each with why and what to do instead.
const NEVER_RETRIED: &[(&str, &str)] = &[
    (
        "Invalid",
        "`Invalid` errors are never retried: the same request fails the same way; \
         return the error so the caller (or the model) can fix the input, or \
         classify the variant `transient` if a retry can succeed (`when` can only \
         narrow `on`, not widen it)",
    ),
    (
        "Fatal",
        "`Fatal` errors are never retried: a human must fix the cause; classify \
         the variant `transient` if a retry can succeed (`when` can only narrow \
         `on`, not widen it)",
    ),
];

/// Every class name, retried or not, as `on` spells them.
fn class_names() -> impl Iterator<Item = &'static str> {
    RETRIED_CLASSES
        .iter()
        .map(|class| class.text)
        .chain(NEVER_RETRIED.iter().map(|(name, _)| *name))
}

/// What `on` takes, each form written by `write`: every retried class
/// alone, then all of them joined by `|`.
fn on_forms(write: impl Fn(&str) -> String) -> String {
    let all = RETRIED_CLASSES
        .iter()
        .map(|class| class.text)
        .collect::<Vec<_>>()
        .join(" | ");
    or_list(
        RETRIED_CLASSES
            .iter()
            .map(|class| write(class.text))
            .chain([write(&all)]),
    )
}

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
        let Some(spec) = KEYS.iter().find(|spec| spec.name == name) else {
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
        (spec.read)(&mut args, &key, value, errors);
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
    KEYS.iter()
        .find(|spec| spec.name == key)
        .map_or("key = value", |spec| spec.example)
}

/// Whether `word` is (or is a likely typo of) an error class, as `on` lists them.
fn is_class(word: &str) -> bool {
    closest(word, class_names()).is_some()
}

fn comma_in_on(name: &str) -> String {
    let all = RETRIED_CLASSES
        .iter()
        .map(|class| class.text)
        .collect::<Vec<_>>()
        .join(" | ");
    format!(
        "classes in `on` are joined with `|`, not `,`: write `on = {all}`; \
         after a comma `{name}` reads as a key"
    )
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
            "first_item" => {
                "a zero `first_item` stalls every attempt before its first item can come; \
                 give the longest wait for it, like `first_item = \"10s\"`, or remove the key"
            }
            "idle" => {
                "a zero `idle` stalls a stream between any two items; give the longest gap \
                 without progress to allow, like `idle = \"30s\"`, or remove the key"
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

fn jitter(value: &Expr, errors: &mut Errors) -> Option<&'static Value> {
    let expected = format!(
        "expected one of {}",
        JITTERS
            .iter()
            .map(|jitter| format!("\"{}\"", jitter.text))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let texts = || JITTERS.iter().map(|jitter| jitter.text);
    let text = match ungroup(value) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => lit.value(),
        Expr::Path(path) if path.path.get_ident().is_some() => {
            let ident = path.path.get_ident().map(ToString::to_string);
            let ident = ident.unwrap_or_default();
            let suggestion = closest(&ident, texts()).unwrap_or(JITTERS[0].text);
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
    if let Some(jitter) = JITTERS.iter().find(|jitter| jitter.text == text) {
        return Some(jitter);
    }
    let message = match closest(&text, texts()) {
        Some(guess) => format!("unknown jitter \"{text}\"; did you mean \"{guess}\"? {expected}"),
        None => format!("unknown jitter \"{text}\"; {expected}"),
    };
    errors.at(value, message);
    None
}

fn on(value: &Expr, errors: &mut Errors) -> Option<Vec<&'static Value>> {
    let mut classes = Vec::new();
    collect_classes(value, &mut classes, errors)?;
    let mut on: Vec<&'static Value> = Vec::new();
    let mut ok = true;
    for path in classes {
        let Some(ident) = path.path.segments.last().map(|s| s.ident.to_string()) else {
            continue;
        };
        let Some(class) = RETRIED_CLASSES.iter().find(|class| class.text == ident) else {
            ok = false;
            if let Some((_, why)) = NEVER_RETRIED.iter().find(|(name, _)| *name == ident) {
                errors.at(&path, why);
                continue;
            }
            let takes = on_forms(|form| format!("`{form}`"));
            let message = match closest(&ident, class_names()) {
                Some(guess) if RETRIED_CLASSES.iter().any(|class| class.text == guess) => {
                    format!(
                        "unknown class `{ident}` in `on`; did you mean `{guess}`? `on` takes {takes}"
                    )
                }
                _ => format!("unknown class `{ident}` in `on`; `on` takes {takes}"),
            };
            errors.at(&path, message);
            continue;
        };
        if on.contains(&class) {
            errors.at(
                &path,
                format_args!("`{ident}` is listed twice in `on`; list it once"),
            );
            ok = false;
        } else {
            on.push(class);
        }
    }
    // In the table's order, so the expansion does not depend on the user's.
    on.sort_by_key(|class| RETRIED_CLASSES.iter().position(|known| known == *class));
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
                format_args!(
                    "`on` takes error classes joined by `|`: {}",
                    on_forms(|form| format!("`on = {form}`"))
                ),
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

impl Args {
    /// The shared `static`s the attribute names, by key and as the
    /// `Policy` builder of that name takes them, in the order the builders
    /// are written.
    pub(super) fn statics(&self) -> impl Iterator<Item = (&'static str, &ExprPath)> {
        [
            ("budget", &self.budget),
            ("breaker", &self.breaker),
            ("cooldown", &self.cooldown),
            ("throttle", &self.throttle),
            ("guard", &self.guard),
        ]
        .into_iter()
        .filter_map(|(name, path)| path.as_ref().map(|path| (name, path)))
    }
}

/// What `budget`, `breaker`, `cooldown`, `throttle` and `guard` take, as
/// their errors say it: a shared `static`, `what`, declared as `declare`
/// shows.
pub(super) struct SharedStatic {
    pub(super) what: &'static str,
    pub(super) declare: &'static str,
}

/// The shared `static` the key `key` takes.
pub(super) fn shared_static(key: &str) -> SharedStatic {
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
        _ => (
            "a `static` whose type implements `Guard`",
            "static PROVIDER_GUARD: MyGuard = MyGuard::new();",
        ),
    };
    SharedStatic { what, declare }
}

/// The value of `budget`, `breaker`, `cooldown`, `throttle` or `guard`: the
/// path of the shared `static` it takes.
fn static_path(key: &Ident, value: &Expr, errors: &mut Errors) -> Option<ExprPath> {
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

fn policy(value: &Expr, errors: &mut Errors) -> Option<PolicyArg> {
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
            if let Some(bad) = text.chars().find(|c| !valid_name_char(*c)) {
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

/// Whether `c` may be in a policy's name: the rule `tenacious::config`
/// reads names by (`valid_name_char` in `tenacious-config/src/read.rs`).
fn valid_name_char(c: char) -> bool {
    !c.is_whitespace() && !c.is_control()
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

fn nested(value: &Expr, errors: &mut Errors) -> Option<&'static Value> {
    let expected = format!(
        "expected {}",
        or_list(
            NESTED
                .iter()
                .map(|(nested, about)| format!("\"{}\" ({about})", nested.text))
        )
    );
    let Expr::Lit(syn::ExprLit {
        lit: Lit::Str(lit), ..
    }) = ungroup(value)
    else {
        errors.at(value, format_args!("`nested` takes a string; {expected}"));
        return None;
    };
    let text = lit.value();
    if let Some((nested, _)) = NESTED.iter().find(|(nested, _)| nested.text == text) {
        return Some(nested);
    }
    let message = match closest(&text, NESTED.iter().map(|(nested, _)| nested.text)) {
        Some(guess) => {
            format!("unknown `nested` value \"{text}\"; did you mean \"{guess}\"? {expected}")
        }
        None => format!("unknown `nested` value \"{text}\"; {expected}"),
    };
    errors.at(lit, message);
    None
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::{
        Errors, JITTERS, KEYS, NESTED, NEVER_RETRIED, RETRIED_CLASSES, StatsArg, Value, closest,
        example, parse,
    };

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
