//! Checks the parsed attributes against the type and builds the model
//! [`super::generate`] works from. Every mistake is collected, not just the
//! first, and each is spanned on the token to change.
use darling::Error;
use proc_macro2::Span;
use syn::{Data, DeriveInput, Expr, ExprLit, Fields, Ident, Lit, Member, Type};

use super::hint::{self, Hint};
use super::parse::{self, Attrs, Class, ErrorClassKey, WithKey, Word};
use crate::common::{CratePath, or_list};

/// Every darling error found so far.
type Errors = crate::common::Errors<Error>;

/// A derive input that passed every check.
#[derive(Debug)]
pub(crate) struct Derive<'a> {
    pub(crate) input: &'a DeriveInput,
    pub(crate) krate: CratePath,
    pub(crate) body: Body<'a>,
}

#[derive(Debug)]
pub(crate) enum Body<'a> {
    Enum(Vec<Case<'a>>),
    Struct(Case<'a>),
}

/// One variant, or the struct.
#[derive(Debug)]
pub(crate) struct Case<'a> {
    pub(crate) name: &'a Ident,
    pub(crate) answer: Answer<'a>,
    /// What the case sets for the call beyond the policy (`max`, `base`,
    /// `not_sent`); empty where they are not allowed.
    pub(crate) limits: CaseLimits,
}

/// `max`, `base` and `not_sent` of one case, as written.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CaseLimits {
    pub(crate) max: Option<u32>,
    /// Nanoseconds.
    pub(crate) base: Option<u64>,
    pub(crate) not_sent: bool,
}

impl CaseLimits {
    fn of(attrs: &Attrs) -> Self {
        Self {
            max: attrs.max.map(|max| max.max),
            base: attrs.base.map(|base| base.nanos),
            not_sent: attrs.not_sent.is_present(),
        }
    }

    pub(crate) fn sets_limits(self) -> bool {
        self.max.is_some() || self.base.is_some()
    }
}

#[derive(Debug)]
pub(crate) enum Answer<'a> {
    /// The case answers for itself.
    Own {
        class: &'static ErrorClassKey,
        retry_after: Option<FieldRef<'a>>,
        hint: Option<Hint>,
    },
    /// Every method forwards to this field.
    Transparent(FieldRef<'a>),
    /// The variant a guard's refusal becomes: `classify`, `retry_after` and
    /// `hint` forward to this field, the `Refused`; `variant()` is the
    /// variant's own name.
    Refused(FieldRef<'a>),
    /// `with = path` on a variant: `path(&field)` of its only field answers
    /// `classify`, `retry_after`, `hint` and `signals`; `variant()` is the
    /// variant's own name.
    With {
        path: syn::ExprPath,
        field: FieldRef<'a>,
    },
    /// `with = path` on the type: `path(self)` answers as `With` does, for
    /// the struct or every variant of the enum.
    WithSelf(syn::ExprPath),
}

#[derive(Debug, Clone)]
pub(crate) struct FieldRef<'a> {
    pub(crate) member: Member,
    pub(crate) ty: &'a Type,
}

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

/// A variant of an enum whose own `with` classifies every variant: it
/// says nothing of itself.
fn under_enum_with<'a>(
    name: &'a Ident,
    attrs: &Attrs,
    fields: &'a Fields,
    with: &WithKey,
    errors: &mut Errors,
    before: usize,
) -> Option<Case<'a>> {
    let path = path_text(&with.path);
    let why = format!("the enum's `with = {path}` classifies every variant");
    for (class, key) in attrs.classes_in_order() {
        errors.push(
            Error::custom(format!(
                "{why}: remove `{}` from `{name}`, or remove `with` from the enum and give \
                 each variant its class",
                class.key()
            ))
            .with_span(&key),
        );
    }
    if let Some(own) = &attrs.with {
        errors.push(
            Error::custom(format!(
                "{why}: remove this `with` from `{name}`, or the enum's"
            ))
            .with_span(&own.key),
        );
    }
    if let Some(hint) = &attrs.hint {
        errors.push(
            Error::custom(format!(
                "{why}, its hint included: remove `hint` from `{name}`, and return it from \
                 `{path}` with `Classified::with_hint`"
            ))
            .with_span(&hint.0),
        );
    }
    if let Some((_, key)) = retry_after_field(fields, errors) {
        errors.push(
            Error::custom(format!(
                "{why}, its retry-after included: remove `#[classify(retry_after)]`, and \
                 return the wait from `{path}` with `Classified::with_retry_after`"
            ))
            .with_span(&key),
        );
    }
    (errors.len() == before).then(|| Case {
        name,
        answer: Answer::WithSelf(with.path.clone()),
        limits: CaseLimits::of(attrs),
    })
}

