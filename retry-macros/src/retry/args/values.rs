//! The values of the closed lists, `jitter`, `nested` and `on`: one table
//! each, every value with the name of the runtime's item the expansion
//! writes for it, and their readers.
use syn::{Expr, ExprPath, Lit};

use super::closest;
use crate::common::{Errors, or_list, ungroup};

/// One value of a closed list: as the attribute spells it, and the name of
/// the runtime's item the expansion writes for it (a variant of `Jitter` or
/// `Nested`, a constant of `RetryOn`).
#[derive(Debug, PartialEq, Eq)]
pub(in crate::retry) struct Value {
    pub(in crate::retry) text: &'static str,
    pub(in crate::retry) runtime: &'static str,
}

/// The jitter strategies: `jitter = "full"` is `Jitter::Full`.
pub(super) const JITTERS: &[Value] = &[
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
pub(super) const NESTED: &[(Value, &str)] = &[
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
pub(in crate::retry) const RETRIED_CLASSES: &[Value] = &[
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
pub(super) const NEVER_RETRIED: &[(&str, &str)] = &[
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
pub(super) fn class_names() -> impl Iterator<Item = &'static str> {
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

/// Whether `word` is (or is a likely typo of) an error class, as `on` lists them.
pub(super) fn is_class(word: &str) -> bool {
    closest(word, class_names()).is_some()
}

pub(super) fn comma_in_on(name: &str) -> String {
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

pub(super) fn jitter(value: &Expr, errors: &mut Errors) -> Option<&'static Value> {
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

pub(super) fn on(value: &Expr, errors: &mut Errors) -> Option<Vec<&'static Value>> {
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

pub(super) fn nested(value: &Expr, errors: &mut Errors) -> Option<&'static Value> {
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
