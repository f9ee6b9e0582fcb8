//! Checks the parsed attributes against the type and builds the model
//! [`super::generate`] works from. Every mistake is collected, not just the
//! first, and each is spanned on the token to change.
use darling::Error;
use proc_macro2::Span;
use syn::{Data, DeriveInput, Expr, ExprLit, Fields, Ident, Lit};

use super::hint;
use super::parse::{self, Attrs, Class, WithKey};
use crate::common::CratePath;

mod class;
mod fields;
mod model;
mod with;

use class::{one_class, reject_value};
use fields::{refused_field, retry_after_field, retry_after_wrong_class};
pub(crate) use model::{Answer, Body, Case, CaseLimits, Derive, FieldRef};
use with::{under_enum_with, with_case};

/// Every darling error found so far.
type Errors = crate::common::Errors<Error>;

/// Where an attribute sits, for messages and for what it may hold.
#[derive(Clone, Copy)]
enum Position {
    Struct,
    /// `enum_has_class`: the enum's own attribute carries a class, which is
    /// reported once there; its variants' missing classes are that mistake.
    Variant {
        enum_has_class: bool,
    },
}

impl Position {
    fn noun(self) -> &'static str {
        match self {
            Self::Struct => "a struct",
            Self::Variant { .. } => "a variant",
        }
    }
}

/// Validates `input`. The crate path comes back even on error so the
/// fallback impl names the same trait the real one would.
pub(crate) fn validate(input: &DeriveInput) -> (CratePath, darling::Result<Derive<'_>>) {
    let mut errors = Errors::default();
    let attrs = errors.handle(Attrs::read(&input.attrs));
    let krate = attrs
        .as_ref()
        .and_then(|attrs| attrs.krate.as_ref())
        .map(|krate| krate.path.clone())
        .unwrap_or_default();

    let body = match &input.data {
        Data::Union(data) => {
            errors.push(
                Error::custom(format!(
                    "`Classify` cannot be derived for a union; derive it on an enum or a struct, \
                     or implement `Classify` for `{}` by hand",
                    input.ident
                ))
                .with_span(&data.union_token),
            );
            None
        }
        Data::Enum(data) => {
            if let Some(attrs) = &attrs {
                reject_class_keys(attrs, &input.ident, &mut errors);
            }
            let enum_has_class = attrs
                .as_ref()
                .is_some_and(|attrs| Class::all().any(|class| attrs.word(class).is_present()));
            let enum_with = attrs.as_ref().and_then(|attrs| attrs.with.clone());
            let mut first_refused: Option<&Ident> = None;
            let cases = data
                .variants
                .iter()
                .filter_map(|variant| {
                    let attrs = errors.handle(Attrs::read(&variant.attrs))?;
                    if let Some(key) = attrs.word(Class::Refused).key {
                        match first_refused {
                            Some(first) => errors.push(
                                Error::custom(format!(
                                    "only one variant can be `refused`, and `{first}` already is; \
                                     remove this one (the `Refused`'s `reason()` says which \
                                     guard refused)"
                                ))
                                .with_span(&key),
                            ),
                            None => first_refused = Some(&variant.ident),
                        }
                    }
                    if let Some(krate) = &attrs.krate {
                        errors.push(
                            Error::custom(format!(
                                "`crate` goes on the type: write `#[classify(crate = ...)]` above `enum {}`",
                                input.ident
                            ))
                            .with_span(&krate.key),
                        );
                    }
                    case(
                        &variant.ident,
                        Position::Variant { enum_has_class },
                        &attrs,
                        &variant.fields,
                        enum_with.as_ref(),
                        &mut errors,
                    )
                })
                .collect();
            Some(Body::Enum(cases))
        }
        Data::Struct(data) => attrs.as_ref().and_then(|attrs| {
            case(
                &input.ident,
                Position::Struct,
                attrs,
                &data.fields,
                None,
                &mut errors,
            )
            .map(Body::Struct)
        }),
    };

    let result = match (errors.finish(), body) {
        (Ok(()), Some(body)) => Ok(Derive {
            input,
            krate: krate.clone(),
            body,
        }),
        (Err(errors), _) => Err(errors),
        // Every path that drops a part reports why; this only guards that.
        (Ok(()), None) => {
            Err(Error::custom("`Classify` cannot be derived here").with_span(&input.ident))
        }
    };
    (krate, result)
}

