//! Cases classified by a `with` fn: a variant under the enum's own
//! `with`, and a variant or struct with a `with` of its own.
use darling::Error;
use syn::{Fields, Ident};

use super::fields::retry_after_field;
use super::model::{Answer, Case, CaseLimits, FieldRef};
use super::{Errors, Position, path_text};
use crate::classify::parse::{Attrs, WithKey};

/// A variant of an enum whose own `with` classifies every variant: it
/// says nothing of itself.
pub(super) fn under_enum_with<'a>(
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
pub(super) fn with_case<'a>(
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