/// A variant or struct classified by the fn `with` names: a variant hands
/// it its only field, a struct itself. The fn gives the class, the hint and
/// the retry-after, so the case gives none of them.
fn with_case<'a>(
    name: &'a Ident,
    position: Position,
    attrs: &Attrs,
    fields: &'a Fields,
    with: &WithKey,
    errors: &mut Errors,
    before: usize,
) -> Option<Case<'a>> {
    let path = path_text(&with.path);
    if let Some((class, _)) = attrs.classes_in_order().next() {
        errors.push(
            Error::custom(format!(
                "`with` conflicts with `{}`: the fn `{path}` gives the class of `{name}`; keep \
                 one of them",
                class.key()
            ))
            .with_span(&with.key),
        );
    }
    if let Some(hint) = &attrs.hint {
        errors.push(
            Error::custom(format!(
                "`with` takes the hint from the fn `{path}`; remove `hint`, and return it \
                 from the fn with `Classified::with_hint`"
            ))
            .with_span(&hint.0),
        );
    }
    if let Some((_, key)) = retry_after_field(fields, errors) {
        errors.push(
            Error::custom(format!(
                "`with` takes the retry-after from the fn `{path}`; remove \
                 `#[classify(retry_after)]`, and return the wait from the fn with \
                 `Classified::with_retry_after`"
            ))
            .with_span(&key),
        );
    }
    let answer = match position {
        Position::Struct => Answer::WithSelf(with.path.clone()),
        Position::Variant { .. } => {
            let mut members = fields.iter().zip(fields.members());
            match (members.next(), members.next()) {
                (Some((field, member)), None) => Answer::With {
                    path: with.path.clone(),
                    field: FieldRef {
                        member,
                        ty: &field.ty,
                    },
                },
                _ => {
                    let message = if fields.is_empty() {
                        format!(
                            "`with` hands the only field of `{name}` to `{path}`, but `{name}` \
                             has no fields; give it a class such as `fatal`, or a field to \
                             classify by"
                        )
                    } else {
                        format!(
                            "`with` hands the only field of `{name}` to `{path}`, but `{name}` \
                             has {} fields; hold them in one field (a struct of them), or put \
                             `#[classify(with = ...)]` on the enum to hand the fn the whole error",
                            fields.len()
                        )
                    };
                    errors.push(Error::custom(message).with_span(&with.key));
                    return None;
                }
            }
        }
    };
    (errors.len() == before).then_some(Case {
        name,
        answer,
        limits: CaseLimits::of(attrs),
    })
}

/// A path as the user wrote it, for messages: `errors::by_body`.
fn path_text(path: &syn::ExprPath) -> String {
    quote::ToTokens::to_token_stream(path)
        .to_string()
        .replace(" :: ", "::")
        .replace(":: ", "::")
}

/// The one unnamed field of a `refused` variant, which holds the guard's
/// `Refused`. Its type is checked by the compiler: `refused()` hands the
/// variant's constructor a `Refused`.
fn refused_field<'a>(
    name: &Ident,
    key: Span,
    fields: &'a Fields,
    errors: &mut Errors,
) -> Option<FieldRef<'a>> {
    let hold = format!("write `{name}(tenacious::Refused)`");
    let no_field = || {
        Error::custom(format!(
            "`refused` makes `{name}` from the guard's `Refused`, but `{name}` has no field to \
             hold it (and would lose which guard refused); {hold}"
        ))
        .with_span(&key)
    };
    match fields {
        Fields::Unnamed(unnamed) => {
            let mut members = unnamed.unnamed.iter().zip(fields.members());
            let Some((field, member)) = members.next() else {
                errors.push(no_field());
                return None;
            };
            if let Some((extra, _)) = members.next() {
                errors.push(
                    Error::custom(format!(
                        "a `refused` variant holds exactly one field, the guard's `Refused`, but \
                         `{name}` has {}; remove this field: {hold}",
                        unnamed.unnamed.len()
                    ))
                    .with_span(&extra.ty),
                );
                return None;
            }
            Some(FieldRef {
                member,
                ty: &field.ty,
            })
        }
        Fields::Named(named) => {
            let span = named
                .named
                .first()
                .and_then(|field| field.ident.as_ref())
                .map_or_else(|| named.brace_token.span.join(), |ident| ident.span());
            errors.push(
                Error::custom(format!(
                    "a `refused` variant holds the guard's `Refused` in its one unnamed field, \
                     not in named fields; {hold}"
                ))
                .with_span(&span),
            );
            None
        }
        Fields::Unit => {
            errors.push(no_field());
            None
        }
    }
}

