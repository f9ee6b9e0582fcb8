//! The fields a case's keys point at: a `refused` variant's `Refused`,
//! and the field marked `#[classify(retry_after)]`.
use darling::Error;
use proc_macro2::Span;
use syn::{Fields, Ident, Member};

use super::class::reject_value;
use super::model::FieldRef;
use super::{Errors, limit_keys};
use crate::classify::parse::{Attrs, Class};

/// The one unnamed field of a `refused` variant, which holds the guard's
/// `Refused`. Its type is checked by the compiler: `refused()` hands the
/// variant's constructor a `Refused`.
pub(super) fn refused_field<'a>(
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

/// The field marked `#[classify(retry_after)]`, with the span of the key.
/// Its type is checked by the compiler (`RetryAfterField`), so aliases of
/// `Duration` work and the error names the field's actual type.
pub(super) fn retry_after_field<'a>(
    fields: &'a Fields,
    errors: &mut Errors,
) -> Option<(FieldRef<'a>, Span)> {
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

pub(super) fn retry_after_wrong_class(name: &Ident, class: Class, key: Span) -> Error {
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