/// An enum's own attribute only chooses the crate, or the `with` fn that
/// classifies every variant: classes and hints are per variant, so the enum
/// cannot silently classify variants nobody looked at.
fn reject_class_keys(attrs: &Attrs, name: &Ident, errors: &mut Errors) {
    for class in Class::all() {
        if let Some(key) = attrs.word(class).key {
            let message = if class == Class::Refused {
                format!(
                    "`refused` goes on one variant, the one a guard's refusal becomes: move it \
                     onto the variant of `{name}` that holds the `tenacious::Refused`"
                )
            } else {
                format!(
                    "on an enum the class goes on each variant: move `{}` onto the variants of `{name}`",
                    class.key()
                )
            };
            errors.push(Error::custom(message).with_span(&key));
        }
    }
    if let Some(hint) = &attrs.hint {
        let message = if attrs.with.is_some() {
            format!(
                "the fn named by `with` gives the hint of every variant of `{name}`: remove \
                 `hint`, and return it from the fn with `Classified::with_hint`"
            )
        } else {
            format!("on an enum `hint` goes on each variant: move it onto the variants of `{name}`")
        };
        errors.push(Error::custom(message).with_span(&hint.0));
    }
    if let Some(key) = attrs.retry_after.key {
        errors.push(retry_after_not_on_field(key));
    }
    for (key, span) in limit_keys(attrs) {
        errors.push(
            Error::custom(format!(
                "on an enum `{key}` goes on each variant it is for: move it onto the variants \
                 of `{name}`"
            ))
            .with_span(&span),
        );
    }
}

/// The `max`, `base` and `not_sent` keys written, with their spans.
fn limit_keys(attrs: &Attrs) -> Vec<(&'static str, Span)> {
    let mut keys = Vec::new();
    if let Some(max) = attrs.max {
        keys.push(("max", max.key));
    }
    if let Some(base) = attrs.base {
        keys.push(("base", base.key));
    }
    if let Some(key) = attrs.not_sent.key {
        keys.push(("not_sent", key));
    }
    keys
}

fn retry_after_not_on_field(key: Span) -> Error {
    Error::custom(
        "`retry_after` marks a field: put `#[classify(retry_after)]` on the `Duration` or \
         `Option<Duration>` field that holds the server's hint",
    )
    .with_span(&key)
}