fn reject_value(word: Word, key: &str, errors: &mut Errors) {
    if let Some(value) = word.stray_value {
        errors.push(
            Error::custom(format!(
                "`{key}` takes no value: write `#[classify({key})]`"
            ))
            .with_span(&value),
        );
    }
}

/// The case's one class, or an error saying what to write.
fn one_class(
    name: &Ident,
    position: Position,
    attrs: &Attrs,
    errors: &mut Errors,
) -> Option<Class> {
    let present: Vec<Class> = Class::all()
        .filter(|class| attrs.word(*class).is_present())
        .collect();
    match present.as_slice() {
        [] => {
            let (what, place) = match position {
                Position::Struct => ("struct", "above the struct"),
                Position::Variant {
                    enum_has_class: true,
                } => return None,
                Position::Variant { .. } => ("variant", "on the variant"),
            };
            errors.push(
                Error::custom(format!(
                    "{what} `{name}` has no error class; add one of {} {place}",
                    or_list(
                        Class::all()
                            .filter(|class| *class != Class::Refused)
                            .map(|class| format!("`#[classify({})]`", class.key()))
                    )
                ))
                .with_span(name),
            );
            None
        }
        [class] => Some(*class),
        _ => {
            let written: Vec<(Class, Span)> = attrs.classes_in_order().collect();
            let first = written.first().map_or(present[0], |&(class, _)| class);
            let mut reported = false;
            for &(class, span) in written.iter().skip(1) {
                if class != first {
                    reported = true;
                    errors.push(
                        Error::custom(format!(
                            "`{}` conflicts with `{}`: {} has exactly one class, keep one of them",
                            class.key(),
                            first.key(),
                            position.noun()
                        ))
                        .with_span(&span),
                    );
                }
            }
            if !reported {
                errors.push(
                    Error::custom(format!(
                        "{} has exactly one class, keep one of them",
                        position.noun()
                    ))
                    .with_span(name),
                );
            }
            None
        }
    }
}

/// The field marked `#[classify(retry_after)]`, with the span of the key.
/// Its type is checked by the compiler (`RetryAfterField`), so aliases of
/// `Duration` work and the error names the field's actual type.
fn retry_after_field<'a>(fields: &'a Fields, errors: &mut Errors) -> Option<(FieldRef<'a>, Span)> {
    let mut found: Option<(FieldRef<'a>, Span)> = None;
    for (field, member) in fields.iter().zip(fields.members()) {
        let Some(attrs) = errors.handle(Attrs::read(&field.attrs)) else {
            continue;
        };
        let place = "goes on the variant or struct, not on a field";
        for class in Class::all() {
            if let Some(key) = attrs.word(class).key {
                let message = if class == Class::Refused {
                    "`refused` goes on the variant that holds the `Refused`, not on a field"
                        .to_owned()
                } else {
                    format!("`{}` {place}", class.key())
                };
                errors.push(Error::custom(message).with_span(&key));
            }
        }
        if let Some(hint) = &attrs.hint {
            errors.push(Error::custom(format!("`hint` {place}")).with_span(&hint.0));
        }
        if let Some(krate) = &attrs.krate {
            errors.push(
                Error::custom("`crate` goes on the type, not on a field").with_span(&krate.key),
            );
        }
        if let Some(with) = &attrs.with {
            errors.push(
                Error::custom(
                    "`with` goes on the variant (to hand the fn its only field) or on the type \
                     (to hand it the whole error), not on a field",
                )
                .with_span(&with.key),
            );
        }
        for (key, span) in limit_keys(&attrs) {
            errors.push(Error::custom(format!("`{key}` {place}")).with_span(&span));
        }
        reject_value(attrs.retry_after, "retry_after", errors);
        let Some(key) = attrs.retry_after.key else {
            continue;
        };
        if let Some((first, _)) = &found {
            errors.push(
                Error::custom(format!(
                    "only one field can be `retry_after`, and `{}` already is; remove this one",
                    describe(&first.member)
                ))
                .with_span(&key),
            );
        } else {
            found = Some((
                FieldRef {
                    member,
                    ty: &field.ty,
                },
                key,
            ));
        }
    }
    found
}

fn retry_after_wrong_class(name: &Ident, class: Class, key: Span) -> Error {
    Error::custom(format!(
        "`retry_after` is only read on `rate_limited` errors, and `{name}` is `{}`; \
         classify it `#[classify(rate_limited)]` or remove `#[classify(retry_after)]`",
        class.key()
    ))
    .with_span(&key)
}

fn describe(member: &Member) -> String {
    match member {
        Member::Named(ident) => ident.to_string(),
        Member::Unnamed(index) => index.index.to_string(),
    }
}