/// Checks one variant (or the struct) and its fields; `enum_with` is the
/// enum's own `with`, which answers for every variant.
fn case<'a>(
    name: &'a Ident,
    position: Position,
    attrs: &Attrs,
    fields: &'a Fields,
    enum_with: Option<&WithKey>,
    errors: &mut Errors,
) -> Option<Case<'a>> {
    let before = errors.len();
    for class in Class::all() {
        reject_value(attrs.word(class), class.key(), errors);
    }
    reject_value(attrs.not_sent, "not_sent", errors);
    if let Some(key) = attrs.retry_after.key {
        errors.push(retry_after_not_on_field(key));
    }
    let limits = CaseLimits::of(attrs);
    if let Some(with) = enum_with {
        return under_enum_with(name, attrs, fields, with, errors, before);
    }
    if let Some(with) = &attrs.with {
        return with_case(name, position, attrs, fields, with, errors, before);
    }

    let class = one_class(name, position, attrs, errors);
    let hint = attrs.hint.as_ref().and_then(|value| match &value.0 {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => match hint::parse(lit, name, fields) {
            Ok(hint) => Some(hint),
            Err(message) => {
                errors.push(Error::custom(message).with_span(lit));
                None
            }
        },
        other => {
            errors.push(Error::custom(parse::HINT_NEEDS_STRING).with_span(other));
            None
        }
    });
    let retry_after = retry_after_field(fields, errors);

    let answer = match class? {
        Class::Transparent => {
            if let Some(value) = &attrs.hint {
                errors.push(
                    Error::custom(format!(
                        "`transparent` takes the hint from the inner error; remove `hint` \
                         or classify `{name}` itself"
                    ))
                    .with_span(&value.0),
                );
            }
            let key = attrs
                .word(Class::Transparent)
                .key
                .unwrap_or_else(Span::call_site);
            if let Some(field) = &retry_after {
                errors.push(retry_after_wrong_class(name, Class::Transparent, field.1));
            }
            let mut members = fields.iter().zip(fields.members());
            match (members.next(), members.next()) {
                (Some((field, member)), None) => Answer::Transparent(FieldRef {
                    member,
                    ty: &field.ty,
                }),
                _ => {
                    let count = match fields.len() {
                        0 => "no fields".to_owned(),
                        n => format!("{n} fields"),
                    };
                    errors.push(
                        Error::custom(format!(
                            "`transparent` forwards to the only field, but `{name}` has {count}; \
                             give it exactly one field or choose a class such as `fatal`"
                        ))
                        .with_span(&key),
                    );
                    return None;
                }
            }
        }
        Class::Refused => {
            let key = attrs
                .word(Class::Refused)
                .key
                .unwrap_or_else(Span::call_site);
            if let Position::Struct = position {
                errors.push(
                    Error::custom(format!(
                        "`refused` goes on a variant: it marks the variant of an error enum that \
                         a guard's refusal becomes, and a struct has no other variant for its \
                         attempts' errors; make `{name}` an enum with a \
                         `#[classify(refused)] Refused(tenacious::Refused)` variant, or return \
                         `tenacious::Refused` itself"
                    ))
                    .with_span(&key),
                );
                return None;
            }
            if let Some(value) = &attrs.hint {
                errors.push(
                    Error::custom(format!(
                        "`refused` takes the hint from the `Refused` it holds; remove `hint` \
                         or classify `{name}` itself"
                    ))
                    .with_span(&value.0),
                );
            }
            if let Some(field) = &retry_after {
                errors.push(retry_after_wrong_class(name, Class::Refused, field.1));
            }
            for (key, span) in limit_keys(attrs) {
                let why = if key == "not_sent" {
                    "a refusal is `not_sent` already: no attempt was made"
                } else {
                    "a guard's refusal ends the call, so no limit of its own is read"
                };
                errors.push(
                    Error::custom(format!(
                        "`{key}` has no effect on `refused`: {why}; remove it"
                    ))
                    .with_span(&span),
                );
            }
            Answer::Refused(refused_field(name, key, fields, errors)?)
        }
        Class::Error(class) => {
            let retry_after = match retry_after {
                Some((_, key)) if class.key != parse::HINTED => {
                    errors.push(retry_after_wrong_class(name, Class::Error(class), key));
                    None
                }
                other => other.map(|(field, _)| field),
            };
            if !RETRIED.contains(&class.key) {
                for (key, span) in limit_keys(attrs) {
                    errors.push(limit_wrong_class(name, class.key, key, span));
                }
            }
            Answer::Own {
                class,
                retry_after,
                hint,
            }
        }
    };
    (errors.len() == before).then_some(Case {
        name,
        answer,
        limits,
    })
}

/// The classes a policy may retry: only their cases' `max`, `base` and
/// `not_sent` are ever read.
const RETRIED: [&str; 2] = ["transient", parse::HINTED];

fn limit_wrong_class(name: &Ident, class: &str, key: &str, span: Span) -> Error {
    let what = match key {
        "max" => "the call's attempts",
        "base" => "the backoff before a retry",
        _ => "whether a call that is not idempotent may retry",
    };
    Error::custom(format!(
        "`{key}` sets {what} after this error, but `{name}` is `{class}`, which is never \
         retried; remove `{key}`, or classify `{name}` `transient` or `rate_limited`"
    ))
    .with_span(&span)
}

/// A path as the user wrote it, for messages: `errors::by_body`.
fn path_text(path: &syn::ExprPath) -> String {
    quote::ToTokens::to_token_stream(path)
        .to_string()
        .replace(" :: ", "::")
        .replace(":: ", "::")
}
